"""Markdown text cut into *atoms*, the first step of the block builder (``chunkscope.text.blocks``): a heading
line, a paragraph, a list item, a table, a figure, a code fence, a footnote, a layout comment, a table of contents'
entry; every blank line belongs to the atom before it. Also the line readers the PDF repairs use
(``chunkscope.text.continuation``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chunkscope.text.markup import LAYOUT_OPEN

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#+)(?:[ \t]+(.*?))?[ \t]*$")
_COMMENT = LAYOUT_OPEN  # a layout comment's first line (chunkscope.text.markup): a layout block
OPEN_TAG = re.compile(r"^\s*<(table|figure)\b[^>]*>", re.IGNORECASE)
_FOOTNOTE = re.compile(r"^\s{0,3}(?:\\\*[ \t]|\[\^[^\]\s]+\]:)")
BULLET = re.compile(r"^\s*(?:[-*+]|[_*]{0,2}[•·▪●◦‣▸▹○◯–—][_*]{0,2}|\(?\d{1,3}[.)]|\(?[A-Za-z][.)]|\([ivxlcdmIVXLCDM]{1,6}\))[ \t]+\S")
STRONG_BULLET = re.compile(r"^\s*(?:[-*+]|[_*]{0,2}[•·▪●◦‣▸▹○◯][_*]{0,2})[ \t]+\S")
# a table-of-contents line: dot leaders (". . . ." or "....") and a page number, arabic or roman, at its end
_TOC_LINE = re.compile(r"(?:(?:\.[ \t]?){4,}|(?:\. ){2,}\.)[ \t]*[_*]*[ \t]*(?:\d{1,4}|[ivxlc]{1,6})[ \t]*[_*]*[ \t]*$",
                       re.IGNORECASE)
# a line that is all emphasis: a bold or italic title (the outline may make a heading of it)
EMPHASIS_ONLY = re.compile(r"^\s*(?:(?:\*\*|__)[^*_\n]+(?:\*\*|__)\s*|_[^_\n]+_\s*)+$")
# a contents line without dot leaders, emphasis removed: a title and an arabic page number ("Vclear 235",
# "IV Terminal types 237"); a contents entry only inside a table of contents (``_toc_entries``, ``_toc_neighbours``)
TOC_NUMBERED = re.compile(r"^(?=[^\n]*[^\W\d_])[^\n]{0,100}[^\s.,;:!?]\s+\d{1,4}$")
# the page number ending a contents line (emphasis removed)
_PAGE_NUMBER = re.compile(r"(\d{1,4})\s*$")
# text before a line's closing number that reads as a sentence, not a title: two lower-case words ("born in
# 1921", "Our team has 12"), or a line starting in lower case ("and the first release came out in 2001")
_PROSE_NUMBER = re.compile(r"(?:^[a-z]|\b[a-z]+\s+[a-z]+\s+\d{1,4}$)")
DELIM_ROW = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)+\|?\s*$|^\s*\|\s*:?-{3,}:?\s*\|\s*$")


@dataclass
class Atom:
    """A span of lines of one kind (``level`` and ``title`` for a heading, ``tokens`` once counted)."""

    start: int
    end: int
    kind: str  # heading | paragraph | item | table | figure | code | footnote | layout
    level: int = 0
    title: str = ""
    tokens: int = 0


def split_lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) for each line; ``end`` includes the newline."""
    out = []
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl + 1
        out.append((pos, end, text[pos:end].rstrip("\n").rstrip("\r")))
        pos = end
    return out


def _blank(line: str) -> bool:
    return not line.strip()


