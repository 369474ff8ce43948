"""Markdown -> blocks and headings: the rules Block Integrity protects (DESIGN section 3).

One builder for every source (PDF, Markdown, HTML converted to Markdown, plain text), so BI means the same thing
whatever the document came from. The text is first cut into *atoms* (a heading line, a
paragraph, a list item, a table, a figure, a code fence, a footnote, a layout comment);
every blank line belongs to the atom before it. Atoms are then grouped into blocks:

- tables (``<Table>...</Table>`` or pipe tables), figures (``<Figure>...</Figure>``) and
  fenced code are one block each; a table above ``max_table_tokens`` (1000) is split at row
  lines into sub-tables, each a block (the header rows stay with the first);
- a run of consecutive short paragraphs / list items (each < ``short_tokens``, 100) is one
  block (``group``, or ``list`` when all are list items), closed when it would exceed
  ``max_group_tokens`` (1000) so a long list never becomes one giant block, and before a line that is
  only a bold title ("6. **Encodings**": a heading a PDF converter wrote as text);
- every other paragraph is its own block, except a table of contents (lines ending with dot
  leaders and a page number): each of its entries is a ``toc`` block, so a chunk boundary between
  two entries breaks nothing (it was one paragraph several pages long);
- a footnote (a line starting ``\\* `` or ``[^n]:``) joins the block before it;
- a heading (and any headings directly under it) joins the block that follows it;
- each layout comment (``<!-- PageBreak -->``, ``<!-- PageHeader ... -->``, footers, page
  numbers) is a ``layout`` block of its own (as in the paper's reference data); a heading never
  joins content across one. Any other ``<!-- ... -->`` comment (an XML sample, a note) is content.

When page spans are given, blocks are built page by page and never cross a page boundary;
``join_continued`` (the PDF loader calls it) then joins a block that goes on over a page break.
Blocks tile the text exactly: consecutive, no gap, no overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from chunkscope.document import Block, Heading, Span, check_tiling
from chunkscope.text.markup import LINK_TARGET
from chunkscope.text.tokens import count_many

# what a block kind is called where a user reads it: a "heading" block is the heading and the text
# under it (the paper's title-body pair), so cutting it rarely cuts the heading line itself
KIND_WORDS = {"heading": "section", "group": "paragraph group", "toc": "contents entry"}
# what a block of that kind is, where the word alone does not say (chunkscope.text.blocks)
KIND_NOTES = {"heading": "a heading and the text under it",
              "group": "short paragraphs and list items in a row, kept together as one block",
              "list": "short list items in a row, kept together as one block"}


def kind_word(kind: str) -> str:
    """A block kind as a user reads it (``KIND_WORDS``)."""
    return KIND_WORDS.get(kind, kind)


SHORT_TOKENS = 100
MAX_TABLE_TOKENS = 1000
MAX_GROUP_TOKENS = 1000

KINDS = ("heading", "paragraph", "group", "list", "table", "figure", "code", "footnote", "toc", "layout")

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#+)(?:[ \t]+(.*?))?[ \t]*$")
# a layout comment: a page break, a running header/footer or a page number as converters write
# them (pymupdf4llm and our PDF loader: ``<!-- PageBreak -->``, ``<!-- PageHeader: … -->``; Azure
# Document Intelligence, the paper's corpus: ``<!-- PageFooter="…" -->``, ``<!-- PageNumber="3" -->``;
# ``<!-- page 12 -->``, ``<!-- 12 of 40 -->``). Any other ``<!-- … -->`` (an XML or HTML sample in
# the text, an author's note) is document content: it stays in a paragraph like the text around it.
_COMMENT = re.compile(
    r"^\s*<!--\s*(?:page[ _-]?(?:break|header|footer|number)\b"
    r"|(?:page\s*)?[-–]?\s*\d{1,5}\s*[-–]?\s*(?:(?:of|/)\s*\d{1,5}\s*)?-->)",
    re.IGNORECASE,
)
_OPEN_TAG = re.compile(r"^\s*<(table|figure)\b[^>]*>", re.IGNORECASE)
_FOOTNOTE = re.compile(r"^\s{0,3}(?:\\\*[ \t]|\[\^[^\]\s]+\]:)")
_BULLET = re.compile(r"^\s*(?:[-*+]|[_*]{0,2}[•·▪●◦‣▸▹○◯–—][_*]{0,2}|\(?\d{1,3}[.)]|\(?[A-Za-z][.)]|\([ivxlcdmIVXLCDM]{1,6}\))[ \t]+\S")
_STRONG_BULLET = re.compile(r"^\s*(?:[-*+]|[_*]{0,2}[•·▪●◦‣▸▹○◯][_*]{0,2})[ \t]+\S")
# a table-of-contents line: dot leaders (". . . ." or "....") and a page number, arabic or roman, at its end
_TOC_LINE = re.compile(r"(?:(?:\.[ \t]?){4,}|(?:\. ){2,}\.)[ \t]*[_*]*[ \t]*(?:\d{1,4}|[ivxlc]{1,6})[ \t]*[_*]*[ \t]*$",
                       re.IGNORECASE)
# a line that is all emphasis: a bold or italic title (the outline may make a heading of it)
_EMPHASIS_ONLY = re.compile(r"^\s*(?:(?:\*\*|__)[^*_\n]+(?:\*\*|__)\s*|_[^_\n]+_\s*)+$")
# a contents line without dot leaders, emphasis removed: a title and an arabic page number ("Vclear 235",
# "IV Terminal types 237"); a contents entry only inside a table of contents (``_toc_entries``, ``_toc_neighbours``)
_TOC_NUMBERED = re.compile(r"^(?=[^\n]*[^\W\d_])[^\n]{0,100}[^\s.,;:!?]\s+\d{1,4}$")
# the page number ending a contents line (emphasis removed)
_PAGE_NUMBER = re.compile(r"(\d{1,4})\s*$")
# text before a line's closing number that reads as a sentence, not a title: two lower-case words ("born in
# 1921", "Our team has 12"), or a line starting in lower case ("and the first release came out in 2001")
_PROSE_NUMBER = re.compile(r"(?:^[a-z]|\b[a-z]+\s+[a-z]+\s+\d{1,4}$)")
_DELIM_ROW = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)+\|?\s*$|^\s*\|\s*:?-{3,}:?\s*\|\s*$")


@dataclass
class _Atom:
    start: int
    end: int
    kind: str  # heading | paragraph | item | table | figure | code | footnote | layout
    level: int = 0
    title: str = ""
    tokens: int = 0


def _lines(text: str) -> list[tuple[int, int, str]]:
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


def _clean_title(raw: str) -> str:
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
    return "|" in lines[i][2] and i + 1 < len(lines) and bool(_DELIM_ROW.match(lines[i + 1][2]))


def _starts_construct(lines, i: int, markdown: bool) -> bool:
    """Does line i start a new atom (interrupting a paragraph)?"""
    line = lines[i][2]
    if _FOOTNOTE.match(line) or _STRONG_BULLET.match(line):
        return True
    if not markdown:
        return False
    return bool(
        _HEADING.match(line) or _FENCE.match(line) or _COMMENT.match(line) or _OPEN_TAG.match(line)
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
    ends = sorted({*ends, *(k for k in range(i, j) if _EMPHASIS_ONLY.match(lines[k][2])
                            and _TOC_NUMBERED.match(_clean_title(lines[k][2])))})
    out, a = [], i
    for k in ends:
        out.append((a, k + 1))
        a = k + 1
    if a < j:  # lines after the last entry: the end of a wrapped entry, or text; their own atom
        out.append((a, j))
    return out


def _atoms(text: str, markdown: bool = True) -> list[_Atom]:
    """The atoms of ``text`` in order (``markdown=False``: paragraphs, list items and footnotes only); every blank
    line belongs to the atom before it (leading blank lines to the first)."""
    lines = _lines(text)
    atoms: list[_Atom] = []
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


def _atom(lines, i: int, j: int, kind: str, **kw) -> _Atom:
    """An atom covering ``lines[i:j]``."""
    return _Atom(lines[i][0], lines[j - 1][1], kind, **kw)


def _read_atoms(lines, i: int, markdown: bool) -> tuple[int, list[_Atom]]:
    """(the line after them, the atoms starting at the non-blank line ``i``): one, or a table of contents' entries."""
    if markdown:
        found = _construct(lines, i)
        if found is not None:
            kind, j, kw = found
            return j, [_atom(lines, i, j, kind, **kw)]
    line = lines[i][2]
    kind = "footnote" if _FOOTNOTE.match(line) else "item" if _BULLET.match(line) else "paragraph"
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
    if m := _OPEN_TAG.match(line):
        tag = m.group(1).lower()
        return tag, _tag_end(lines, i, tag), {}
    if _COMMENT.match(line):
        return "layout", _comment_end(lines, i), {}
    if m := _HEADING.match(line):
        return "heading", i + 1, {"level": len(m.group(1)), "title": _clean_title(m.group(2))}
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


