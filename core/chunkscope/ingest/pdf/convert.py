"""Each page's Markdown from pymupdf4llm (its classic converter), with PyMuPDF's plain text where it fails."""

from __future__ import annotations

import threading
from functools import lru_cache, wraps

from chunkscope.ingest import pdfmap, underscores
from chunkscope.ingest.errors import first_line
from chunkscope.ingest.pdf.open import PDF_ERRORS

_lock = threading.Lock()
_MIN_TABLE_PATHS = 4


def _path_count(page) -> int:
    try:
        return sum(1 for item in page.get_bboxlog() if "path" in item[0])
    except PDF_ERRORS:
        return _MIN_TABLE_PATHS  # unknown: keep table detection on


@lru_cache(maxsize=1)
def converter():
    """pymupdf4llm's classic converter.

    Importing pymupdf4llm switches PyMuPDF to its "layout" mode; we switch back once:
    the classic mode writes tables as Markdown pipe tables and is several times faster
    (36-page PDF: ~2 s instead of ~14 s here). Nothing else in ChunkScope uses PyMuPDF.
    """
    with _lock:
        import pymupdf4llm

        if hasattr(pymupdf4llm, "use_layout"):
            pymupdf4llm.use_layout(False)
        from pymupdf4llm.helpers import pymupdf_rag

        if getattr(pymupdf_rag, "startswith_bullet", None) is not None and \
                getattr(pymupdf_rag.startswith_bullet, "__wrapped__", None) is None:
            pymupdf_rag.startswith_bullet = _bullet_of(pymupdf_rag.startswith_bullet)
        return pymupdf_rag


# symbols pymupdf4llm counts among list bullets that are a text's own marks: a dagger or a pilcrow in a table
# of symbols ("\textdagger †" came out "\textdagger -"), a footnote's dagger, a minus sign, a ">" prompt
NOT_BULLETS = frozenset("†‡¶>−")


def _bullet_of(startswith_bullet):
    """pymupdf4llm's bullet test, which rewrites any span that starts with one of its bullets (and a space) as
    "- …", wherever it is on the line, without the symbols of ``NOT_BULLETS``."""
    @wraps(startswith_bullet)
    def bullet(text: str) -> bool:
        return bool(text) and text[0] not in NOT_BULLETS and startswith_bullet(text)

    return bullet


def page_markdown(doc) -> tuple[list[str], list[str], list[int]]:
    """Markdown of each page, warnings, and the number of tables pymupdf4llm detected per page."""
    warnings: list[str] = []
    tables = [0] * doc.page_count
    try:
        pymupdf_rag = converter()
        # Table detection is most of the cost; a page with fewer than 4 vector paths cannot hold
        # a ruled table, so those pages are converted without it (same output, ~2x faster).
        ruled = [i for i, page in enumerate(doc) if _path_count(page) >= _MIN_TABLE_PATHS]
        plain = [i for i in range(doc.page_count) if i not in set(ruled)]
        by_page: dict[int, str] = {}
        for subset, strategy in ((ruled, "lines_strict"), (plain, None)):
            if not subset:
                continue
            chunks = pymupdf_rag.to_markdown(
                doc, pages=subset, page_chunks=True, show_progress=False, table_strategy=strategy
            )
            if len(chunks) != len(subset):
                raise RuntimeError(f"{len(chunks)} Markdown pages for {len(subset)} PDF pages")
            for i, c in zip(subset, chunks):
                by_page[i] = c.get("text", "") if isinstance(c, dict) else str(c)
                if isinstance(c, dict):
                    tables[i] = len(c.get("tables") or [])
        pages = [by_page[i] for i in range(doc.page_count)]
    except Exception as exc:  # boundary: a third-party converter can raise anything on a strange page; the
        # document is not lost over it: PyMuPDF's plain text instead, and a warning that says so
        warnings.append(f"Markdown conversion failed ({first_line(exc)}); plain text extracted instead")
        pages = [plain_text(page) for page in doc]
    return pages, warnings, tables


def plain_text(page) -> str:
    """PyMuPDF's plain text of a page (one line per text line), "" when it cannot be read: what stands in
    for the Markdown where the converter failed or lost the page's text."""
    try:
        return page.get_text("text")
    except PDF_ERRORS:
        return ""


def hide_underscore_rules(doc, words: list[list[tuple]] | None, infos: list[tuple]) -> dict[int, list]:
    """Underscores drawn as rules (LaTeX's, texinfo's ``\\_``) taken off the upright pages before they are
    converted, so the converter strikes no letter out for them: ``{page index: rules}``, for
    ``underscores.restore`` to write the ``_`` back into the Markdown."""
    out: dict[int, list] = {}
    for k, page in enumerate(doc):
        if int(infos[k][2]) % 360:
            continue
        found = underscores.underscore_rules(page, words[k] if words is not None else pdfmap.page_words(page))
        if found and underscores.hide_rules(page, found):
            out[k] = found
    return out
