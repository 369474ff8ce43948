"""``fixed-512``: windows of N o200k tokens with overlap, cut at token boundaries."""

from __future__ import annotations

from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamError, ParamSpec, overlap_below
from chunkscope.document import Document, Span
from chunkscope.text.tokens import token_char_offsets


def fixed_windows(text: str, size: int, overlap: int) -> list[Span]:
    """Windows of ``size`` tokens starting every ``size - overlap`` tokens.

    Boundaries are token starts (a token starting inside a multi-byte character maps
    to that character). The first window starts at 0, the last ends at ``len(text)``.
    """
    if overlap >= size:
        raise ParamError(f"overlap ({overlap}) must be smaller than size ({size})")
    if not text.strip():
        return []
    _ids, offsets = token_char_offsets(text)
    n = len(offsets)
    step = size - overlap
    spans: list[Span] = []
    i = 0
    while True:
        s = offsets[i] if i else 0
        j = i + size
        e = len(text) if j >= n else offsets[j]
        if e > s and (not spans or (s >= spans[-1].start and e > spans[-1].end)):
            spans.append(Span(s, e))
        if j >= n:
            break
        i += step
    return spans


def chunk_fixed(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """Fixed windows of ``size`` o200k tokens, ``overlap`` shared, cut at token boundaries."""
    return ChunkResult(spans=fixed_windows(doc.text, int(params["size"]), int(params["overlap"])))


def specs() -> list[ChunkerSpec]:
    """The fixed-window family's specs (``fixed-512``)."""
    return [ChunkerSpec(
        "fixed-512", "Fixed tokens (512, overlap 64)",
        "fixed windows of N tokens with overlap, cut at token boundaries",
        (ParamSpec("size", int, 512, "tokens per window", min=1, max=1_000_000),
         ParamSpec("overlap", int, 64, "tokens shared by consecutive windows (< size)", min=0, max=1_000_000)),
        chunk_fixed, family="fixed", validate=overlap_below("size", "overlap"))]
