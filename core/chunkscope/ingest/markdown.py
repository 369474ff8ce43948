"""Markdown -> Document (the text is kept exactly, apart from ``\\n`` line endings).

Pages come from ``<!-- PageBreak -->`` markers (the convention of the paper's parsed
corpus: each page ends just after its marker and the blank lines that follow) or, if
there are none, from form feeds. Blocks and headings come from ``chunkscope.text.blocks``.
"""

from __future__ import annotations

import re

from chunkscope.document import Document, Span
from chunkscope.ingest.text import decode_text, document_from_decoded, form_feed_pages

PAGE_BREAK = "<!-- PageBreak -->"  # the marker loaders write (PDF, Word); any spacing and case is read
_PAGEBREAK = re.compile(r"<!--\s*PageBreak\s*-->[ \t]*(?:\n[ \t]*)*", re.IGNORECASE)


def has_text(md: str) -> bool:
    """Whether converted Markdown holds any text besides page markers and heading marks."""
    return bool(_PAGEBREAK.sub("", md).strip().lstrip("#").strip())


def page_break_pages(text: str) -> list[Span]:
    """Pages ending after each ``<!-- PageBreak -->`` marker; [] when there is none."""
    ends = [m.end() for m in _PAGEBREAK.finditer(text)]
    if not ends:
        return []
    pages: list[Span] = []
    pos = 0
    for e in ends:
        if e > pos:
            pages.append(Span(pos, e))
            pos = e
    if pos < len(text):
        if text[pos:].strip():
            pages.append(Span(pos, len(text)))
        else:
            pages[-1] = Span(pages[-1].start, len(text))
    return pages


def document_from_markdown(text: str, name: str, encoding: str = "utf-8") -> Document:
    """Markdown text -> Document (pages from ``<!-- PageBreak -->`` markers, else form feeds)."""
    pages = page_break_pages(text) or form_feed_pages(text)
    return document_from_decoded(text, name, encoding, "markdown", pages, markdown=True)


def load_markdown_bytes(data: bytes, filename: str, name: str) -> Document:
    """Load a Markdown file's bytes."""
    text, encoding = decode_text(data, filename)
    return document_from_markdown(text, name, encoding)
