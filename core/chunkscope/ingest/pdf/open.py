"""Open a PDF with PyMuPDF, or refuse it with one line: not a PDF, damaged, truncated, encrypted, no pages."""

from __future__ import annotations

from typing import Any

import pymupdf

from chunkscope.ingest.errors import IngestError, first_line

# what PyMuPDF raises for a file or page it cannot read: MuPDF's own errors, its FileDataError (a RuntimeError),
# ValueError for a bad object or argument
PDF_ERRORS: tuple[type[Exception], ...] = (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError)
# ... and a key or an index missing in what it returns for a strange file (a catalog without pages, a text dict)
PDF_READ_ERRORS: tuple[type[Exception], ...] = (*PDF_ERRORS, KeyError, IndexError)


def open_pdf(data: bytes, filename: str) -> Any:
    """The open ``pymupdf.Document``; an ``IngestError`` (one line) for a file that cannot be read as a PDF."""
    head = data[:1024]
    if b"%PDF-" not in head:
        raise IngestError(f"{filename} is not a PDF (no %PDF header)")
    truncated = b"%%EOF" not in data[-2048:]
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except PDF_ERRORS as exc:
        if truncated:
            raise IngestError(f"{filename} is a truncated PDF (incomplete file, no end-of-file marker)") from None
        raise IngestError(f"{filename} is a damaged PDF that cannot be opened ({first_line(exc)})") from None
    if doc.needs_pass:
        doc.close()
        raise IngestError(f"{filename} is an encrypted PDF (password required); decrypt it first")
    if getattr(doc, "is_repaired", False) and truncated:
        doc.close()
        raise IngestError(f"{filename} is a truncated PDF (incomplete file, no end-of-file marker)")
    if doc.page_count == 0:
        lost = _page_tree_lost(doc)
        doc.close()
        if lost:  # a file cut off (and given an end-of-file marker), or damaged, before its page tree
            raise IngestError(f"{filename} is a damaged or cut-off PDF: its list of pages is missing, so no page can be read")
        raise IngestError(f"{filename} is a PDF with no pages")
    return doc


def _page_tree_lost(doc) -> bool:
    """Whether the catalog's page tree (``/Pages``) is missing, rather than present and empty."""
    try:
        kind, value = doc.xref_get_key(doc.pdf_catalog(), "Pages")
        return kind != "xref" or doc.xref_object(int(value.split()[0])).strip() in ("", "null")
    except PDF_READ_ERRORS:  # no catalog, or a reference to an object that is not there
        return True


def page_count(data: bytes) -> int | None:
    """The PDF's number of pages, read without parsing any; None for a file PyMuPDF cannot open (``open_pdf``
    gives the specific message)."""
    try:
        with pymupdf.open(stream=data, filetype="pdf") as d:
            return int(d.page_count)
    except PDF_ERRORS:
        return None