def _line_index(lines) -> dict[int, int]:
    """Line number of each line's start offset."""
    return {s: n for n, (s, _, _) in enumerate(lines)}


def _text_rows(lines, index: dict[int, int], a: _Atom) -> list[int]:
    """Atom ``a``'s lines with text (past the blank or whitespace-only lines the first atom takes)."""
    n, out = index[a.start], []
    while n < len(lines) and lines[n][0] < a.end:
        if lines[n][2].strip():
            out.append(n)
        n += 1
    return out


def _toc_neighbours(lines, atoms: list[_Atom]) -> list[_Atom]:
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

    def __init__(self, lines, atoms: list[_Atom]) -> None:
        index = _line_index(lines)
        self.lines = lines
        self.rows = [_text_rows(lines, index, a) for a in atoms]

    def page(self, n: int) -> int | None:
        """Line ``n``'s page number (None: roman, or none)."""
        m = _PAGE_NUMBER.search(_clean_title(self.lines[n][2]))
        return int(m.group(1)) if m else None

    def signal(self, n: int) -> bool:
        """Line ``n`` is a bold line, or one whose text before the number is no sentence."""
        return bool(_EMPHASIS_ONLY.match(self.lines[n][2])) or not _PROSE_NUMBER.search(_clean_title(self.lines[n][2]))

    def contents_like(self, k: int) -> bool:
        """Every text line of atom ``k`` is a title and a page number, with a contents signal."""
        return all(_TOC_NUMBERED.match(_clean_title(self.lines[n][2])) and self.signal(n) for n in self.rows[k])

    def fits(self, k: int, low: int | None, high: int | None) -> bool:
        """Atom ``k``'s plain lines' page numbers lie in order between the neighbours' ``low`` and ``high``."""
        nums = [self.page(n) for n in self.rows[k] if not _EMPHASIS_ONLY.match(self.lines[n][2])]
        seq = [x for x in (low, *nums, high) if x is not None]
        return all(x <= y for x, y in zip(seq, seq[1:]))

    def last_page(self, k: int) -> int | None:
        """The last page number of atom ``k``'s lines."""
        return next((p for n in reversed(self.rows[k]) if (p := self.page(n)) is not None), None)

    def first_page(self, k: int) -> int | None:
        """The first page number of atom ``k``'s lines."""
        return next((p for n in self.rows[k] if (p := self.page(n)) is not None), None)


