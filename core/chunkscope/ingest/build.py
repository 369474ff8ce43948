"""The one Document builder of the loaders: text, pages, then blocks and headings from the shared block builder."""

from __future__ import annotations

from typing import Any

from chunkscope.document import Block, Document, Heading, Span
from chunkscope.text.blocks import build_blocks


def make_document(name: str, text: str, source_format: str, pages: list[Span], *, markdown: bool = True,
                  structure: tuple[list[Block], list[Heading]] | None = None, warnings: list[str] | None = None,
                  meta: dict[str, Any] | None = None, geometry: Any = None) -> Document:
    """A loader's Document of ``text`` and its ``pages``: blocks and headings built from the text
    (``chunkscope.text.blocks.build_blocks``; ``markdown``: read it as Markdown, else as plain text), or
    ``structure`` as given (a reference's gold blocks and titles)."""
    blocks, headings = structure if structure is not None else build_blocks(text, pages, markdown=markdown)
    return Document(name=name, text=text, source_format=source_format, pages=pages, blocks=blocks,
                    headings=headings, warnings=list(warnings or []), meta=dict(meta or {}), geometry=geometry)
