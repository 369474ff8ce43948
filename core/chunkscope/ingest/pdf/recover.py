"""Text the converter lost, recovered: pages converted again without vector graphics, or read as plain text."""

from __future__ import annotations

from chunkscope.ingest import pdfmap
from chunkscope.ingest.pdf.cleanup.tidy import PLACEHOLDER
from chunkscope.ingest.pdf.convert import converter, plain_text
from chunkscope.ingest.pdf.open import PDF_READ_ERRORS
from chunkscope.ingest.pdf.pages import page_list

_LOST_SHARE = 0.5  # a page whose Markdown keeps less than this share of the page's letters lost text
_LOST_MIN = 200  # ... when the page has at least this many letters
_LOST_NO_TABLE = 0.9  # the same on a page without a detected table


def _letters(s: str) -> int:
    return sum(ch.isalnum() for ch in s)


def _ink_letters(md: str) -> int:
    """Letters of a page's Markdown that have ink (link targets, tags and placeholders left out)."""
    mask = pdfmap.markup_mask(md)
    return sum(1 for i, ch in enumerate(md) if not mask[i] and ch.isalnum())


def recover_lost_text(doc, raw_pages: list[str], words: list[list[tuple]] | None, infos: list[tuple],
                       warnings: list[str], tables: list[int] | None = None) -> None:
    """Pages where pymupdf4llm dropped text PyMuPDF finds are converted again without vector
    graphics (``ignore_graphics``): a page-sized filled rectangle behind the text (an HTML page
    printed with a background, a framed page) makes it take the whole text area for a picture,
    shaded code blocks and list items lose their text the same way. Redone: pages that kept less
    than half of their letters, and pages without a detected table that kept less than
    ``_LOST_NO_TABLE`` (without graphics pymupdf4llm detects no table: a page with one keeps its
    first conversion unless it lost half). A page that still keeps less than half of its letters and
    whose letters mostly run sideways (which the converter drops: a landscape table on an upright page)
    takes PyMuPDF's plain text instead. Rotated pages are left to the plain-text fallback. One warning
    names the pages of each kind."""
    redone: list[tuple[int, int, int]] = []
    as_plain: list[tuple[int, int, int]] = []
    for k, raw in enumerate(raw_pages):
        if int(infos[k][2]) % 360:
            continue
        try:
            want = (sum(_letters(str(w[4])) for w in words[k]) if words is not None
                    else _letters(doc[k].get_text("text")))
        except PDF_READ_ERRORS:
            continue
        got = _ink_letters(PLACEHOLDER.sub("", raw))
        share = _LOST_SHARE if tables and k < len(tables) and tables[k] else _LOST_NO_TABLE
        if want < _LOST_MIN or got >= share * want:
            continue
        try:
            chunk = converter().to_markdown(doc, pages=[k], page_chunks=True, show_progress=False,
                                             table_strategy=None, ignore_graphics=True)[0]
            again = chunk.get("text", "") if isinstance(chunk, dict) else str(chunk)
        except Exception:  # boundary: the third-party converter can raise anything; the first conversion stays
            again = ""
        kept = _ink_letters(PLACEHOLDER.sub("", again))
        if kept > got + 0.05 * want:
            raw_pages[k] = again
            redone.append((k + 1, got, want))
            got = kept
        if got < _LOST_SHARE * want and sideways(doc[k]):  # most of the page lost, and set sideways: a landscape
            text = plain_text(doc[k])                          # table (not hidden text: white, invisible words)
            if _letters(text) > got + 0.05 * want:
                raw_pages[k] = text
                as_plain.append((k + 1, got, want))
                if redone and redone[-1][0] == k + 1:
                    redone.pop()
    if redone:
        got, want = sum(r[1] for r in redone), sum(r[2] for r in redone)
        warnings.append(f"{page_list([r[0] for r in redone])}: Markdown conversion kept only {got:,} of {want:,} "
                        "letters (text on a shaded background taken for a picture?); converted again ignoring "
                        "vector graphics (tables there are not detected)")
    if as_plain:
        got, want = sum(r[1] for r in as_plain), sum(r[2] for r in as_plain)
        warnings.append(f"{page_list([r[0] for r in as_plain])}: Markdown conversion kept only {got:,} of {want:,} "
                        "letters (text set sideways, such as a landscape table); PyMuPDF's plain text used instead "
                        "(one line per text line: no Markdown table or headings there)")


def sideways(page) -> bool:
    """Most of the page's letters run on lines that are not left to right (rotated text)."""
    try:
        lines = [ln for b in page.get_text("dict")["blocks"] for ln in b.get("lines", [])]
    except PDF_READ_ERRORS:
        return False
    count = [0, 0]
    for ln in lines:
        n = sum(_letters(sp.get("text", "")) for sp in ln.get("spans", []))
        count[abs(ln.get("dir", (1, 0))[0]) < 0.5] += n
    return count[1] > count[0]