def clean_title(raw: str) -> str:
    """A heading's or a line's text without closing hashes, emphasis and strike-through marks, stripped."""
    t = (raw or "").strip()
    t = re.sub(r"[ \t]+#+$", "", t)  # closing hashes
    t = t.replace("**", "")
    t = re.sub(r"~~([^~\n]+)~~", r"\1", t)  # a PDF converter's strike-through (health warns of it)
    # __strong__, _emphasis_ and *emphasis* only where CommonMark sees emphasis: never inside a word
    # (snake__case, file_name); a PDF's italic title comes as "_1._ _Citations_"
    t = re.sub(r"(?<![\w_])__(?=[^_\s])(.+?)(?<=[^_\s])__(?![\w_])", r"\1", t)
    t = re.sub(r"(?<![\w_])_(?=[^_\s])(.+?)(?<=[^_\s])_(?![\w_])", r"\1", t)
    t = re.sub(r"(?<![\w*])\*(?=[^*\s])(.+?)(?<=[^*\s])\*(?![\w*])", r"\1", t)
    # a title wrapped at a hyphen ("Direct Color Re-** **placement"), not "pre- and post-processing"
    t = re.sub(r"(?<=[A-Za-z]{2})- (?!(?:and|or|to|nor)\b)(?=[a-z]{2})", "", t)
    return t.strip()


def _is_pipe_table_start(lines, i: int) -> bool:
    """A pipe table starts here: a row with "|" over a delimiter row (``|---|---|``), as GFM has it. Rows of
    pipes without one are text: the converter's debris of a figure drawn with lines and letters
    ("| <sup>|||||||</sup>", "|| 11": 11 of graphs.pdf's 12 "tables")."""
    return "|" in lines[i][2] and i + 1 < len(lines) and bool(DELIM_ROW.match(lines[i + 1][2]))


def _starts_construct(lines, i: int, markdown: bool) -> bool:
    """Does line i start a new atom (interrupting a paragraph)?"""
    line = lines[i][2]
    if _FOOTNOTE.match(line) or STRONG_BULLET.match(line):
        return True
    if not markdown:
        return False
    return bool(
        HEADING.match(line) or _FENCE.match(line) or _COMMENT.match(line) or OPEN_TAG.match(line)
        or _is_pipe_table_start(lines, i)
    )


def _toc_entries(lines, i: int, j: int) -> list[tuple[int, int]] | None:
    """Lines ``[i, j)`` of one paragraph split into table-of-contents entries, each ending with a
    line that has dot leaders and a page number (an entry's title may wrap onto lines before it);
    None unless every line is such a line, or at least 3 of the lines and half of them are."""
    ends = [k for k in range(i, j) if _TOC_LINE.search(lines[k][2])]
    if not ends or (len(ends) < j - i and (len(ends) < 3 or 2 * len(ends) < j - i)):
        return None  # a paragraph of such lines only (a chapter's entry alone: "4 Shell Builtins . . . 48"), or 3+
    # a chapter's line in bold, without leaders ("**2** **Coding** **model** **description** **9**"), ends an entry too
    ends = sorted({*ends, *(k for k in range(i, j) if EMPHASIS_ONLY.match(lines[k][2])
                            and TOC_NUMBERED.match(clean_title(lines[k][2])))})
    out, a = [], i
    for k in ends:
        out.append((a, k + 1))
        a = k + 1
    if a < j:  # lines after the last entry: the end of a wrapped entry, or text; their own atom
        out.append((a, j))
    return out


def read_atoms(text: str, markdown: bool = True) -> list[Atom]:
    """The atoms of ``text`` in order (``markdown=False``: paragraphs, list items and footnotes only); every blank
    line belongs to the atom before it (leading blank lines to the first)."""
    lines = split_lines(text)
    atoms: list[Atom] = []
    i = 0
    n = len(lines)
    lead = 0  # leading blank characters, given to the first atom
    while i < n:
        if _blank(lines[i][2]):
            if atoms:
                atoms[-1].end = lines[i][1]
            else:
                lead = lines[i][1]
            i += 1
            continue
        i, found = _read_atoms(lines, i, markdown)
        atoms.extend(found)
    if atoms and lead:
        atoms[0].start = 0
    return _toc_neighbours(lines, atoms) if any(a.kind == "toc" for a in atoms) else atoms


def _atom(lines, i: int, j: int, kind: str, **kw) -> Atom:
    """An atom covering ``lines[i:j]``."""
    return Atom(lines[i][0], lines[j - 1][1], kind, **kw)