def _accepted_run(atoms: list[_Atom], cand: list[bool], rows: _ContentsRows, i: int, j: int) -> list[int]:
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


def _entries_cut(lines, atoms: list[_Atom], rows: list[list[int]], accepted: list[bool]) -> list[_Atom]:
    """``atoms`` with each accepted one cut into contents entries, one per line (blank lines go with the line
    before)."""
    out: list[_Atom] = []
    for k, a in enumerate(atoms):
        if not accepted[k]:
            out.append(a)
            continue
        pieces = rows[k]
        for m, n in enumerate(pieces):
            end = lines[pieces[m + 1]][0] if m + 1 < len(pieces) else a.end
            out.append(_Atom(lines[n][0] if m else a.start, end, "toc"))
    return out


def _split_table(text: str, a: _Atom, max_tokens: int) -> list[tuple[int, int]]:
    """Cut an oversized table at row lines into pieces of at most ``max_tokens`` (when possible)."""
    rows = _lines(text[a.start:a.end])
    if len(rows) < 2:
        return [(a.start, a.end)]
    counts = count_many([text[a.start + s:a.start + e] for s, e, _ in rows])
    # header rows (a pipe header and its delimiter row, or an opening tag line) stay together
    head = 1
    while head < len(rows) and (_DELIM_ROW.match(rows[head][2]) or head == 1 and _OPEN_TAG.match(rows[0][2])):
        head += 1
    pieces: list[tuple[int, int]] = []
    cur_start, cur_tok, data_rows = 0, sum(counts[:head]), 0
    for k in range(head, len(rows)):
        if data_rows and cur_tok + counts[k] > max_tokens:
            pieces.append((cur_start, k))
            cur_start, cur_tok, data_rows = k, 0, 0
        cur_tok += counts[k]
        data_rows += 1
    pieces.append((cur_start, len(rows)))
    # never leave a piece that is only blank lines / a closing tag: fold tiny tail into previous
    if len(pieces) > 1 and sum(counts[pieces[-1][0]:]) < 5:
        last = pieces.pop()
        pieces[-1] = (pieces[-1][0], last[1])
    return [(a.start + rows[s][0], a.start + rows[e - 1][1]) for s, e in pieces]


