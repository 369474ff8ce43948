"""PDF -> Markdown Document with PyMuPDF and pymupdf4llm.

Each page is converted to Markdown (headings from font sizes, tables as Markdown pipe
tables, lists), tidied (trailing spaces, runs of blank lines) and closed with
``<!-- PageBreak -->`` like the paper's parsed corpus; page k's span is exactly where
its Markdown sits in ``Document.text``. Blocks are built page by page, then a block that goes on
over a page break (a sentence, a list, a code listing) is joined (``chunkscope.text.continuation.join_continued``).

Refused with an ``IngestError``: not a PDF, damaged beyond repair, truncated (no end
marker and repaired), encrypted with a password, no pages, no extractable text at all.
Pages without text (scans, images) give one warning: "page 3 has no extractable text", "pages 8, 12-13
have no extractable text (blank, or scanned / images only)".
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from typing import Any, Sequence

from chunkscope.document import Document, Span
from chunkscope.ingest import pdfmap, underscores
from chunkscope.ingest.errors import IngestError
from chunkscope.ingest.markdown import PAGE_BREAK
from chunkscope.ingest.outline import (
    apply_outline,
    is_deck,
    is_outline_title,
    lines_outside_code,
    numbered_titles,
    outline_entries,
    slide_titles,
)
from chunkscope.text.blocks import build_blocks
from chunkscope.text.continuation import join_continued, rejoin_entries
from chunkscope.text.markup import alnum, plain

_PLACEHOLDER = re.compile(r"\*{0,2}==>.*?<==\*{0,2}|!\[[^\]]*\]\([^)]*\)")


# "©" typeset as "c" + COMBINING ENCLOSING CIRCLE (LaTeX \textcopyright) comes out as "_⃝_ c" or "c⃝"
# the converter's <u>/<mark> (underlined, highlighted text): a slide deck's titles came out as
# "**<mark>What</mark>** **<mark>is</mark>**", a fifth of its tokens; <sup>/<sub> are kept (x<sup>2</sup>)
_STYLE_TAG = re.compile(r"</?(?:u|mark)>")
_COPYRIGHT = re.compile(r"[_*]*\u20dd[_*]*\s?c(?![a-z])|c\u20dd")
# the LaTeX logo (its "A" raised, its "E" lowered) comes out as "L <sup>A</sup> TEX", "L A TEX" or, in bold,
# "**L** <sup>**A**</sup> **TEX" (174 times in LaTeX's own user guide); LaTeX2e's epsilon as "LaTeX2 _ε_"
_LATEX_LOGO = re.compile(r"(?<![A-Za-z0-9])L(?P<m>[*_]*)(?:[ \t]*<sup>(?P=m)A(?P=m)</sup>[ \t]*|[ \t]+A[ \t]+)(?P=m)TEX"
                         r"(?![A-Za-z])")  # not "LATEX" written in capitals (the rubber: "NATURAL RUBBER LATEX")
_LATEX2E = re.compile(r"\bLaTeX[ \t]*2(?P<g>[*_ \t]*)ε(?P<h>[*_]*)")


def _latex2e(m: re.Match[str]) -> str:
    """"LaTeX2ε" where the markup between "2" and "ε" and after it pairs up (an italic's two ends: "2 _ε_"), so
    that dropping it leaves the styled runs whole; run after the split runs are joined ("2** **_ε_**" is not)."""
    marks = (m["g"] + m["h"]).replace(" ", "").replace("\t", "")
    if marks.count("**") % 2 or marks.replace("**", "").count("*") % 2 or marks.count("_") % 2:
        return m[0]
    return "LaTeX2ε"


# TeX's own logo (its "E" lowered) comes out as "TEX": "TEX Users Group", "SliTEX", "The TEXbook"
_TEX_LOGO = re.compile(r"(?<![A-Z0-9_$])TEX(?![A-Z0-9_=])")  # not "TEXI2ANY", "MY_TEX_VAR", "TEX=pdftex"


def _latex_logos(md: str, tex: bool = False) -> str:
    """``md`` with the LaTeX logo written "LaTeX" (and "LaTeX2ε"); with ``tex`` (a document that prints the LaTeX
    logo, so typeset with TeX's logos) "TEX" is "TeX" too. Elsewhere "TEX" may be a word in capitals."""
    if "TEX" in md:
        md = _LATEX_LOGO.sub("LaTeX", md)
        if tex and "TEX" in md:
            lines = md.split("\n")
            for i in lines_outside_code(lines):  # outside fenced code, and outside inline code on the line
                parts = lines[i].split("`")
                lines[i] = "`".join(_TEX_LOGO.sub("TeX", x) if k % 2 == 0 else x for k, x in enumerate(parts))
            md = "\n".join(lines)
    return _LATEX2E.sub(_latex2e, md) if "ε" in md else md


def prints_latex_logo(pages: Sequence[str]) -> bool:
    """Whether the converter's pages print the LaTeX logo (then "TEX" is TeX's logo: ``_latex_logos``)."""
    return any("TEX" in md and _LATEX_LOGO.search(md) for md in pages)


# a heading the converter wrote (bold, at the start of its line), not code that starts with "#"
_BOLD_HEADING = re.compile(r"#{1,6} \*\*\S.*\*\*")
# a table-of-contents entry the converter took for a heading: "### 5 Binary files . . . . . 24" (dot leaders, not an
# ellipsis: "## And then... 2" stays a heading; spaced dots count from two: "### 2 Simple manipulations . . 8");
# only a line up to MAX_TOC_HEADING characters is tried (the lookahead backtracks over a long line's dots)
MAX_TOC_HEADING = 400
_TOC_HEADING = re.compile(r"#{1,6} (?=.*(?:(?: \.){2,}|(?:\. ){2,}\.|\.{4,})[_*]*\s*\d+\s*$)")


def _unfence_headings(md: str, titles: Sequence[str] = ()) -> str:
    """Move the converter's headings out of the code block they were put in: pymupdf4llm can close a
    code block after the heading that follows it ("```" code / "### **7.3 Input**" / "```"), or open
    it before the heading that precedes it. A heading there is a bold one (code may start with "#"), or
    one that is an outline title of its page (``titles``: their keys, ``outline.outline_entries``): a
    title holding code is not bold ("### 4.2 The function tapply() and ragged arrays"). Outside code, a
    table-of-contents entry it wrote as a heading becomes text."""

    def heading(line: str) -> bool:
        return bool(_BOLD_HEADING.fullmatch(line) or (titles and is_outline_title(line, titles)))

    lines = md.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            toc = _TOC_HEADING.match(lines[i]) if len(lines[i]) <= MAX_TOC_HEADING else None
            out.append(lines[i][toc.end():] if toc else lines[i])
            i += 1
            continue
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), None)
        if j is None:
            out.extend(lines[i:])
            break
        body = lines[i + 1:j]
        lo, hi = 0, len(body)
        while lo < hi and (not body[lo].strip() or heading(body[lo].strip())):
            lo += 1
        while hi > lo and (not body[hi - 1].strip() or heading(body[hi - 1].strip())):
            hi -= 1
        head, code, tail = body[:lo], body[lo:hi], body[hi:]  # (headings moved out are not ToC entries)
        if not any(x.strip() for x in head + tail):
            out.extend(lines[i:j + 1])  # nothing to move: the block as it was
            i = j + 1
            continue
        out.extend([*head, ""] if any(x.strip() for x in head) else [])
        if code:
            out.extend([lines[i], *code, lines[j]])
        out.extend(["", *tail] if any(x.strip() for x in tail) else [])
        i = j + 1
    return "\n".join(out)