def _read_atoms(lines, i: int, markdown: bool) -> tuple[int, list[Atom]]:
    """(the line after them, the atoms starting at the non-blank line ``i``): one, or a table of contents' entries."""
    if markdown:
        found = _construct(lines, i)
        if found is not None:
            kind, j, kw = found
            return j, [_atom(lines, i, j, kind, **kw)]
    line = lines[i][2]
    kind = "footnote" if _FOOTNOTE.match(line) else "item" if BULLET.match(line) else "paragraph"
    j, n = i + 1, len(lines)
    while j < n and not _blank(lines[j][2]) and not _starts_construct(lines, j, markdown):
        j += 1
    entries = _toc_entries(lines, i, j) if kind in ("paragraph", "item") else None  # "1. Scope ..... 3"
    if entries:  # a table of contents: one block per entry, not one paragraph of pages
        return j, [_atom(lines, a, b, "toc") for a, b in entries]
    return j, [_atom(lines, i, j, kind)]


def _construct(lines, i: int) -> tuple[str, int, dict] | None:
    """(kind, end line, fields) of the Markdown construct line ``i`` opens (fenced code, a table or figure tag, a
    layout comment, a heading, a pipe table), or None for a paragraph, an item or a footnote."""
    line = lines[i][2]
    if m := _FENCE.match(line):
        return "code", _fence_end(lines, i, m.group(1)), {}
    if m := OPEN_TAG.match(line):
        tag = m.group(1).lower()
        return tag, _tag_end(lines, i, tag), {}
    if _COMMENT.match(line):
        return "layout", _comment_end(lines, i), {}
    if m := HEADING.match(line):
        return "heading", i + 1, {"level": len(m.group(1)), "title": clean_title(m.group(2))}
    if _is_pipe_table_start(lines, i):
        j = i + 1
        while j < len(lines) and not _blank(lines[j][2]) and "|" in lines[j][2]:
            j += 1
        return "table", j, {}
    return None


def _fence_end(lines, i: int, fence: str) -> int:
    """The line after the code fence ``fence`` opened at line ``i`` closes (the text's end when it never does)."""
    n = len(lines)
    j = i + 1
    while j < n and not lines[j][2].strip().startswith(fence[0] * len(fence)):
        j += 1
    return min(j + 1, n)


def _tag_end(lines, i: int, tag: str) -> int:
    """The line after the one closing ``<tag>`` opened at line ``i``; unclosed, the next blank line."""
    close = re.compile(rf"</{tag}\s*>", re.IGNORECASE)
    n = len(lines)
    j = i
    while j < n and not close.search(lines[j][2]):
        j += 1
    if j < n:
        return j + 1
    j = i + 1
    while j < n and not _blank(lines[j][2]):
        j += 1
    return j


def _comment_end(lines, i: int) -> int:
    """The line after the one closing the comment opened at line ``i`` (unclosed: the comment is one line)."""
    n = len(lines)
    j = i
    while j < n and "-->" not in lines[j][2]:
        j += 1
    return i + 1 if j == n else j + 1


def line_index(lines) -> dict[int, int]:
    """Line number of each line's start offset."""
    return {s: n for n, (s, _, _) in enumerate(lines)}


def text_rows(lines, index: dict[int, int], a: Atom) -> list[int]:
    """Atom ``a``'s lines with text (past the blank or whitespace-only lines the first atom takes)."""
    n, out = index[a.start], []
    while n < len(lines) and lines[n][0] < a.end:
        if lines[n][2].strip():
            out.append(n)
        n += 1
    return out


def _toc_neighbours(lines, atoms: list[Atom]) -> list[Atom]:
    """``atoms`` with each paragraph of contents lines without dot leaders ("**Vclear** **235**", "**IV**
    **Terminal** **types** **237**": a title and a page number on every line) that stands next to contents
    entries cut into contents entries, one per line: a run of such paragraphs (layout comments between
    allowed) with an entry before or after it. Each line needs a contents signal: it is all in bold or
    italics, or its text before the number is no sentence (``_PROSE_NUMBER``: "born in 1921", "Our team has
    12") and its page number does not go back from the entries' before it nor past those after it. The run
    is taken from the entries on, paragraph by paragraph, up to the first one without. Alone, such a line
    is text ("Version 5")."""
    rows = _ContentsRows(lines, atoms)
    cand = [a.kind in ("paragraph", "item") and rows.contents_like(k) for k, a in enumerate(atoms)]
    accepted = [False] * len(atoms)
    i = 0
    while i < len(atoms):
        if not cand[i]:
            i += 1
            continue
        j = i
        while j < len(atoms) and (cand[j] or atoms[j].kind == "layout"):
            j += 1
        while not cand[j - 1]:  # layout after the run is not part of it
            j -= 1
        for k in _accepted_run(atoms, cand, rows, i, j):
            accepted[k] = True
        i = j
    return _entries_cut(lines, atoms, rows.rows, accepted)