# a paragraph that is only a bold title, perhaps numbered ("6. **Encodings**", "**Quoting strings**"): a heading the
# converter wrote as text (``_run_in_title``)
_RUN_IN_TITLE = re.compile(r"^\s*(?:\d{1,3}[.)][ \t]+)?(?:(?:\*\*|__)[^*_\n]+(?:\*\*|__)[ \t]*)+$")


def _run_in_titles(atoms: list[_Atom], text: str) -> set[int]:
    """The atoms that are a title the converter wrote as a bold paragraph, followed by prose: the short paragraphs
    from each on are a group of their own. Not a contents line ("**Vclear** **235**": a title and a page number),
    nor an item of a list of bold titles ("1. **Apples**", "2. **Pears**": a title next to another title)."""
    title = [a.kind in ("paragraph", "item") and bool(_RUN_IN_TITLE.match(text[a.start:a.end].strip())) for a in atoms]
    return {k for k, a in enumerate(atoms)
            if title[k] and not (k and title[k - 1]) and k + 1 < len(atoms) and atoms[k + 1].kind == "paragraph"
            and not title[k + 1] and not _TOC_NUMBERED.match(_clean_title(text[a.start:a.end].strip()))}


def _build_range(
    text: str,
    offset: int,
    markdown: bool,
    short_tokens: int,
    max_table_tokens: int,
    max_group_tokens: int,
) -> tuple[list[Block], list[Heading]]:
    """Blocks tiling ``text`` (a page, or the whole text, starting at ``offset``) and its headings."""
    atoms = _atoms(text, markdown)
    if not atoms:
        return ([Block(offset, offset + len(text), "paragraph")] if text else []), []
    need = [a for a in atoms if a.kind in ("paragraph", "item", "table", "footnote")]
    for a, t in zip(need, count_many([text[a.start:a.end] for a in need])):
        a.tokens = t
    units = _units(atoms, text, short_tokens, max_table_tokens, max_group_tokens)
    blocks = _headings_joined(units, offset, offset + len(text))
    # the first atom absorbed leading blanks; make sure the tiling starts at the range start
    if blocks and blocks[0].start != offset:
        b = blocks[0]
        blocks[0] = Block(offset, b.end, b.kind)
    return blocks, _headings(atoms, text, offset)


def _headings(atoms: list[_Atom], text: str, offset: int) -> list[Heading]:
    """The heading atoms' lines (leading and trailing space left out) as headings."""
    headings = []
    for a in atoms:
        if a.kind == "heading":
            line = text[a.start:a.end].rstrip()
            lead = len(line) - len(line.lstrip())
            headings.append(Heading(offset + a.start + lead, offset + a.start + len(line), a.level, a.title))
    return headings


class _Units:
    """Pass 1 of the block builder: atoms to units ``[start, end, kind]``, a run of short paragraphs and items
    (footnotes joining it) kept as one."""

    def __init__(self) -> None:
        self.units: list[list] = []
        self.run: list[_Atom] = []
        self.run_tokens = 0

    def add_short(self, a: _Atom) -> None:
        """Add a short paragraph or item to the run."""
        self.run.append(a)
        self.run_tokens += a.tokens

    def add_footnote(self, a: _Atom) -> None:
        """A footnote joins the run, else the unit before (not a layout comment nor a heading), else stands alone."""
        if self.run:
            self.run.append(a)
        elif self.units and self.units[-1][2] not in ("layout", "heading"):
            self.units[-1][1] = a.end
        else:
            self.units.append([a.start, a.end, "footnote"])

    def flush(self) -> None:
        """Close the run: one unit (a ``list`` of items only, else a ``group``; one atom is a ``paragraph``)."""
        run = self.run
        if run:
            kinds = {a.kind for a in run if a.kind != "footnote"}
            if len(run) == 1 or len([a for a in run if a.kind != "footnote"]) == 1:
                kind = "list" if kinds == {"item"} else "paragraph"
            else:
                kind = "list" if kinds == {"item"} else "group"
            self.units.append([run[0].start, run[-1].end, kind])
        self.run, self.run_tokens = [], 0


