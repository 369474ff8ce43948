"""Text a PDF's layout cut, joined again: a block that goes on over a page break (:func:`join_continued`, the
sentence test :func:`goes_on`), and a reference list's entry that a hanging indent cut after its first line
(:func:`rejoin_entries`)."""

from __future__ import annotations

import re
from typing import Sequence

from chunkscope.document import Block, Span, check_tiling
from chunkscope.text.atoms import (
    BULLET,
    EMPHASIS_ONLY,
    HEADING,
    STRONG_BULLET,
    line_index,
    read_atoms,
    split_lines,
    text_rows,
)
from chunkscope.text.markup import LINK_TARGET

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
    return bool(lines) and all(HEADING.match(ln) for ln in lines)


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
    if a.kind in (*_TEXT_KINDS, "heading") and BULLET.match(last_line) and b.kind == "list":
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
        self.lines = lines = split_lines(text)
        index = line_index(lines)
        self.atoms = atoms = read_atoms(text)
        self.rows = [text_rows(lines, index, a) for a in atoms]
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
                or STRONG_BULLET.match(self.firsts[k]):
            return False
        # a title (a line all in bold or italics) alone; an entry's line going on in italics is no title
        return not (EMPHASIS_ONLY.match(self.firsts[k]) and len(self.rows[k]) == 1
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
