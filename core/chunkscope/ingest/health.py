"""Extraction health of a PDF: what went wrong in the parser, before any chunking.

Computed at ingest (``chunkscope.ingest.pdf.load``) and kept in ``Document.meta["health"]`` (JSON)::

    {"pages": [{"page": 1, "chars": 1834, "image_coverage": 0.0, "no_text": false,
                "running": ["header: chapter + page number"], "hyphenated": 2,
                "tables_detected": 1, "tables_markdown": 1, "table_captions": 1, "struck": 0, "repeated": 0,
                "order_jumps": 0,
                "coverage": 0.998, "missing_letters": 0, "letters": 1502, "rotation": 0, "words": 310,
                "warnings": [...]}, ...],
     "coverage": 0.997, "mapped": 13991, "mappable": 13999,
     "running_lines": {...}, "warnings": ["page 3: no text layer (scanned?)", ...],
     "totals": {"chars": ..., "hyphenated": ..., "tables_detected": ..., "tables_markdown": ...}}

Every check is per page and guarded: a strange page gives a warning, never an exception.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from chunkscope.ingest.pdf.open import PDF_READ_ERRORS
from chunkscope.text.markup import LINK_TARGET, alnum

# what checking a strange page raises: PyMuPDF's errors, a box or a number of the wrong kind
_PAGE_ERRORS: tuple[type[Exception], ...] = (*PDF_READ_ERRORS, TypeError, ArithmeticError)

_TABLE_SEP = re.compile(r"^\|[-:| ]+\|$", re.M)
_STRUCK = re.compile(r"~~[^~\n]+~~")  # the converter's strike-through markup
_FRAGMENTS = 3000  # words on one page above which extraction is suspect (drawn text, kerning)
_JUMPS = 3  # upward jumps in the extracted order above which columns/order are suspect
_EMPTY_HEADER = re.compile(r"\bCol\d+\b")  # the name PyMuPDF gives an empty table header
_REPEAT_MIN = 15  # letters and digits a line needs to count as repeated ("Figure 1", table rules do not)


def _image_coverage(page) -> float:
    try:
        area = abs(page.rect)
        if area <= 0:
            return 0.0
        covered = 0.0
        for info in page.get_image_info():
            r = page.rect & info["bbox"]
            covered += abs(r) if not r.is_empty else 0.0
        return round(min(1.0, covered / area), 3)
    except PDF_READ_ERRORS:
        return 0.0


def hyphenated_breaks(words: Sequence[Sequence[Any]]) -> int:
    """Lines ending in ``word-`` whose next line (same block) starts with a lower-case letter."""
    lines: dict[tuple[int, int], list[Sequence[Any]]] = {}
    for w in words:
        lines.setdefault((int(w[5]), int(w[6])), []).append(w)
    keys = sorted(lines)
    n = 0
    for a, b in zip(keys, keys[1:]):
        if a[0] != b[0]:
            continue
        last = str(max(lines[a], key=lambda w: w[7])[4])
        first = str(min(lines[b], key=lambda w: w[7])[4])
        if len(last) > 2 and last.endswith("-") and last[-2].isalpha() and first[:1].islower():
            n += 1
    return n


def order_jumps(runs: Sequence[Sequence[Any]], height: float) -> int:
    """Times the extracted order goes back up the page by more than a quarter of its height."""
    if height <= 0:
        return 0
    jumps = 0
    runs = [r for r in runs if r[1] - r[0] >= 3]  # stray punctuation says nothing about order
    for a, b in zip(runs, runs[1:]):
        if b[4] < a[4] - 0.25 * height:
            jumps += 1
    return jumps


# a table's caption opening a line: "Table 1. …", "**Table 2:** …", "TABLE IV. …" (not "Table 1 shows …")
_TABLE_CAPTION = re.compile(r"^[*_\s]*(?:Table|TABLE)\s+(?:[0-9]+(?:\.[0-9]+)*|[IVXL]+)[*_]*[.:]", re.M)
_MISSING = 0.1  # share of a page's letters not in the Markdown above which a page warns
_MISSING_MIN = 200  # ... when the page has at least this many letters


def _letters(text: str) -> str:
    """``markup.alnum`` of ``text`` with ligatures spelt out ("ﬁ" -> "fi") and what the converter adds that is not
    on the page left out (link targets, "Col1" for an empty table header)."""
    return alnum(unicodedata.normalize("NFKC", _EMPTY_HEADER.sub("", LINK_TARGET.sub("]", text))))


def repeated_lines(md: str, words: Sequence[Sequence[Any]]) -> int:
    """Extra copies of lines that the page's Markdown ``md`` holds more often than the page's ``words`` do: text
    the converter wrote twice (an equation, a figure's labels), counted once per extra copy. Lines are compared
    by their letters and digits (markup, spacing and a hyphenated line break do not matter); a line of fewer
    than ``_REPEAT_MIN`` of them is not counted. A line need not be on the page word for word: the converter
    writes an equation's or a figure's text in its own order."""
    counts = Counter(n for line in md.splitlines() if len(n := _letters(line)) >= _REPEAT_MIN)
    twice = {line: n for line, n in counts.items() if n > 1}
    if not twice:
        return 0
    page = "".join(_letters(str(w[4])) for w in words)
    return sum(max(0, n - page.count(line)) for line, n in twice.items())


def missing_letters(words: Sequence[Sequence[Any]], runs: Sequence[Sequence[Any]],
                    furniture: set[tuple[int, int, str]] | None = None) -> tuple[int, int]:
    """(letters of the page's words that no run of the Markdown covers, letters of all words):
    text PyMuPDF finds on the page that the Markdown converter dropped. A word counts as covered
    when its centre lies in a run's box (a run is a line part: a word missing inside a mapped
    line is not seen, so this is a lower bound). Dropped words that are ``furniture`` (their
    ``_place`` key; see ``dropped_furniture``) are counted in neither."""
    return _missing(_coverage(words, runs), furniture)


def _missing(coverage: Iterable[tuple[Sequence[Any], bool]],
             furniture: set[tuple[int, int, str]] | None) -> tuple[int, int]:
    missing = total = 0
    for w, covered in coverage:
        n = sum(ch.isalnum() for ch in str(w[4]))
        if not n or (not covered and furniture and _place(w) in furniture):
            continue
        total += n
        missing += 0 if covered else n
    return missing, total


def _coverage(words: Sequence[Sequence[Any]], runs: Sequence[Sequence[Any]]) -> list[tuple[Sequence[Any], bool]]:
    """Each word with whether a run of the Markdown covers its centre."""
    boxes = [(r[3], r[4], r[5], r[6]) for r in runs]
    return [(w, any(x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1 and y0 - 1 <= (w[1] + w[3]) / 2 <= y1 + 1
                    for x0, y0, x1, y1 in boxes)) for w in words]


def _place(w: Sequence[Any]) -> tuple[int, int, str]:
    """A word and where it is on the page (to 4 points): the same key on many pages is a template's word."""
    return round(float(w[0]) / 4), round(float(w[1]) / 4), str(w[4])


def dropped_furniture(words: Sequence[Sequence[Sequence[Any]]], runs_by_page: dict[int, list],
                      share: float = 0.25) -> set[tuple[int, int, str]]:
    """Words the converter dropped at the same place on at least ``share`` of the pages (and 3): a slide
    template's navigation bar, a footer line drawn on every page. Leaving them out of the Markdown loses
    nothing, so they do not count as dropped text."""
    return _furniture([_coverage(wk, runs_by_page.get(k + 1, [])) for k, wk in enumerate(words)], share)


def _furniture(coverage: Sequence[list[tuple[Sequence[Any], bool]]], share: float = 0.25) -> set[tuple[int, int, str]]:
    pages_with = [cov for cov in coverage if cov]
    need = max(3, int(len(pages_with) * share + 0.999))
    seen: dict[tuple[int, int, str], int] = {}
    for cov in pages_with:
        for key in {_place(w) for w, covered in cov if not covered}:
            seen[key] = seen.get(key, 0) + 1
    return {key for key, n in seen.items() if n >= need}


@dataclass
class _Inputs:
    """What every page's check reads: the document, what ingest found, and each word's coverage."""

    pdf: Any
    tables: Sequence[int]
    found: dict[int, list]  # running lines by page index (``RunningLines.found``)
    geometry: Any
    words: Sequence[Sequence[Any]] | None
    infos: Sequence[Sequence[float]]
    runs_by_page: dict[int, list]  # the geometry's runs by page number
    coverage: list[list[tuple[Sequence[Any], bool]]]  # each page's words, covered by the Markdown or not
    furniture: set[tuple[int, int, str]]


def _inputs(pdf: Any, tables: Sequence[int], running: Any, geometry: Any, words: Sequence[Sequence[Any]] | None,
            infos: Sequence[Sequence[float]]) -> _Inputs:
    """The document-wide inputs of the checks; each word covered by the Markdown or not, once: the template's
    furniture and each page's dropped text."""
    runs_by_page: dict[int, list] = {}
    if geometry is not None:
        for r in geometry.runs:
            runs_by_page.setdefault(r[2], []).append(r)
    try:
        coverage = [_coverage(wk, runs_by_page.get(k + 1, [])) for k, wk in enumerate(words or [])] \
            if geometry is not None else []
    except (TypeError, IndexError, ValueError):  # a strange word box: no dropped-text counts, never an exception
        coverage = []
    return _Inputs(pdf, tables, getattr(running, "found", {}) or {}, geometry, words, infos, runs_by_page,
                   coverage, _furniture(coverage))


def pdf_health(pdf: Any, page_texts: Sequence[str], tables: Sequence[int], running: Any,
               geometry: Any, words: Sequence[Sequence[Any]] | None,
               infos: Sequence[Sequence[float]] = ()) -> dict[str, Any]:
    """Health of every page (see module doc). ``tables[k]``: tables pymupdf4llm detected on page k."""
    ins = _inputs(pdf, tables, running, geometry, words, infos)
    pages = [_page_health(ins, k, text) for k, text in enumerate(page_texts)]
    warnings = [f"page {p['page']}: {w}" for p in pages for w in p["warnings"]]
    totals = {key: sum(int(p.get(key) or 0) for p in pages)
              for key in ("chars", "hyphenated", "tables_detected", "tables_markdown", "missing_letters",
                          "letters", "struck", "repeated")}
    totals["running_lines"] = sum(len(p.get("running", [])) for p in pages)
    totals["no_text_pages"] = sum(1 for p in pages if p.get("no_text"))
    out: dict[str, Any] = {"pages": pages, "warnings": warnings, "totals": totals}
    if geometry is not None:
        out.update(coverage=round(geometry.coverage, 4) if geometry.coverage is not None else None,
                   mapped=geometry.mapped, mappable=geometry.mappable)
    if hasattr(running, "summary"):
        out["running_lines"] = running.summary()
    return out


def _page_health(ins: _Inputs, k: int, text: str) -> dict[str, Any]:
    """Page ``k``'s measures and warnings; a page that cannot be read says so (and the others go on)."""
    p: dict[str, Any] = {"page": k + 1, "warnings": []}
    try:
        _measure(ins, k, text, p)
        p["warnings"].extend(_layout_warnings(p))
        p["warnings"].extend(_content_warnings(p))
    except _PAGE_ERRORS as exc:  # a strange page: say so, keep going
        p["warnings"].append(f"health check failed ({type(exc).__name__})")
    return p


def _measure(ins: _Inputs, k: int, text: str, p: dict[str, Any]) -> None:
    """Page ``k``'s measures, into ``p`` (in the order the JSON has them)."""
    no = k + 1
    page = ins.pdf[k]
    rect = page.rect
    md = re.sub(r"<!-- Page(?:Break|Header: .*?|Footer: .*?) -->", "", text)
    p["chars"] = sum(1 for ch in md if not ch.isspace())
    info = ins.infos[k] if k < len(ins.infos) else (rect.width, rect.height, page.rotation)
    p["rotation"] = int(info[2])
    p["image_coverage"] = _image_coverage(page)
    wk = ins.words[k] if ins.words is not None and k < len(ins.words) else []
    p["words"] = len(wk)
    p["no_text"] = not any(ch.isalnum() for ch in md)
    p["running"] = [f"{edge}: {why}" for _, edge, why in ins.found.get(k, [])]
    p["hyphenated"] = hyphenated_breaks(wk)
    p["tables_detected"] = int(ins.tables[k]) if k < len(ins.tables) else 0
    p["tables_markdown"] = len(_TABLE_SEP.findall(text))
    p["table_captions"] = len(_TABLE_CAPTION.findall(md))
    p["struck"] = len(_STRUCK.findall(md))
    p["repeated"] = repeated_lines(md, wk) if ins.words is not None else 0
    p["order_jumps"] = order_jumps(ins.runs_by_page.get(no, []), float(info[1]))
    if ins.geometry is not None and k < len(ins.geometry.page_coverage):
        m, n = ins.geometry.page_coverage[k]
        p["coverage"] = round(m / n, 4) if n else None
        lost, letters = _missing(ins.coverage[k] if k < len(ins.coverage) else [], ins.furniture)
        p["missing_letters"], p["letters"] = lost, letters
    if info[0] <= 0 or info[1] <= 0:
        p["warnings"].append("zero-size page")


def _layout_warnings(p: dict[str, Any]) -> Iterator[str]:
    """What the page's measures say of its layout: no text, rotated, fragments, tables."""
    if p["no_text"] and p["running"] and p["image_coverage"] < 0.5:
        pass  # a blank page but for its running header/footer (a book's blank verso): nothing wrong
    elif p["no_text"]:
        yield "no text layer (scanned?)" if p["image_coverage"] >= 0.5 else "no text"
    if p["rotation"]:
        yield f"rotated {p['rotation']}°"
    if p["words"] > _FRAGMENTS:
        yield f"{p['words']:,} text fragments (drawn or kerned text?)"
    if p["tables_detected"] > p["tables_markdown"]:
        yield f"{p['tables_detected']} table(s) detected, {p['tables_markdown']} came out as Markdown tables"
    elif p["table_captions"] > p["tables_markdown"]:
        yield (f"{p['table_captions']} table caption(s), {p['tables_markdown']} Markdown table(s): a table the "
               "converter did not detect (no vertical rules, as in most journals) comes out as lines of text, which "
               "Block Integrity cannot see as a table")


def _content_warnings(p: dict[str, Any]) -> Iterator[str]:
    """What the page's measures say of its text: struck or repeated lines, order jumps, dropped or unmapped text."""
    if p["struck"]:
        yield (f"{p['struck']} run(s) of text marked struck through (~~…~~): a line drawn through the text, or a "
               "line the converter took for one (a square root's bar, a figure's lines); heading titles leave "
               "the marks out")
    if p["repeated"]:
        yield (f"{p['repeated']} line(s) written twice by the converter, once on the page (an equation, a "
               "figure's text?): the text, its chunks and their token counts hold them twice")
    if p["order_jumps"] >= _JUMPS:
        yield f"extracted order jumps around the page {p['order_jumps']} times (columns?)"
    if p.get("letters", 0) >= _MISSING_MIN and p["missing_letters"] > _MISSING * p["letters"]:
        yield (f"{p['missing_letters'] / p['letters']:.0%} of the page's text is not in the "
               "Markdown (the converter dropped it: code or lists on shaded backgrounds?)")
    cov = p.get("coverage")
    if cov is not None and cov < 0.9 and p["chars"] > 50:
        yield f"only {cov:.0%} of the text mapped back to the page"


def format_health(h: dict[str, Any], max_warnings: int = 20) -> str:
    """The health lines ``chunkscope ingest`` prints."""
    t = h.get("totals", {})
    lines = []
    if h.get("coverage") is not None:
        lines.append(f"page boxes  {h['coverage']:.2%} of visible characters mapped "
                     f"({h['mapped']:,} / {h['mappable']:,})")
    rl = h.get("running_lines") or {}
    mode = rl.get("mode", "mark")
    lines.append(f"running     {t.get('running_lines', 0)} header/footer line(s) "
                 f"({'removed' if mode == 'strip' else 'kept as layout comments'})")
    lines.append(f"tables      {t.get('tables_detected', 0)} detected, {t.get('tables_markdown', 0)} as Markdown tables")
    lines.append(f"hyphenated  {t.get('hyphenated', 0)} line break(s) inside words")
    if t.get("repeated"):
        lines.append(f"repeated    {t['repeated']} line(s) written twice by the converter (once on the page)")
    if t.get("no_text_pages"):
        lines.append(f"no text     {t['no_text_pages']} page(s)")
    if t.get("letters") and t.get("missing_letters"):
        lines.append(f"missing     {t['missing_letters'] / t['letters']:.1%} of the letters on the pages are not in "
                     f"the Markdown ({t['missing_letters']:,} / {t['letters']:,})")
    ws = h.get("warnings", [])
    for w in ws[:max_warnings]:
        lines.append(f"health      {w}")
    if len(ws) > max_warnings:
        lines.append(f"health      ... and {len(ws) - max_warnings} more")
    return "\n".join(lines)


_RUNNING = re.compile(r"<!-- Page(Header|Footer): ")
_PAGE_BREAK = re.compile(r"<!--\s*PageBreak\s*-->")


def extraction_artefact(text: str, block: Sequence[int] | None = None, boundary: int | None = None,
                        joined: bool = False) -> str | None:
    """Whether a problem sits on an extraction artefact rather than on the chunker's choice.

    ``"extraction: running header"`` (``footer``) when the block holds a running header/footer
    comment (the block was glued around page furniture), or the cut ``boundary`` sits right after
    (before) one, with only whitespace between.
    ``joined``: the document's blocks may go on over a page break (a PDF's: ``continuation.join_continued``).
    A block that then holds a page break has its page's footer and header between its parts, not
    glued into it, and a cut at that break is the chunker's (None). See :func:`blame`.
    """
    if joined and block is not None and _PAGE_BREAK.search(text, int(block[0]), int(block[1])):
        return None
    if block is not None:
        m = _RUNNING.search(text, int(block[0]), int(block[1]))
        if m:
            return f"extraction: running {m.group(1).lower()}"
    if boundary is not None:
        b = int(boundary)
        last = text[max(0, b - 400):b].rstrip().rsplit("\n", 1)[-1]
        nxt = text[b:b + 400].lstrip().split("\n", 1)[0]
        for ln in (last, nxt):
            m = _RUNNING.match(ln)
            if m:
                return f"extraction: running {m.group(1).lower()}"
    return None


def blame(doc: Any, block: Sequence[int] | None = None, boundary: int | None = None) -> str | None:
    """:func:`extraction_artefact` for a problem of ``doc`` (a PDF's blocks may go on over page breaks)."""
    return extraction_artefact(doc.text, block, boundary, joined=getattr(doc, "source_format", "") == "pdf")