def _units(atoms: list[_Atom], text: str, short_tokens: int, max_table_tokens: int,
           max_group_tokens: int) -> list[list]:
    """Pass 1: the units ``[start, end, kind]`` of ``atoms``: runs of short items grouped (closed before a run-in
    title and when over ``max_group_tokens``), oversized tables split, every other atom its own."""
    pass1 = _Units()
    titles = _run_in_titles(atoms, text)
    for k, a in enumerate(atoms):
        if a.kind in ("paragraph", "item") and a.tokens < short_tokens:
            if pass1.run and (pass1.run_tokens + a.tokens > max_group_tokens or k in titles):
                pass1.flush()
            pass1.add_short(a)
        elif a.kind == "footnote":
            pass1.add_footnote(a)
        else:
            pass1.flush()
            if a.kind == "table" and a.tokens > max_table_tokens:
                pass1.units.extend([s, e, "table"] for s, e in _split_table(text, a, max_table_tokens))
            else:
                pass1.units.append([a.start, a.end, "list" if a.kind == "item" else a.kind])
    pass1.flush()
    return pass1.units


def _headings_joined(units: list[list], offset: int, end: int) -> list[Block]:
    """Pass 2: the units as blocks (at ``offset``), each run of headings joined to the block that follows it (a
    layout block stays apart; headings at the end run to ``end``)."""
    blocks: list[Block] = []
    pending: int | None = None  # start of a run of headings waiting for their body
    for s, e, kind in units:
        if kind == "heading":
            if pending is None:
                pending = s
            continue
        if pending is not None:
            if kind == "layout":
                blocks.append(Block(offset + pending, offset + s, "heading"))
                blocks.append(Block(offset + s, offset + e, kind))
            else:
                blocks.append(Block(offset + pending, offset + e, "heading"))
            pending = None
            continue
        blocks.append(Block(offset + s, offset + e, kind))
    if pending is not None:
        blocks.append(Block(offset + pending, end, "heading"))
    return blocks


def build_blocks(
    text: str,
    pages: Sequence[Span] | None = None,
    *,
    markdown: bool = True,
    short_tokens: int = SHORT_TOKENS,
    max_table_tokens: int = MAX_TABLE_TOKENS,
    max_group_tokens: int = MAX_GROUP_TOKENS,
) -> tuple[list[Block], list[Heading]]:
    """Blocks tiling ``text`` and the headings found in it.

    ``pages``: when they tile the text, blocks are built per page and never cross a page.
    ``markdown=False`` (plain text): only paragraphs, list items and footnotes are recognised.
    """
    ranges = [(0, len(text))]
    if pages:
        try:
            check_tiling([(p.start, p.end) for p in pages], len(text), what="pages")
            ranges = [(p.start, p.end) for p in pages]
        except ValueError:
            pass
    blocks: list[Block] = []
    headings: list[Heading] = []
    for s, e in ranges:
        b, h = _build_range(text[s:e], s, markdown, short_tokens, max_table_tokens, max_group_tokens)
        blocks.extend(b)
        headings.extend(h)
    check_tiling([(b.start, b.end) for b in blocks], len(text), what="blocks")
    return blocks, headings


_TEXT_KINDS = ("paragraph", "group", "list")
# words a sentence does not end on: text stopping on one goes on over the page whatever the next page starts with
_GOES_ON = frozenset("a an the and or nor but of to in on at by for with from into onto than that which whose "
                     "is are was were be been its their this these those as if".split())
_CLOSERS = ".!?:;…\"”’)]"
# a typesetter's note that a block goes on over the page: Sphinx's "(continues on next page)" and
# "(continued from previous page)" around a code listing
_CONTINUATION_NOTE = re.compile(r"^\W*(?:<u>)?\W*(?:continues on (?:the )?next page|continued from (?:the )?previous page)"
                                r"\W*(?:</u>)?\W*$", re.IGNORECASE)


def _is_heading_only(body: str) -> bool:
    lines = [ln for ln in body.split("\n") if ln.strip()]
    return bool(lines) and all(_HEADING.match(ln) for ln in lines)