class _ContentsRows:
    """The text lines of each atom, read as contents lines: their page numbers and whether each is one."""

    def __init__(self, lines, atoms: list[Atom]) -> None:
        index = line_index(lines)
        self.lines = lines
        self.rows = [text_rows(lines, index, a) for a in atoms]

    def page(self, n: int) -> int | None:
        """Line ``n``'s page number (None: roman, or none)."""
        m = _PAGE_NUMBER.search(clean_title(self.lines[n][2]))
        return int(m.group(1)) if m else None

    def signal(self, n: int) -> bool:
        """Line ``n`` is a bold line, or one whose text before the number is no sentence."""
        return bool(EMPHASIS_ONLY.match(self.lines[n][2])) or not _PROSE_NUMBER.search(clean_title(self.lines[n][2]))

    def contents_like(self, k: int) -> bool:
        """Every text line of atom ``k`` is a title and a page number, with a contents signal."""
        return all(TOC_NUMBERED.match(clean_title(self.lines[n][2])) and self.signal(n) for n in self.rows[k])

    def fits(self, k: int, low: int | None, high: int | None) -> bool:
        """Atom ``k``'s plain lines' page numbers lie in order between the neighbours' ``low`` and ``high``."""
        nums = [self.page(n) for n in self.rows[k] if not EMPHASIS_ONLY.match(self.lines[n][2])]
        seq = [x for x in (low, *nums, high) if x is not None]
        return all(x <= y for x, y in zip(seq, seq[1:]))

    def last_page(self, k: int) -> int | None:
        """The last page number of atom ``k``'s lines."""
        return next((p for n in reversed(self.rows[k]) if (p := self.page(n)) is not None), None)

    def first_page(self, k: int) -> int | None:
        """The first page number of atom ``k``'s lines."""
        return next((p for n in self.rows[k] if (p := self.page(n)) is not None), None)


def _accepted_run(atoms: list[Atom], cand: list[bool], rows: _ContentsRows, i: int, j: int) -> list[int]:
    """The contents-like atoms of the run ``[i, j)`` taken as entries: from the entries before it on while each
    paragraph's page numbers do not go back, and from those after it back."""
    b = next((k for k in range(i - 1, -1, -1) if atoms[k].kind != "layout"), None)
    f = next((k for k in range(j, len(atoms)) if atoms[k].kind != "layout"), None)
    run = [k for k in range(i, j) if cand[k]]
    out: list[int] = []
    if b is not None and atoms[b].kind == "toc":
        low = rows.last_page(b)
        for k in run:
            if not rows.fits(k, low, None):
                break
            out.append(k)
            low = rows.last_page(k) if rows.last_page(k) is not None else low
    if f is not None and atoms[f].kind == "toc":
        high = rows.first_page(f)
        for k in reversed(run):
            if not rows.fits(k, None, high):
                break
            out.append(k)
            high = rows.first_page(k) if rows.first_page(k) is not None else high
    return out


def _entries_cut(lines, atoms: list[Atom], rows: list[list[int]], accepted: list[bool]) -> list[Atom]:
    """``atoms`` with each accepted one cut into contents entries, one per line (blank lines go with the line
    before)."""
    out: list[Atom] = []
    for k, a in enumerate(atoms):
        if not accepted[k]:
            out.append(a)
            continue
        pieces = rows[k]
        for m, n in enumerate(pieces):
            end = lines[pieces[m + 1]][0] if m + 1 < len(pieces) else a.end
            out.append(Atom(lines[n][0] if m else a.start, end, "toc"))
    return out