# a chapter's label alone on the line above its heading (Sphinx's LaTeX: "CHAPTER" / "ONE" / title): it was a
# paragraph of its own, filed under the chapter before and often left at the end of that chapter's last chunk
_CHAPTER_WORD = re.compile(r"(?m)^([*_]*(?:chapter|appendix|part)[*_]*)[ \t]*\n\n(#{1,6}) ", re.IGNORECASE)


_LINE_NUMBER = re.compile(r"(\d{1,5})(?: (?=\S)|$)")
MIN_LINE_NUMBERS = 10  # consecutive margin numbers a page needs before they are taken for line numbering
MARGIN_GAP = 10.0  # points between a margin number and the text column (a line's own first word: a space)


def strip_line_numbers(md: str, words: Sequence[Sequence[Any]] | None) -> tuple[str, int]:
    """A manuscript's margin line numbers (a journal's review copy, ``lineno``: "38 In 1996 Maxim …", "40" alone
    on a line), which the converter writes into the text, removed: the page's longest run of lines that start
    with increasing numbers (steps of 1, or up to 3 where the converter lost one), when it has at least
    ``MIN_LINE_NUMBERS``, covers half of the page's lines (outside fenced code) and four in five of its numbers
    are words in the page's margin (``words``: PyMuPDF's, ``MARGIN_GAP`` or more left of where the text starts
    or right of where it ends; so years opening lines of prose, a table's index column or a contents list
    stay). A number alone on its line goes with the blank lines around it when the text before does not end a
    sentence and the text after goes on in lower case (the number had cut a sentence). Returns the page and
    how many were removed."""
    if not words:
        return md, 0
    lines = md.split("\n")
    fenced = False
    runs: dict[int, list[tuple[int, re.Match[str]]]] = {}  # the runs so far, by their last number
    best: list[tuple[int, re.Match[str]]] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _LINE_NUMBER.match(line)
        if m is None:
            continue
        n = int(m.group(1))
        # a run goes on from n-1 (or n-3: numbers the converter lost), over numbers of the text in between
        prev = next((runs.pop(n - d) for d in (1, 2, 3) if n - d in runs), [])
        run = runs[n] = prev + [(i, m)]
        if len(run) > len(best):
            best = run
    if len(best) < MIN_LINE_NUMBERS or len(best) < 0.5 * sum(1 for x in lines if x.strip()):
        return md, 0
    numbers = {m.group(1) for _, m in best}
    text_words = [w for w in words if str(w[4]) not in numbers]
    if not text_words:
        return md, 0
    left = sorted(float(w[0]) for w in text_words)[len(text_words) // 10]  # where the text starts (10th pct.)
    right = sorted(float(w[2]) for w in text_words)[-1 - len(text_words) // 10]
    margin = {str(w[4]) for w in words if str(w[4]) in numbers  # a gutter between them and the text, not a space
              and (float(w[2]) <= left - MARGIN_GAP or float(w[0]) >= right + MARGIN_GAP)}
    if len(margin) < 0.8 * len(numbers):
        return md, 0
    drop: set[int] = set()
    for i, m in best:
        rest = lines[i][m.end():]
        if rest.strip():
            lines[i] = rest
            continue
        drop.add(i)
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if k >= 0 and j < len(lines) and not lines[k].rstrip().endswith((".", "!", "?", ":")) \
                and lines[j].strip()[:1].islower():
            drop.update(range(k + 1, j))  # the number had cut a sentence: join it again
    return "\n".join(x for n, x in enumerate(lines) if n not in drop), len(best)


_NUMBER_ONLY = re.compile(r"[\divxlcIVXLC.\s]+")  # "12", "3.1", "iv": a number, no note
NOTE_SIZE = 0.95  # a margin note is set smaller than the body (LaTeX's notes: 0.9 of its height)
MAX_NOTE_WORDS = 4  # words of one margin note's line ("New feature", "2001/06/01"); more is a column of text


def _lines(words: Sequence[Sequence[Any]]) -> list[list[Sequence[Any]]]:
    """The page's words by PyMuPDF line (block and line number), each left to right."""
    lines: dict[tuple[int, int], list[Sequence[Any]]] = {}
    for w in words:
        lines.setdefault((int(w[5]), int(w[6])), []).append(w)
    return [sorted(ws, key=lambda w: float(w[0])) for ws in lines.values()]


def text_column(words: Sequence[Sequence[Any]] | None) -> tuple[float, float] | None:
    """Where the page's text column starts and ends: its lines of more than ``MAX_NOTE_WORDS`` words, from the
    leftmost start to the rightmost end; None for a page with fewer than five such lines."""
    long = [ws for ws in _lines(words or []) if len(ws) > MAX_NOTE_WORDS]
    if len(long) < 5:
        return None
    return min(float(ws[0][0]) for ws in long), max(float(ws[-1][2]) for ws in long)


def text_columns(words: Sequence[Sequence[Any] | None]) -> list[tuple[float, float] | None]:
    """Each page's text column for :func:`margin_notes`: the widest of its own (:func:`text_column`) and the
    document's (the median start and end over the pages of its parity: a two-sided layout moves the column
    between left and right pages), so that a narrow page (a table's, a figure's) does not take its table's last
    column for notes in a margin."""
    own = [text_column(w) for w in words]
    docs: list[tuple[float, float] | None] = []
    for parity in (0, 1):  # the median column of the even and of the odd pages, once each
        same = [c for c in own[parity::2] if c is not None]
        lefts, rights = sorted(c[0] for c in same), sorted(c[1] for c in same)
        docs.append((lefts[len(lefts) // 2], rights[len(rights) // 2]) if same else None)
    out: list[tuple[float, float] | None] = []
    for k, col in enumerate(own):
        doc = docs[k % 2]
        if doc is None or col is None:  # no page of its parity has a column, or this one has none: the other
            out.append(col or doc)
        else:
            out.append((min(doc[0], col[0]), max(doc[1], col[1])))
    return out


Note = tuple[str, str, list[Sequence[Any]]]  # a margin note: its side ("right" / "left"), its text, its words


def margin_notes(words: Sequence[Sequence[Any]] | None, column: tuple[float, float] | None) -> list[Note]:
    """The page's margin notes (LaTeX's ``\\marginpar``: "New feature" / "1994/12/01" beside a paragraph), top to
    bottom, as ``(side, text, words)`` with side "right" or "left": lines of their own of at most ``MAX_NOTE_WORDS`` words
    (not only numbers), in smaller type than the body (``NOTE_SIZE``), starting ``MARGIN_GAP`` or more right of where the text ``column`` ends (or ending that
    far left of where it starts; :func:`text_columns`), with no other word of their row that near, in one column
    (their first words within 2 points of one another), at least two on the page. A word of a figure or a long
    line beyond the column's edge is none of them."""
    if not words or column is None:
        return []
    left, right = column
    heights = sorted(float(w[3]) - float(w[1]) for w in words)
    body = heights[len(heights) // 2]  # the body's type size (its words' median height)

    def gutter(ws: list[Sequence[Any]], side: str) -> bool:  # no other word of its row within MARGIN_GAP
        top, bottom = float(ws[0][1]), float(ws[0][3])
        row = [w for w in words if float(w[1]) < bottom and float(w[3]) > top and w not in ws]
        if side == "right":
            return all(float(w[2]) <= float(ws[0][0]) - MARGIN_GAP or float(w[0]) >= float(ws[-1][2]) for w in row)
        return all(float(w[0]) >= float(ws[-1][2]) + MARGIN_GAP or float(w[2]) <= float(ws[0][0]) for w in row)

    found: list[tuple[float, str, float, str, list[Sequence[Any]]]] = []  # (top, side, edge, text, words)
    for ws in _lines(words):
        text = " ".join(str(w[4]) for w in ws)
        if len(ws) > MAX_NOTE_WORDS or _NUMBER_ONLY.fullmatch(text):
            continue  # a contents list's page or section numbers, a page number: not notes
        if max(float(w[3]) - float(w[1]) for w in ws) > NOTE_SIZE * body:
            continue  # set as large as the body: a CV's dates, a table's last column, not a note
        if float(ws[0][0]) >= right + MARGIN_GAP and gutter(ws, "right"):
            found.append((float(ws[0][1]), "right", float(ws[0][0]), text, ws))
        elif float(ws[-1][2]) <= left - MARGIN_GAP and gutter(ws, "left"):
            found.append((float(ws[0][1]), "left", float(ws[-1][2]), text, ws))
    out: list[tuple[float, Note]] = []
    for side in ("right", "left"):
        edges = sorted(e for _, sd, e, _, _ in found if sd == side)
        if len(edges) < 2:
            continue
        at = edges[len(edges) // 2]  # the notes' column: where most of them start (or end)
        keep = [(top, (sd, t, ws)) for top, sd, e, t, ws in found if sd == side and abs(e - at) <= 2.0]
        if len(keep) >= 2:
            out += keep
    return [note for _, note in sorted(out, key=lambda x: x[0])]


_GONE = "\x00gone"  # a margin note's own line, left out when the page is joined again


def strip_margin_notes(md: str, notes: Sequence[Note]) -> tuple[str, list[int]]:
    """``md`` without the margin notes (:func:`margin_notes`) the converter wrote into the lines beside them: at the
    end of a line for a note on the right ("... needed in a LaTeX class New feature"), at its start for one on the
    left, or as a line of its own; each note is looked for after the previous one, outside fenced code. Returns the
    page and the indices of the notes removed."""
    if not notes:
        return md, []
    lines = md.split("\n")
    outside = list(lines_outside_code(lines))
    removed: list[int] = []
    k = 0
    for n, (side, note, _) in enumerate(notes):
        for j in range(k, len(outside)):
            i = outside[j]
            line = lines[i].rstrip()
            if line.strip() == note:
                lines[i] = _GONE  # the line goes: a blank one would split its paragraph in two
            elif side == "right" and line.endswith(" " + note):
                lines[i] = line[: -len(note) - 1].rstrip()
            elif side == "left" and line.lstrip().startswith(note + " "):
                lines[i] = line.lstrip()[len(note) + 1:]
            else:
                continue
            removed.append(n)
            k = j
            break
    return "\n".join(x for x in lines if x is not _GONE), removed



# the converter writes a styled phrase word by word ("**Blank** **lines**", "_An_ _Introduction_ _to_ _R_",
# "`if(any(x` `<=` `0))`"): the markup between two runs of one style, a space apart, goes
_SPLIT_RUNS = re.compile(r"(?<=[^\s*])\*\* \*\*(?=[^\s*])|(?<=[^\s_])_ _(?=[^\s_])|(?<=[^\s`])` `(?=[^\s`])")


# a link the converter cut at a line break into two links to one target ("[https://CRAN.R-project.org/](U)`" over
# "`[package=MASS](U)"), each perhaps in its own code span
_SPLIT_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)(`?)\n(`?)\[([^\]\n]+)\]\(\2\)")


def _join_link(m: re.Match[str]) -> str:
    if m[3] != m[4]:
        return m[0]
    glue = "" if " " not in m[1] and ("/" in m[1] or "." in m[1]) else " "  # a wrapped URL has no space
    return f"[{m[1]}{glue}{m[5]}]({m[2]})"


def _join_split_runs(md: str) -> str:
    """``md`` with each styled phrase the converter split word by word written as one run, and each link it cut
    at a line break as one link, outside fenced code (only markup and that line break go: the words stay, so
    page boxes still map)."""
    if "](" not in md and "** **" not in md and "_ _" not in md and "` `" not in md:
        return md
    lines = md.split("\n")
    outside = set(lines_outside_code(lines))
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and j in outside:  # a stretch of lines outside code, fixed as one text
            j += 1
        if j > i:
            out.append(_SPLIT_RUNS.sub(" ", _SPLIT_LINK.sub(_join_link, "\n".join(lines[i:j]))))
        else:
            out.append(lines[i])  # a fence, or a line of code
            j = i + 1
        i = j
    return "\n".join(out)


def _tidy(md: str, titles: Sequence[str] = (), tex: bool = False) -> str:
    md = _COPYRIGHT.sub("©", md)
    md = _STYLE_TAG.sub("", md)  # underline and highlight are the page's look, not its words
    md = _latex_logos(md, tex)
    md = md.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").replace("\x00", "")
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = _unfence_headings(md, titles) if "#" in md else md
    md = re.sub(r"(?<=[^\n])\n(?=#{1,6} )", "\n\n", md)  # a blank line before each heading
    md = _CHAPTER_WORD.sub(r"\2 \1 ", md)  # "**CHAPTER**" above "## **TWO** **…**" belongs to that heading
    md = re.sub(r"\n{3,}", "\n\n", md)
    return md.strip()


def _has_text(md: str) -> bool:
    return any(ch.isalnum() for ch in _PLACEHOLDER.sub("", md))


def _line_key(line: str) -> str:
    """A running header/footer line with its numbers and emphasis removed."""
    return re.sub(r"\d+", "#", re.sub(r"[*_`]", "", line)).strip().lower()


def _start_key(line: str) -> str | None:
    """The first two words of a running header whose title changes with the chapter ("CHAPTER 3.
    CHOOSING A DEBIAN ... 3.1. WHICH ..." gives "chapter #."): None for a heading, a list item, a line
    of fewer than three words or a long one, and a start without a word of three letters."""
    stripped = line.strip()
    if stripped.startswith(("#", "-", "*", "+", "(", "|", ">")) or stripped[:1].isdigit():
        return None
    key = _line_key(stripped)
    toks = key.split()
    if len(toks) < 3 or len(key) > 150:
        return None
    start = " ".join(toks[:2])
    return start if re.search(r"[^\W\d_]{3}", start) else None


_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-\u2013\u2014(]?\s*(\d{1,4})\s*[-\u2013\u2014)]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_LIST_ITEM = re.compile(r"^\s*[-*+]\s")
_EDGE_NUMBER = re.compile(r"^(\d{1,4})\s+\S|\S\s+(\d{1,4})$")


@dataclass
class RunningLines:
    """Running headers/footers found: ``found[page_index] = [(line_index, "header"|"footer", reason)]``.
    ``reason``: "repeated" (same line, numbers aside), "page number" (a page number alone),
    "chapter + page number" (a short line that varies with the chapter and carries the page number),
    "same start" (a header that varies with the chapter and section but always starts alike)."""

    found: dict[int, list[tuple[int, str, str]]] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        by: dict[str, int] = {}
        for items in self.found.values():
            for _, edge, reason in items:
                by[f"{edge}: {reason}"] = by.get(f"{edge}: {reason}", 0) + 1
        examples = [t for ts in self.texts.values() for t in ts][:5]
        return {"pages": len(self.found), "by_kind": by, "examples": examples}


def _edge_lines(words: list, info: tuple = (), band: float = 0.15) -> tuple[str, str]:
    """Alphanumerics of the top-most and bottom-most text line of a page (words on one baseline);
    "" for a line outside the top (bottom) ``band`` of the page height: no running line there."""
    if not words:
        return "", ""
    height = float(info[1]) if len(info) > 1 and info[1] > 0 else 0.0
    top = min(w[1] for w in words)
    bottom = max(w[3] for w in words)
    t = sorted((w for w in words if w[1] <= top + 2.0), key=lambda w: w[0])
    b = sorted((w for w in words if w[3] >= bottom - 2.0), key=lambda w: w[0])
    tk = alnum("".join(str(w[4]) for w in t))
    bk = alnum("".join(str(w[4]) for w in b))
    if height:
        tk = tk if top <= height * band else ""
        bk = bk if bottom >= height * (1 - band) else ""
    return tk, bk


def _page_number(line: str) -> int | None:
    m = _PAGE_NUMBER.match(plain(line))
    return int(m.group(1)) if m else None


_ROMAN = re.compile(r"^(?=[ivxlc])(x{0,3})(ix|iv|v?i{0,3})$", re.IGNORECASE)
ROMAN_NEED = 3  # front-matter pages numbered i, ii, iii...: too few for the quarter of pages, so at least this many


def _roman_number(line: str) -> int | None:
    """The value of a line that is a Roman page number alone ("**iv**"), up to 39; None otherwise."""
    m = _ROMAN.match(plain(line))
    if not m:
        return None
    tens, ones = m.group(1).lower(), m.group(2).lower()
    values = {"": 0, "i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9}
    return 10 * len(tens) + values[ones]


def _edge_number(line: str) -> int | None:
    text = plain(line)
    if len(text) > 100:
        return None
    m = _EDGE_NUMBER.search(text)
    if not m:
        return None
    return int(m.group(1) or m.group(2))


def find_running_lines(pages: list[str], edges: list[tuple[str, str]] | None = None,
                       min_share: float = 0.25) -> tuple[list[str], RunningLines]:
    """Find running page headers / footers (see ``RunningLines``); pages are returned unchanged.

    The first (last) line of a page is a header (footer) when, on at least a quarter of the pages
    with text and at least 3 of them: the same line (numbers aside) starts (ends) the page; or the
    line is a page number alone; or it is a short line whose leading/trailing number follows the
    page index (the same offset on those pages: "Appendix A: Copying Information 29"); or, for a
    header, its first two words (numbers aside) start the page ("CHAPTER 3. CHOOSING A DEBIAN ...
    3.1. WHICH ...", see ``_start_key``; never a heading or a list item). With
    ``edges`` (the top/bottom ink lines of each page) a page-number line must also be the page's
    top (bottom) line, so a numbered heading or list item is never taken for one; and a line of three
    words or more (not a heading, a table row or a list item) that is the top (bottom) ink line of at
    least a quarter of the pages of one side, odd or even, and at least 2 of them, and that never starts
    (ends) a page of the other side, is a running line too (alternating headers: a 6-page paper's "Title …
    Conference" on pages 3 and 5; not a slide title repeated over three overlay slides, 7 to 9).
    """
    found = RunningLines()
    with_text = [i for i, md in enumerate(pages) if md.strip()]
    if len(with_text) < 3:
        return pages, found
    need = max(3, int(len(with_text) * min_share + 0.999))
    # the same share of the pages of one side (odd or even), at least 2: "Title ... Conference" on pages 3 and 5 of 6
    need_side = [max(2, int(sum(1 for k in with_text if k % 2 == side) * min_share + 0.999)) for side in (0, 1)]

    def ends(md: str) -> tuple[int, int, list[str]]:
        lines = md.split("\n")
        idx = [i for i, ln in enumerate(lines) if ln.strip()]
        return (idx[0], idx[-1], lines) if len(idx) >= 2 else (-1, -1, lines)

    by_side: dict[tuple[str, int, str], int] = {}  # (edge, page parity, key): first / last lines of odd, even pages
    starts: dict[str, int] = {}
    offsets: dict[tuple[str, int], int] = {}
    romans: dict[tuple[str, int], int] = {}
    info = {}
    for k in with_text:
        i, j, lines = ends(pages[k])
        if i < 0:
            continue
        info[k] = (i, j, lines)
        for edge, n in (("header", lines[i]), ("footer", lines[j])):
            side = (edge, k % 2, _line_key(n))
            by_side[side] = by_side.get(side, 0) + 1
        sk = _start_key(lines[i])
        if sk is not None:
            starts[sk] = starts.get(sk, 0) + 1
        for edge, n in (("header", lines[i]), ("footer", lines[j])):
            num = _edge_number(n) if _page_number(n) is None else _page_number(n)
            if num is not None:
                offsets[(edge, num - k)] = offsets.get((edge, num - k), 0) + 1
            roman = _roman_number(n)
            if roman is not None:
                romans[(edge, roman - k)] = romans.get((edge, roman - k), 0) + 1

    def on_edge(k: int, line: str, edge: str) -> bool:
        if edges is None or k >= len(edges):
            return True
        ink = edges[k][0 if edge == "header" else 1]
        a = alnum(line)
        return bool(a) and bool(ink) and (a == ink or (len(ink) >= 1 and (ink in a or a in ink)))

    def reason(k: int, line: str, edge: str) -> str | None:
        key = _line_key(line)
        if not key or key.startswith("|") or len(key) > 200:
            return None
        if by_side.get((edge, 0, key), 0) + by_side.get((edge, 1, key), 0) >= need:  # pages of both sides
            return "repeated" if on_edge(k, line, edge) else None
        num = _page_number(line)
        if num is not None:
            return "page number" if offsets.get((edge, num - k), 0) >= need and on_edge(k, line, edge) else None
        roman = _roman_number(line)
        if roman is not None:  # a Roman page number whose offset to the page index is shared by 3 pages
            return "page number" if romans.get((edge, roman - k), 0) >= ROMAN_NEED and on_edge(k, line, edge) else None
        num = _edge_number(line)
        if num is not None and offsets.get((edge, num - k), 0) >= need and on_edge(k, line, edge) \
                and not _LIST_ITEM.match(line):  # a bullet, not bold markup: "**6** **Chapter 2.**" is a footer
            return "chapter + page number"
        sk = _start_key(line) if edge == "header" else None
        if sk is not None and starts.get(sk, 0) >= need and on_edge(k, line, edge):
            return "same start"
        if edges is not None and by_side.get((edge, k % 2, key), 0) >= need_side[k % 2] \
                and not by_side.get((edge, 1 - k % 2, key)) and len(key.split()) >= 3 \
                and not line.lstrip().startswith(("#", "|")) and not _LIST_ITEM.match(line) and on_edge(k, line, edge):
            return "repeated on alternate pages"  # a book's or a paper's odd-page header: too few pages for the first rule
        return None

    inner = _inner_page_numbers(info, edges)  # a page number the converter put between two columns
    for k, (at_edge, number, _) in inner.items():
        offsets[(at_edge, number - k)] = offsets.get((at_edge, number - k), 0) + 1
    for k, (i, j, lines) in info.items():
        items = []
        r = reason(k, lines[j], "footer")
        if r:
            items.append((j, "footer", r))
        r = reason(k, lines[i], "header")
        if r:
            items.append((i, "header", r))
        if k in inner:  # also on a page whose running line of the other edge was found (its running title)
            at_edge, number, at = inner[k]
            if offsets[(at_edge, number - k)] >= need and all(e != at_edge for _, e, _ in items):
                items.append((at, at_edge, "page number inside the page"))
        if items:
            found.found[k] = items
            found.texts[k] = [lines[n].strip() for n, _, _ in items]
    return pages, found


def _inner_page_numbers(info: dict[int, tuple[int, int, list[str]]], edges: list[tuple[str, str]] | None
                        ) -> dict[int, tuple[str, int, int]]:
    """Pages whose top (bottom) ink line is a number alone that the Markdown has as a line of its own, but
    not first (last): a two-column page's number, which the converter writes between the columns.
    ``{page: (edge, number, line index)}``."""
    out: dict[int, tuple[str, int, int]] = {}
    if edges is None:
        return out
    for k, (i, j, lines) in info.items():
        if k >= len(edges):
            continue
        for edge, ink in (("header", edges[k][0]), ("footer", edges[k][1])):
            if not re.fullmatch(r"[0-9]{1,4}", ink):  # "²".isdigit() is true, and int("²") fails
                continue
            at = [n for n in range(i + 1, j) if plain(lines[n]) == ink]
            if at:
                out[k] = (edge, int(ink), at[0] if edge == "header" else at[-1])
                break
    return out


def apply_running_lines(pages: list[str], found: RunningLines, strip: bool = False) -> list[str]:
    """Pages with their running lines turned into ``<!-- PageHeader: ... -->`` / ``PageFooter``
    layout comments (or removed with ``strip``)."""
    out = []
    for k, md in enumerate(pages):
        items = found.found.get(k)
        if not items:
            out.append(md)
            continue
        lines = md.split("\n")
        for n, edge, _ in items:
            if strip:
                lines[n] = ""
            elif edge == "footer":
                lines[n] = "\n<!-- PageFooter: " + lines[n].strip().replace("-->", "->") + " -->"
            else:
                lines[n] = "<!-- PageHeader: " + lines[n].strip().replace("-->", "->") + " -->\n"
        out.append(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip())
    return out


def mark_running_lines(pages: list[str], min_share: float = 0.25) -> list[str]:
    """Turn running page headers / footers into layout comments, as in the paper's corpus
    (``find_running_lines`` then ``apply_running_lines``)."""
    _, found = find_running_lines(pages, None, min_share)
    return apply_running_lines(pages, found)


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
    except Exception:  # no catalog, or a reference to an object that is not there
        return True


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


def _page_markdown(doc) -> tuple[list[str], list[str], list[int]]:
    """Markdown of each page, warnings, and the number of tables pymupdf4llm detected per page."""
    warnings: list[str] = []
    tables = [0] * doc.page_count
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
                if isinstance(c, dict):
                    tables[i] = len(c.get("tables") or [])
        pages = [by_page[i] for i in range(doc.page_count)]
    except Exception as exc:  # fall back to PyMuPDF's plain text, say so
        warnings.append(f"Markdown conversion failed ({_first_line(exc)}); plain text extracted instead")
        pages = [_plain_text(page) for page in doc]
    return pages, warnings, tables


def _plain_text(page) -> str:
    """PyMuPDF's plain text of a page (one line per text line), "" when it cannot be read: what stands in
    for the Markdown where the converter failed or lost the page's text."""
    try:
        return page.get_text("text")
    except Exception:
        return ""


# the emphasis a font's name says, where its flags do not: TeX's Type 1 fonts (revtex's section titles in CMBX9 and
# CMTI9; with T1 fontenc, cm-super's SFBX1000 / SFTI1000 and the EC fonts' ECBX1000 / ECTI1000) carry no bold or italic
# flag, so the converter writes them as plain text
# (Nimbus's "-Medi" is its bold, "-Medium" elsewhere (Roboto, HelveticaNeue) is not; "Ital" with its capital:
# "Digital" is no italic; math italic, CMMI, is variables)
_BOLD_FONT = re.compile(r"(?i:bold)|Black|Heavy|Demi|-Medi(?!um)"
                        r"|(?i:^cm(?:bx(?:ti|sl)?|b|ssbx)\d)|(?i:^(?:ec|sf)(?:bx|bi|bl|rb|sx)\d)")
_ITALIC_FONT = re.compile(r"Ital|Oblique|(?i:^cm(?:ti|sl|ssi|u)\d)|(?i:^(?:ec|sf)(?:ti|sl|si|ui)\d)")
_FONT_BOLD, _FONT_ITALIC = 16, 2  # PyMuPDF's span flags


def font_emphasis(page) -> list[tuple[str, str, tuple[int, ...]]]:
    """The page's runs of emphasised text in the order of its content stream (PyMuPDF's blocks and lines unsorted:
    not necessarily reading order), as ``(kind, key, starts)``: ``kind`` "bold" or "italic" (by the span's flags or
    its font's name), ``key`` the run's letters and digits (``alnum``; ligatures unfolded), ``starts`` 0 and the
    offsets in ``key`` where a later line of the page starts. A run is the longest stretch of spans with one emphasis
    (spaces and line ends do not break it: a title wrapped over two lines is one run), so a title in bold right under
    another ("II. THEORY" / "A. The model") starts at one of its ``starts``, not at 0. [] when the page cannot be
    read."""
    try:
        blocks = page.get_text("dict")["blocks"]
    except Exception:
        return []
    out: list[tuple[str, str, tuple[int, ...]]] = []
    kind = ""
    run: list[str] = []  # each span's letters and digits
    starts: list[int] = []
    size = 0  # letters and digits in ``run`` so far

    def close() -> None:
        if kind:
            key = "".join(run)
            out.append((kind, key, tuple(dict.fromkeys(x for x in starts if x < len(key)))))

    for line in (x for b in blocks for x in b.get("lines", ())):
        first = True
        for span in line.get("spans", ()):
            text = unicodedata.normalize("NFKC", str(span.get("text", "")))
            if not text.strip():
                continue
            font, flags = str(span.get("font", "")).split("+")[-1], int(span.get("flags", 0))
            now = ("bold" if flags & _FONT_BOLD or _BOLD_FONT.search(font)
                   else "italic" if flags & _FONT_ITALIC or _ITALIC_FONT.search(font) else "")
            if now != kind:
                close()
                kind, run, starts, size = now, [], [0], 0
            if first:
                starts.append(size)
                first = False
            run.append(alnum(text))
            size += len(run[-1])
    close()
    return out


_LOST_SHARE = 0.5  # a page whose Markdown keeps less than this share of the page's letters lost text
_LOST_MIN = 200  # ... when the page has at least this many letters
_LOST_NO_TABLE = 0.9  # the same on a page without a detected table


def _letters(s: str) -> int:
    return sum(ch.isalnum() for ch in s)


def _ink_letters(md: str) -> int:
    """Letters of a page's Markdown that have ink (link targets, tags and placeholders left out)."""
    mask = pdfmap.markup_mask(md)
    return sum(1 for i, ch in enumerate(md) if not mask[i] and ch.isalnum())


def _recover_lost_text(doc, raw_pages: list[str], words: list[list[tuple]] | None, infos: list[tuple],
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
        except Exception:
            continue
        got = _ink_letters(_PLACEHOLDER.sub("", raw))
        share = _LOST_SHARE if tables and k < len(tables) and tables[k] else _LOST_NO_TABLE
        if want < _LOST_MIN or got >= share * want:
            continue
        try:
            chunk = _converter().to_markdown(doc, pages=[k], page_chunks=True, show_progress=False,
                                             table_strategy=None, ignore_graphics=True)[0]
            again = chunk.get("text", "") if isinstance(chunk, dict) else str(chunk)
        except Exception:
            again = ""
        kept = _ink_letters(_PLACEHOLDER.sub("", again))
        if kept > got + 0.05 * want:
            raw_pages[k] = again
            redone.append((k + 1, got, want))
            got = kept
        if got < _LOST_SHARE * want and _sideways(doc[k]):  # most of the page lost, and set sideways: a landscape
            text = _plain_text(doc[k])                          # table (not hidden text: white, invisible words)
            if _letters(text) > got + 0.05 * want:
                raw_pages[k] = text
                as_plain.append((k + 1, got, want))
                if redone and redone[-1][0] == k + 1:
                    redone.pop()
    if redone:
        got, want = sum(r[1] for r in redone), sum(r[2] for r in redone)
        warnings.append(f"{_page_list([r[0] for r in redone])}: Markdown conversion kept only {got:,} of {want:,} "
                        "letters (text on a shaded background taken for a picture?); converted again ignoring "
                        "vector graphics (tables there are not detected)")
    if as_plain:
        got, want = sum(r[1] for r in as_plain), sum(r[2] for r in as_plain)
        warnings.append(f"{_page_list([r[0] for r in as_plain])}: Markdown conversion kept only {got:,} of {want:,} "
                        "letters (text set sideways, such as a landscape table); PyMuPDF's plain text used instead "
                        "(one line per text line: no Markdown table or headings there)")


def _sideways(page) -> bool:
    """Most of the page's letters run on lines that are not left to right (rotated text)."""
    try:
        lines = [ln for b in page.get_text("dict")["blocks"] for ln in b.get("lines", [])]
    except Exception:
        return False
    count = [0, 0]
    for ln in lines:
        n = sum(_letters(sp.get("text", "")) for sp in ln.get("spans", []))
        count[abs(ln.get("dir", (1, 0))[0]) < 0.5] += n
    return count[1] > count[0]


def _hide_underscore_rules(doc, words: list[list[tuple]] | None, infos: list[tuple]) -> dict[int, list]:
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


REPLACEMENT = "\ufffd"  # what the converter writes for a glyph its font maps to no character


def _page_list(pages: list[int]) -> str:
    """"page 3" / "pages 1-4, 7" (consecutive pages as ranges)."""
    spans: list[list[int]] = []
    for p in pages:
        if spans and p == spans[-1][1] + 1:
            spans[-1][1] = p
        else:
            spans.append([p, p])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return ("pages " if len(pages) > 1 else "page ") + text


def load_pdf_bytes(data: bytes, filename: str, name: str, *, running: str = "mark",
                   geometry: bool = True) -> Document:
    """Load a PDF. ``running``: what to do with running page headers/footers: ``"mark"`` (default:
    kept as ``<!-- PageHeader: ... -->`` layout comments) or ``"strip"`` (removed: another text,
    another Document). ``geometry``: also map the text back to the pages (``Document.geometry``)."""
    if running not in ("mark", "strip"):
        raise ValueError(f"running must be 'mark' or 'strip', not {running!r}")
    if not data:
        raise IngestError(f"{filename} is empty")
    doc = _open(data, filename)
    try:
        # words and page sizes first: pymupdf4llm removes page rotations in memory as it converts
        infos = [pdfmap.page_info(page) for page in doc]
        words = [pdfmap.page_words(page) for page in doc] if geometry else None
        tops = [_edge_lines(w, info) for w, info in zip(words, infos)] if words is not None else None
        rules = _hide_underscore_rules(doc, words, infos)
        raw_pages, warnings, tables = _page_markdown(doc)
        _recover_lost_text(doc, raw_pages, words, infos, warnings, tables)
        for k, found in rules.items():
            raw_pages[k] = underscores.restore(raw_pages[k], found)[0]
        meta = {
            "page_count": doc.page_count,
            "pdf_title": (doc.metadata or {}).get("title") or "",
            "repaired": bool(getattr(doc, "is_repaired", False)),
        }
        if meta["repaired"]:
            warnings.append("the PDF was damaged and repaired on opening; some content may be missing")
        for k, raw in enumerate(raw_pages):  # pymupdf4llm drops the text of some pages (rotated ones)
            if not _has_text(raw):
                text = _plain_text(doc[k])
                if _has_text(text):
                    raw_pages[k] = text
                    rot = int(infos[k][2])
                    warnings.append(f"page {k + 1}: Markdown conversion found no text, PyMuPDF's plain text used"
                                    + (f" (page rotated {rot}°)" if rot else ""))

        parts: list[str] = []
        pages: list[Span] = []
        pos = 0
        empty: list[int] = []
        try:
            toc = doc.get_toc(simple=True)
        except Exception:  # a damaged outline: the converter's headings as they are
            toc = []
        entries = outline_entries(toc, len(raw_pages))
        tex = prints_latex_logo(raw_pages)
        tidy = [_tidy(raw, [key for _, key in entries.get(k, ())], tex) for k, raw in enumerate(raw_pages)]
        numbered = []
        for k, md in enumerate(tidy):
            tidy[k], n = strip_line_numbers(md, words[k] if words is not None else None)
            if n:
                numbered.append((k + 1, n))
        notes = []
        page_words = words if words is not None else []  # margin notes are found in the page's words (none without)
        for k, col in enumerate(text_columns(page_words)):
            found = margin_notes(page_words[k], col)
            tidy[k], gone = strip_margin_notes(tidy[k], found)
            if gone:  # left out of the text on purpose: no page box to find, no letter lost
                drop = {id(w) for n in gone for w in found[n][2]}
                page_words[k] = [w for w in page_words[k] if id(w) not in drop]
                notes.append((k + 1, len(gone)))
        if notes:
            warnings.append(f"{_page_list([k for k, _ in notes])}: {sum(n for _, n in notes):,} margin notes (short "
                            "lines printed beside the text column, such as LaTeX's \"New feature\") removed from the text")
        if numbered:
            warnings.append(f"{_page_list([k for k, _ in numbered])}: {sum(n for _, n in numbered):,} line numbers "
                            "printed in the margin (a manuscript's or a listing's) removed from the text")
        tidy, running_found = find_running_lines(tidy, tops)
        marked = apply_running_lines(tidy, running_found, strip=running == "strip")
        marked, meta["outline"] = apply_outline(marked, toc)
        if words is not None and is_deck(infos, [len(w) for w in words]):
            marked, meta["outline"]["slide_titles"] = slide_titles(marked)
        elif not meta["outline"]["entries"]:
            marked, meta["outline"]["numbered_titles"] = numbered_titles(marked, [font_emphasis(page) for page in doc])
        meta["rejoined_entries"] = 0  # reference entries the converter cut after their first line
        for k, md in enumerate(marked):
            marked[k], n = rejoin_entries(md)
            meta["rejoined_entries"] += n
            marked[k] = _latex_logos(_join_split_runs(marked[k]), tex)  # last: the outline splits run-together titles at
            # run edges; "LaTeX 2** **_ε_**" is one run "LaTeX 2 _ε_" then
        for k, md in enumerate(marked, start=1):
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
        if empty:  # one line for all of them (a manual's intentionally blank pages are many)
            warnings.append(f"{_page_list(empty)} {'has' if len(empty) == 1 else 'have'} no extractable text"
                            + (" (blank, or scanned / images only)" if len(empty) > 1 else ""))
        undecoded = [(k, n) for k, md in enumerate(marked, start=1) if (n := md.count(REPLACEMENT)) >= 3]
        if undecoded:  # the font maps glyphs to no letter: the text is not what the page shows
            meta["undecoded_chars"] = sum(n for _, n in undecoded)
            warnings.append(
                f"{meta['undecoded_chars']:,} characters on {_page_list([k for k, _ in undecoded])} could not be "
                f"decoded and read {REPLACEMENT}: the PDF's fonts do not say which letters those glyphs are, so the "
                "text differs from the page there (broken words for search, the embedding model and the token "
                "counts); only OCR of the pages would recover them")
        text = "".join(parts)
        geo = None
        if geometry and words is not None:
            try:
                geo = pdfmap.build_geometry(infos, parts, [p.start for p in pages], words)
            except Exception as exc:  # never lose the document over its boxes
                warnings.append(f"page boxes not available ({_first_line(exc)})")
        meta["running_lines"] = {"mode": running, **running_found.summary()}
        try:
            from chunkscope.ingest.health import pdf_health

            meta["health"] = pdf_health(doc, parts, tables, running_found, geo, words, infos)
            meta["health"]["running_lines"] = meta["running_lines"]
        except Exception as exc:  # the document is fine without its health report
            warnings.append(f"extraction health not available ({_first_line(exc)})")
    finally:
        doc.close()
    blocks, headings = build_blocks(text, pages, markdown=True)
    blocks, meta["continued_blocks"] = join_continued(text, blocks, pages)
    return Document(
        name=name,
        text=text,
        source_format="pdf",
        pages=pages,
        blocks=blocks,
        headings=headings,
        warnings=warnings,
        meta=meta,
        geometry=geo,
    )