def _continues(text: str, a: Block, b: Block) -> bool:
    """Does block ``b`` (the first content of a page) go on with ``a`` (the last content of the page
    before)? A code block followed by a code block; a heading left alone at the page's foot and its
    body; text that stops without closing punctuation (or on a hyphen) and goes on in lower case."""
    if a.kind == "code" and b.kind == "code":
        return True
    body_a = text[a.start:a.end]
    if a.kind == "heading" and _is_heading_only(body_a):
        return b.kind != "heading"
    tail = body_a.rstrip().rstrip("*_`").rstrip()
    last_line = tail.rsplit("\n", 1)[-1]
    if a.kind in (*_TEXT_KINDS, "heading") and _BULLET.match(last_line) and b.kind == "list":
        return True  # a list going on over the page
    if a.kind not in (*_TEXT_KINDS, "heading") or b.kind not in _TEXT_KINDS:
        return False
    return goes_on(body_a, text[b.start:b.end])


def goes_on(before: str, after: str) -> bool:
    """Does text ``after`` go on with the sentence ``before`` stops in? When ``before`` stops without
    closing punctuation (or on a hyphen) and ``after`` goes on in lower case; or, whatever ``after``
    starts with, when ``before`` stops on a comma, on a word no sentence ends on ("a", "the", "with",
    "of"…), inside an open bracket, or before a quotation mark or bracket opening ``after``. Never
    when ``after`` starts a heading, a table, a tag or a bullet item."""
    tail = before.rstrip().rstrip("*_`").rstrip()
    last_line = tail.rsplit("\n", 1)[-1]
    head = after.lstrip().lstrip("*_`")
    if not tail or not head or head.startswith(("#", "|", "<", "- ", "* ", "+ ")):
        return False
    if tail[-1] in "-\u00ad":  # a word hyphenated across the break
        return head[0].islower()
    if tail[-1] in _CLOSERS:
        return False
    if head[0].islower():
        return True
    words = re.findall(r"[A-Za-z]+", last_line[-40:])
    return (tail[-1] == ","                                              # "…, | Expressions"
            or (bool(words) and words[-1] in _GOES_ON)                   # "…with a | Control"
            or last_line.count("[") > last_line.count("]") or last_line.count("(") > last_line.count(")")
            or (head[0] in "‘“'\"([`" and tail[-1].isalpha()))       # "…in these locales | ‘[a-dx-z]’ is"


def join_continued(text: str, blocks: list[Block], pages: Sequence[Span]) -> tuple[list[Block], int]:
    """``blocks`` (built page by page) with each block that goes on over a page break joined with its
    continuation, the layout blocks between (page break, running footer and header) included:
    ``(blocks, joins)``. The joined block keeps the kind of its first part. See :func:`_continues`.

    The paper's parsed documents end every block at a page break, so a chunker cutting at every
    page break never breaks a block; a paragraph that runs on to the next page is one block here, so
    cutting it mid-sentence at the page break counts as breaking it."""
    starts = {p.start for p in pages[1:]}
    joins: list[tuple[int, int]] = []
    for i, blk in enumerate(blocks):
        if blk.start not in starts or i == 0:
            continue
        left = i - 1
        while left >= 0 and _page_furniture(text, blocks[left]):
            left -= 1
        right = i
        while right < len(blocks) and _page_furniture(text, blocks[right]):
            right += 1
        if left >= 0 and right < len(blocks) and _continues(text, blocks[left], blocks[right]):
            joins.append((left, right))
    if not joins:
        return blocks, 0
    out: list[Block] = []
    merge_to = dict(joins)  # a page of layout only between the two parts is reached from both its edges: once
    i = 0
    while i < len(blocks):
        j = i
        while j in merge_to:  # a chain: a paragraph over three pages
            j = merge_to[j]
        out.append(Block(blocks[i].start, blocks[j].end, blocks[i].kind))
        i = j + 1
    check_tiling([(b.start, b.end) for b in out], len(text), what="blocks")
    return out, len(merge_to)


def _page_furniture(text: str, block: Block) -> bool:
    """``block`` is page furniture that may stand between a block's two parts: a layout block, or a typesetter's
    "(continues on next page)"."""
    return block.kind == "layout" or bool(_CONTINUATION_NOTE.match(text[block.start:block.end].strip()))


