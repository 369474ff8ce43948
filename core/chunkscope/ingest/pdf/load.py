"""PDF -> Document: open the file, read each page's words, convert each page to Markdown, then run the cleanup
passes over the pages (``PASSES``: each maps the pages' Markdown to new Markdown and records its own warning), join
them into the text, and map the text back to the pages (page boxes, extraction health)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from chunkscope.document import Document, Span
from chunkscope.ingest import pdfmap, underscores
from chunkscope.ingest.build import make_document
from chunkscope.ingest.errors import IngestError, first_line
from chunkscope.ingest.markdown import PAGE_BREAK
from chunkscope.ingest.outline import apply_outline, is_deck, numbered_titles, outline_entries, slide_titles
from chunkscope.ingest.pdf.cleanup.latex import latex_logos, prints_latex_logo
from chunkscope.ingest.pdf.cleanup.line_numbers import strip_line_numbers
from chunkscope.ingest.pdf.cleanup.margins import margin_notes, strip_margin_notes, text_columns
from chunkscope.ingest.pdf.cleanup.running_lines import (
    RunningLines,
    apply_running_lines,
    edge_lines,
    find_running_lines,
)
from chunkscope.ingest.pdf.cleanup.tidy import has_words, join_split_runs, tidy_page
from chunkscope.ingest.pdf.convert import hide_underscore_rules, page_markdown, plain_text
from chunkscope.ingest.pdf.fonts import font_emphasis
from chunkscope.ingest.pdf.open import PDF_ERRORS, open_pdf
from chunkscope.ingest.pdf.pages import page_list
from chunkscope.ingest.pdf.recover import recover_lost_text
from chunkscope.text.continuation import join_continued, rejoin_entries

REPLACEMENT = "\ufffd"  # what the converter writes for a glyph its font maps to no character


@dataclass
class PdfPages:
    """One open PDF on its way to a Document: each page's Markdown (``pages``), its words and size (``words``,
    ``infos``: ``pdfmap``), and what the passes found (``warnings``, ``meta``, ``running``)."""

    doc: Any  # the open pymupdf.Document
    infos: list[tuple]
    words: list[list[tuple]] | None  # None: no page geometry asked for
    edges: list[tuple[str, str]] | None  # each page's top and bottom ink line, before any word is dropped
    strip_running: bool
    pages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    toc: list = field(default_factory=list)
    tex: bool = False  # the document prints the LaTeX logo (``latex.prints_latex_logo``)
    running: RunningLines = field(default_factory=RunningLines)


def _read(doc: Any, geometry: bool, strip_running: bool) -> PdfPages:
    """The pages' words and sizes, read first: pymupdf4llm removes page rotations in memory as it converts."""
    infos = [pdfmap.page_info(page) for page in doc]
    words = [pdfmap.page_words(page) for page in doc] if geometry else None
    edges = [edge_lines(w, info) for w, info in zip(words, infos)] if words is not None else None
    return PdfPages(doc, infos, words, edges, strip_running)


def _convert(p: PdfPages) -> None:
    """Each page's Markdown, with the text the converter lost recovered and the underscores drawn as rules back."""
    rules = hide_underscore_rules(p.doc, p.words, p.infos)
    p.pages, p.warnings, p.tables = page_markdown(p.doc)
    recover_lost_text(p.doc, p.pages, p.words, p.infos, p.warnings, p.tables)
    for k, found in rules.items():
        p.pages[k] = underscores.restore(p.pages[k], found)[0]


def _note_repair(p: PdfPages) -> None:
    """The document's page count, title and whether PyMuPDF repaired it on opening (a warning then)."""
    p.meta.update(page_count=p.doc.page_count, pdf_title=(p.doc.metadata or {}).get("title") or "",
                  repaired=bool(getattr(p.doc, "is_repaired", False)))
    if p.meta["repaired"]:
        p.warnings.append("the PDF was damaged and repaired on opening; some content may be missing")


