"""``page``: one chunk per page of the source document."""

from __future__ import annotations

from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamSpec
from chunkscope.document import Document

# where a document without pages would have had them, by source format
_PAGES_FROM = {
    "docx": "a Word file has pages where Word recorded its page ends; LibreOffice, pandoc and python-docx "
            "record none",
    "markdown": "Markdown has pages at <!-- PageBreak --> lines or form feeds",
    "text": "plain text has pages at form feeds",
    "html": "a web page has none",
}


def chunk_page(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """One chunk per page of the source (skipped, with the reason, when the document has no pages)."""
    if not doc.pages:
        why = _PAGES_FROM.get(doc.source_format, "PDFs and reference JSON have them")
        return ChunkResult.skipped(f"the document has no pages ({why})")
    if not doc.text.strip():
        return ChunkResult(spans=[])
    keep_empty = bool(params.get("keep_empty_pages", False))
    spans = [p for p in doc.pages if keep_empty or p.end > p.start]
    return ChunkResult(spans=spans, info={"pages": len(doc.pages), "empty_pages": sum(1 for p in doc.pages if not len(p))})


def specs() -> list[ChunkerSpec]:
    """The page family's spec (``page``)."""
    return [ChunkerSpec("page", "Page", "one chunk per page of the source (skipped when the document has no pages)",
                        (ParamSpec("keep_empty_pages", bool, False,
                                   "also emit zero-length chunks for empty pages (the paper's code does)"),),
                        chunk_page, family="page")]