# a reference entry's label at a line start: "[4] N. D. Birell…", "[Knu73] D. E. Knuth…" (not a link "[text](url)")
_ENTRY = re.compile(r"^\s*\[([^\]\s][^\]]{0,15})\](?!\()[ \t]+\S")
# a reference list's key label: letters, then a year ("Knu73", "GJ79", "ABC+19", "Smith2001a")
_KEY_LABEL = re.compile(r"[A-Za-z][A-Za-z+.\-]*(?:\d{2}|\d{4})[a-z]?")
_MAX_CONTINUATION = 2  # paragraphs a hanging indent's cut makes of an entry after its first line


def _visible_width(line: str) -> int:
    """A Markdown line's length as printed: without link targets and emphasis marks."""
    return len(re.sub(r"[*_`]", "", LINK_TARGET.sub("]", line)).strip())


def _in_sequence(a: str | None, b: str | None) -> bool:
    """Do labels ``a`` then ``b`` follow each other in a reference list: [n] then [n+1], or two key labels?"""
    if a is None or b is None:
        return False
    if a.isdigit() and b.isdigit():
        return int(b) == int(a) + 1
    return a != b and bool(_KEY_LABEL.fullmatch(a)) and bool(_KEY_LABEL.fullmatch(b))


def rejoin_entries(text: str) -> tuple[str, int]:
    """Markdown with each labelled entry of a reference list ("[4] …", "[Knu73] …") that a blank line cut
    after its first line joined again. An entry is part of a list when its label follows the label before
    it or goes on to the next one ([n] then [n+1]; two key labels, letters and a year: ``_in_sequence``).
    Between two entries in sequence, the one or two paragraphs after the first (``_MAX_CONTINUATION``, what a
    hanging indent's cut makes) join it when its line was cut mid-entry: it goes on (``goes_on``), stops
    without closing punctuation, the continuation starts in lower case, or, a line ending on a period
    ("… Master's thesis." / "Royal Institute…"), it is about as wide as the continuation's lines and the
    continuation ends as an entry does. After a list's last entry, a paragraph joins while its sentence goes
    on (at most two) or, ending the page, when it stops without closing punctuation. A continuation is a
    paragraph or a lettered or numbered item ("E. Beutler, M. A. Lichtman…", initials), never a bullet
    item, a one-line title in bold or italics (unless the entry's sentence goes on into it: "… In" /
    "_Proceedings of …_"), a heading, a table, code or a layout comment. Prose citing "[3]" and "[7]",
    numbered steps ("[1] Open the box." / "Check that…"), task lists ("[x] …") stay as they are.

    pymupdf4llm starts a new paragraph where PyMuPDF starts a new text block, and an entry's hanging
    indent puts its first line in a block of its own: "[4] N. D. Birell and P. C. W. Davies, Quantum
    Fields in" / blank line / "Curved Space (Cambridge University Press, 1982)." A rule for any
    paragraph that stops mid-sentence is not enough (the entry's first line often ends on a period) and
    too much (the converter also cuts formulas, table notes and index entries into paragraphs that way).
    Returns the text and how many blank lines were removed."""
    if "[" not in text or "\n\n" not in text:
        return text, 0
    refs = _EntryAtoms(text)
    if len(refs.entries) < 2:
        return text, 0
    cuts = [cut for i in refs.listed() for cut in refs.cuts(i)]  # (end of an atom's text, start of the next)
    if not cuts:
        return text, 0
    out, pos = [], 0
    for s, e in cuts:
        out.append(text[pos:s] + "\n")
        pos = e
    out.append(text[pos:])
    return "".join(out), len(cuts)


