"""PDF -> Markdown Document with PyMuPDF and pymupdf4llm.

Each page is converted to Markdown (headings from font sizes, tables as Markdown pipe
tables, lists), tidied (trailing spaces, runs of blank lines) and closed with
``<!-- PageBreak -->`` like the paper's parsed corpus; page k's span is exactly where
its Markdown sits in ``Document.text``. Blocks never cross a page.

Refused with an ``IngestError``: not a PDF, damaged beyond repair, truncated (no end
marker and repaired), encrypted with a password, no pages, no extractable text at all.
Pages without text (scans, images) give a warning "page 3 has no extractable text".
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from chunkscope.blocks import build_blocks
from chunkscope.document import Document, Span
from chunkscope.ingest.errors import IngestError

PAGE_BREAK = "<!-- PageBreak -->"
_PLACEHOLDER = re.compile(r"\*{0,2}==>.*?<==\*{0,2}|!\[[^\]]*\]\([^)]*\)")


def _tidy(md: str) -> str:
    md = md.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").replace("\x00", "")
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = re.sub(r"(?<=[^\n])\n(?=#{1,6} )", "\n\n", md)  # a blank line before each heading
    md = re.sub(r"\n{3,}", "\n\n", md)
    return md.strip()


def _has_text(md: str) -> bool:
    return any(ch.isalnum() for ch in _PLACEHOLDER.sub("", md))


def _line_key(line: str) -> str:
    """A running header/footer line with its numbers and emphasis removed."""
    return re.sub(r"\d+", "#", re.sub(r"[*_`]", "", line)).strip().lower()


def mark_running_lines(pages: list[str], min_share: float = 0.25) -> list[str]:
    """Turn running page headers / footers into layout comments, as in the paper's corpus.

    The first (last) line of a page is a header (footer) when the same line, numbers aside,
    starts (ends) at least a quarter of the pages with text, and at least 3 of them. It becomes
    ``<!-- PageHeader: ... -->`` (``PageFooter``), so it forms a layout block instead of
    sticking to the page's first or last paragraph.
    """
    with_text = [md for md in pages if md.strip()]
    if len(with_text) < 3:
        return pages
    need = max(3, int(len(with_text) * min_share + 0.999))

    def ends(md: str) -> tuple[str, str]:
        lines = [ln for ln in md.split("\n") if ln.strip()]
        return (lines[0], lines[-1]) if lines else ("", "")

    firsts: dict[str, int] = {}
    lasts: dict[str, int] = {}
    for md in with_text:
        first, last = ends(md)
        firsts[_line_key(first)] = firsts.get(_line_key(first), 0) + 1
        lasts[_line_key(last)] = lasts.get(_line_key(last), 0) + 1

    def ok(key: str, counts: dict[str, int]) -> bool:
        return bool(key) and counts.get(key, 0) >= need and not key.startswith("|") and len(key) <= 200

    out = []
    for md in pages:
        lines = md.split("\n")
        idx = [i for i, ln in enumerate(lines) if ln.strip()]
        if len(idx) >= 2:
            i, j = idx[0], idx[-1]
            if ok(_line_key(lines[j]), lasts):
                lines[j] = "\n<!-- PageFooter: " + lines[j].strip().replace("-->", "->") + " -->"
            if ok(_line_key(lines[i]), firsts):
                lines[i] = "<!-- PageHeader: " + lines[i].strip().replace("-->", "->") + " -->\n"
        out.append(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip())
    return out


def _open(data: bytes, filename: str):
    import pymupdf

    head = data[:1024]
    if b"%PDF-" not in head:
        raise IngestError(f"{filename} is not a PDF (no %PDF header)")
    truncated = b"%%EOF" not in data[-2048:]
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # pymupdf raises FileDataError / RuntimeError variants
        if truncated:
            raise IngestError(f"{filename} is a truncated PDF (incomplete file, no end-of-file marker)") from None
        raise IngestError(f"{filename} is a damaged PDF that cannot be opened ({_first_line(exc)})") from None
    if doc.needs_pass:
        doc.close()
        raise IngestError(f"{filename} is an encrypted PDF (password required); decrypt it first")
    if getattr(doc, "is_repaired", False) and truncated:
        doc.close()
        raise IngestError(f"{filename} is a truncated PDF (incomplete file, no end-of-file marker)")
    if doc.page_count == 0:
        doc.close()
        raise IngestError(f"{filename} is a PDF with no pages")
    return doc


def _first_line(exc: BaseException) -> str:
    s = str(exc).strip().splitlines()
    return s[0][:120] if s else type(exc).__name__


_lock = threading.Lock()
_MIN_TABLE_PATHS = 4


def _path_count(page) -> int:
    try:
        return sum(1 for item in page.get_bboxlog() if "path" in item[0])
    except Exception:
        return _MIN_TABLE_PATHS  # unknown: keep table detection on


@lru_cache(maxsize=1)
def _converter():
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

        return pymupdf_rag


def _page_markdown(doc) -> tuple[list[str], list[str]]:
    """Markdown of each page, and warnings."""
    warnings: list[str] = []
    try:
        pymupdf_rag = _converter()
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
        pages = [by_page[i] for i in range(doc.page_count)]
    except Exception as exc:  # fall back to PyMuPDF's plain text, say so
        warnings.append(f"Markdown conversion failed ({_first_line(exc)}); plain text extracted instead")
        pages = []
        for page in doc:
            try:
                pages.append(page.get_text("text"))
            except Exception:
                pages.append("")
    return pages, warnings


def load_pdf_bytes(data: bytes, filename: str, name: str) -> Document:
    if not data:
        raise IngestError(f"{filename} is empty")
    doc = _open(data, filename)
    try:
        raw_pages, warnings = _page_markdown(doc)
        meta = {
            "page_count": doc.page_count,
            "pdf_title": (doc.metadata or {}).get("title") or "",
            "repaired": bool(getattr(doc, "is_repaired", False)),
        }
    finally:
        doc.close()
    if meta["repaired"]:
        warnings.append("the PDF was damaged and repaired on opening; some content may be missing")

    parts: list[str] = []
    pages: list[Span] = []
    pos = 0
    empty: list[int] = []
    tidy = mark_running_lines([_tidy(raw) for raw in raw_pages])
    for k, md in enumerate(tidy, start=1):
        if not _has_text(md):
            empty.append(k)
        piece = (md + "\n\n" if md else "") + PAGE_BREAK + "\n\n"
        parts.append(piece)
        pages.append(Span(pos, pos + len(piece)))
        pos += len(piece)
    if len(empty) == len(raw_pages):
        raise IngestError(
            f"{filename} has no extractable text on any of its {len(raw_pages)} page(s) "
            "(scanned or image-only PDF; run OCR first)"
        )
    warnings.extend(f"page {k} has no extractable text" for k in empty)
    text = "".join(parts)
    blocks, headings = build_blocks(text, pages, markdown=True)
    return Document(
        name=name,
        text=text,
        source_format="pdf",
        pages=pages,
        blocks=blocks,
        headings=headings,
        warnings=warnings,
        meta=meta,
    )
