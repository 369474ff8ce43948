"""``whole``: the document as one chunk (short documents are often best left whole)."""

from __future__ import annotations

from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult
from chunkscope.document import Document, Span


def chunk_whole(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """The whole document as one chunk (none for blank text)."""
    if not doc.text.strip():
        return ChunkResult(spans=[])
    return ChunkResult(spans=[Span(0, len(doc.text))])


def specs() -> list[ChunkerSpec]:
    """The whole-document spec (``whole``)."""
    return [ChunkerSpec("whole", "Whole document", "the document as a single chunk", (), chunk_whole, family="whole")]