class _EntryAtoms:
    """A text's atoms read for reference entries: each one's first and last text line, its entry label (a
    paragraph starting "[4] …") and the label of its last entry."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = lines = _lines(text)
        index = _line_index(lines)
        self.atoms = atoms = _atoms(text)
        self.rows = [_text_rows(lines, index, a) for a in atoms]
        self.firsts = [lines[r[0]][2] if r else "" for r in self.rows]
        self.lasts = [lines[r[-1]][2] if r else "" for r in self.rows]
        self.labels = [m.group(1) if a.kind == "paragraph" and (m := _ENTRY.match(f)) else None
                       for a, f in zip(atoms, self.firsts)]
        # the label of an atom's last entry, where its last line starts one ("[5] …\n[6] Sam Anzaroot…": [6])
        self.ends = [(m.group(1) if (m := _ENTRY.match(last)) else None) if lab else None
                     for lab, last in zip(self.labels, self.lasts)]
        self.entries = [k for k, lab in enumerate(self.labels) if lab is not None]

    def listed(self) -> list[int]:
        """The entries of a reference list (in sequence with the one before or after) whose last line starts an
        entry: a hanging indent cuts an entry after its first line."""
        pairs = [(i, j) for i, j in zip(self.entries, self.entries[1:]) if _in_sequence(self.ends[i], self.labels[j])]
        listed = {i for i, _ in pairs} | {j for _, j in pairs}
        return [i for i in self.entries if i in listed and self.ends[i] is not None]

    def body(self, k: int) -> str:
        """Atom ``k``'s text."""
        return self.text[self.atoms[k].start:self.atoms[k].end]

    def part(self, k: int) -> bool:
        """May atom ``k`` be the continuation of an entry?"""
        if self.atoms[k].kind not in ("paragraph", "item") or self.labels[k] is not None \
                or _STRONG_BULLET.match(self.firsts[k]):
            return False
        # a title (a line all in bold or italics) alone; an entry's line going on in italics is no title
        return not (_EMPHASIS_ONLY.match(self.firsts[k]) and len(self.rows[k]) == 1
                    and not goes_on(self.body(k - 1), self.firsts[k]))

    def closed(self, k: int) -> bool:
        """Atom ``k``'s text ends on closing punctuation."""
        return self.body(k).rstrip().rstrip("*_`").rstrip()[-1:] in _CLOSERS

    def cut_after_first_line(self, i: int, j: int, over_page: bool = False) -> bool:
        """Entry ``i`` stops mid-entry; atoms ``i+1 .. j-1`` go on with it."""
        if goes_on(self.body(i), self.firsts[i + 1]) or not self.closed(i) \
                or self.firsts[i + 1].lstrip("*_` ")[:1].islower():
            return True
        # a first line ending on a period ("… Master's thesis." / "Royal Institute…"): a line about as full as
        # the continuation's lines (a wrapped line, not a short sentence), the continuation ending as an entry
        # does or going on over the page
        width = _visible_width(self.lasts[i])
        return all(width >= 0.8 * _visible_width(self.lines[n][2]) for k in range(i + 1, j) for n in self.rows[k]) \
            and (self.closed(j - 1) or sum(len(self.rows[k]) for k in range(i + 1, j)) > 1 or over_page)

    def cuts(self, i: int) -> list[tuple[int, int]]:
        """The blank lines to remove after entry ``i``: (end of an atom's text, start of the next)."""
        j = i + 1
        while j < len(self.atoms) and j - i <= _MAX_CONTINUATION and self.part(j):  # at most the cap
            j += 1
        if j == i + 1:
            return []
        return [(self.atoms[k].start + len(self.body(k).rstrip()), self.atoms[k + 1].start) for k in self.joined(i, j)]

    def joined(self, i: int, j: int) -> range:
        """The atoms from entry ``i`` on that join the atom after them, the continuation candidates ending at
        ``j``."""
        if j < len(self.atoms) and self.labels[j] is not None:  # between two entries
            if not _in_sequence(self.ends[i], self.labels[j]) or not self.cut_after_first_line(i, j):
                return range(0)
            return range(i, j - 1)
        if j == i + 2 and all(a.kind == "layout" for a in self.atoms[j:]) and not self.closed(i + 1) \
                and self.cut_after_first_line(i, j, over_page=True):
            return range(i, i + 1)  # the page's last entry, going on over the page: "…[Fundamental Principles of"
        k = i  # after the last entry: as long as the sentence goes on
        while k + 1 < j and k - i < _MAX_CONTINUATION and goes_on(self.body(k), self.firsts[k + 1]):
            k += 1
        return range(i, k)


def code_spans(text: str) -> list[tuple[int, int]]:
    """The fenced code blocks of Markdown ``text`` (the fence lines included), as the block builder sees them."""
    if "```" not in text and "~~~" not in text:
        return []
    return [(a.start, a.end) for a in _atoms(text) if a.kind == "code"]


def blocks_by_kind(blocks: Sequence[Block]) -> dict[str, int]:
    """Block counts per kind, in a stable order."""
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
    order = {k: i for i, k in enumerate(KINDS)}
    return dict(sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