def _plain_text_where_empty(p: PdfPages) -> None:
    """PyMuPDF's plain text for a page whose Markdown has no text (pymupdf4llm drops that of some rotated pages)."""
    for k, raw in enumerate(p.pages):
        if not has_words(raw):
            text = plain_text(p.doc[k])
            if has_words(text):
                p.pages[k] = text
                rot = int(p.infos[k][2])
                p.warnings.append(f"page {k + 1}: Markdown conversion found no text, PyMuPDF's plain text used"
                                  + (f" (page rotated {rot}°)" if rot else ""))


def _tidy(p: PdfPages) -> None:
    """Each page tidied (``tidy.tidy_page``), with its outline titles (a damaged outline: none) and the logos."""
    try:
        p.toc = p.doc.get_toc(simple=True)
    except PDF_ERRORS:  # a damaged outline: the converter's headings as they are
        p.toc = []
    entries = outline_entries(p.toc, len(p.pages))
    p.tex = prints_latex_logo(p.pages)
    p.pages = [tidy_page(raw, [key for _, key in entries.get(k, ())], p.tex) for k, raw in enumerate(p.pages)]


def _strip_margins(p: PdfPages) -> None:
    """What is printed in the margins, out of the text: line numbers, then margin notes (whose words are dropped
    from the page's words too: left out on purpose, no page box to find, no letter lost)."""
    numbered = []
    for k, md in enumerate(p.pages):
        p.pages[k], n = strip_line_numbers(md, p.words[k] if p.words is not None else None)
        if n:
            numbered.append((k + 1, n))
    notes = []
    page_words = p.words if p.words is not None else []  # margin notes are found in the page's words (none without)
    for k, col in enumerate(text_columns(page_words)):
        found = margin_notes(page_words[k], col)
        p.pages[k], gone = strip_margin_notes(p.pages[k], found)
        if gone:
            drop = {id(w) for n in gone for w in found[n][2]}
            page_words[k] = [w for w in page_words[k] if id(w) not in drop]
            notes.append((k + 1, len(gone)))
    if notes:
        p.warnings.append(f"{page_list([k for k, _ in notes])}: {sum(n for _, n in notes):,} margin notes (short "
                          "lines printed beside the text column, such as LaTeX's \"New feature\") removed from the text")
    if numbered:
        p.warnings.append(f"{page_list([k for k, _ in numbered])}: {sum(n for _, n in numbered):,} line numbers "
                          "printed in the margin (a manuscript's or a listing's) removed from the text")


def _running_lines(p: PdfPages) -> None:
    """Running headers and footers as layout comments, or removed (``strip_running``)."""
    pages, p.running = find_running_lines(p.pages, p.edges)
    p.pages = apply_running_lines(pages, p.running, strip=p.strip_running)


def _headings(p: PdfPages) -> None:
    """Headings levelled by the outline; without one, a deck's slide titles or a paper's numbered titles."""
    p.pages, p.meta["outline"] = apply_outline(p.pages, p.toc)
    if p.words is not None and is_deck(p.infos, [len(w) for w in p.words]):
        p.pages, p.meta["outline"]["slide_titles"] = slide_titles(p.pages)
    elif not p.meta["outline"]["entries"]:
        p.pages, p.meta["outline"]["numbered_titles"] = numbered_titles(
            p.pages, [font_emphasis(page) for page in p.doc])


def _rejoin(p: PdfPages) -> None:
    """Reference entries the converter cut after their first line joined again; then styled runs it split and the
    logos (last: the outline splits run-together titles at run edges; "LaTeX 2** **_ε_**" is one run "LaTeX 2 _ε_"
    then)."""
    p.meta["rejoined_entries"] = 0
    for k, md in enumerate(p.pages):
        p.pages[k], n = rejoin_entries(md)
        p.meta["rejoined_entries"] += n
        p.pages[k] = latex_logos(join_split_runs(p.pages[k]), p.tex)


PASSES: tuple[Callable[[PdfPages], None], ...] = (
    _convert, _note_repair, _plain_text_where_empty, _tidy, _strip_margins, _running_lines, _headings, _rejoin,
)


def _page_pieces(pages: list[str]) -> tuple[list[str], list[Span]]:
    """Each page's piece of the text (its Markdown closed by ``PAGE_BREAK``) and its span in the text."""
    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    for md in pages:
        piece = (md + "\n\n" if md else "") + PAGE_BREAK + "\n\n"
        parts.append(piece)
        spans.append(Span(pos, pos + len(piece)))
        pos += len(piece)
    return parts, spans


def _check_text(p: PdfPages, filename: str) -> None:
    """Refuse a PDF without text on any page; warn about pages without text and about undecoded characters."""
    empty = [k for k, md in enumerate(p.pages, start=1) if not has_words(md)]
    if len(empty) == len(p.pages):
        raise IngestError(
            f"{filename} has no extractable text on any of its {len(p.pages)} page(s) "
            "(scanned or image-only PDF; run OCR first)"
        )
    if empty:  # one line for all of them (a manual's intentionally blank pages are many)
        p.warnings.append(f"{page_list(empty)} {'has' if len(empty) == 1 else 'have'} no extractable text"
                          + (" (blank, or scanned / images only)" if len(empty) > 1 else ""))
    undecoded = [(k, n) for k, md in enumerate(p.pages, start=1) if (n := md.count(REPLACEMENT)) >= 3]
    if undecoded:  # the font maps glyphs to no letter: the text is not what the page shows
        p.meta["undecoded_chars"] = sum(n for _, n in undecoded)
        p.warnings.append(
            f"{p.meta['undecoded_chars']:,} characters on {page_list([k for k, _ in undecoded])} could not be "
            f"decoded and read {REPLACEMENT}: the PDF's fonts do not say which letters those glyphs are, so the "
            "text differs from the page there (broken words for search, the embedding model and the token "
            "counts); only OCR of the pages would recover them")


def _optional(what: str, compute: Callable[[], Any], warnings: list[str]) -> Any:
    """``compute()``, or None with the warning "``what`` not available (...)" when it fails."""
    try:
        return compute()
    except Exception as exc:  # boundary: page boxes and health are extras over an arbitrary file; never lose the
        warnings.append(f"{what} not available ({first_line(exc)})")  # document over them
        return None


def _map_back(p: PdfPages, parts: list[str], spans: list[Span], running: str) -> Any:
    """The page boxes of the text (``Document.geometry``; None without words) and the extraction health."""
    geo = None
    if p.words is not None:
        words = p.words
        geo = _optional("page boxes", lambda: pdfmap.build_geometry(p.infos, parts, [s.start for s in spans], words),
                        p.warnings)
    p.meta["running_lines"] = {"mode": running, **p.running.summary()}

    def health() -> dict[str, Any]:
        from chunkscope.ingest.health import pdf_health

        out = pdf_health(p.doc, parts, p.tables, p.running, geo, p.words, p.infos)
        out["running_lines"] = p.meta["running_lines"]
        return out

    found = _optional("extraction health", health, p.warnings)
    if found is not None:
        p.meta["health"] = found
    return geo


def load_pdf_bytes(data: bytes, filename: str, name: str, *, running: str = "mark",
                   geometry: bool = True) -> Document:
    """Load a PDF.

    ``running``: what to do with running page headers/footers: ``"mark"`` (default: kept as
    ``<!-- PageHeader: ... -->`` layout comments) or ``"strip"`` (removed: another text, another Document).
    ``geometry``: also map the text back to the pages (``Document.geometry``).
    """
    if running not in ("mark", "strip"):
        raise ValueError(f"running must be 'mark' or 'strip', not {running!r}")
    if not data:
        raise IngestError(f"{filename} is empty")
    doc = open_pdf(data, filename)
    try:
        p = _read(doc, geometry, running == "strip")
        for run in PASSES:
            run(p)
        parts, spans = _page_pieces(p.pages)
        _check_text(p, filename)
        geo = _map_back(p, parts, spans, running)
    finally:
        doc.close()
    doc = make_document(name, "".join(parts), "pdf", spans, warnings=p.warnings, meta=p.meta, geometry=geo)
    doc.blocks, doc.meta["continued_blocks"] = join_continued(doc.text, doc.blocks, doc.pages)
    return doc
