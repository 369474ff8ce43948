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
``chunkscope.text.continuation.join_continued`` (the PDF loader calls it) then joins a block that goes on over a page break.
Blocks tile the text exactly: consecutive, no gap, no overlap.
"""

from __future__ import annotations

import re
from typing import Sequence

from chunkscope.document import Block, Heading, Span, check_tiling
from chunkscope.text.atoms import DELIM_ROW, OPEN_TAG, TOC_NUMBERED, Atom, clean_title, read_atoms, split_lines
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


def _split_table(text: str, a: Atom, max_tokens: int) -> list[tuple[int, int]]:
    """Cut an oversized table at row lines into pieces of at most ``max_tokens`` (when possible)."""
    rows = split_lines(text[a.start:a.end])
    if len(rows) < 2:
        return [(a.start, a.end)]
    counts = count_many([text[a.start + s:a.start + e] for s, e, _ in rows])
    # header rows (a pipe header and its delimiter row, or an opening tag line) stay together
    head = 1
    while head < len(rows) and (DELIM_ROW.match(rows[head][2]) or head == 1 and OPEN_TAG.match(rows[0][2])):
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


def _run_in_titles(atoms: list[Atom], text: str) -> set[int]:
    """The atoms that are a title the converter wrote as a bold paragraph, followed by prose: the short paragraphs
    from each on are a group of their own. Not a contents line ("**Vclear** **235**": a title and a page number),
    nor an item of a list of bold titles ("1. **Apples**", "2. **Pears**": a title next to another title)."""
    title = [a.kind in ("paragraph", "item") and bool(_RUN_IN_TITLE.match(text[a.start:a.end].strip())) for a in atoms]
    return {k for k, a in enumerate(atoms)
            if title[k] and not (k and title[k - 1]) and k + 1 < len(atoms) and atoms[k + 1].kind == "paragraph"
            and not title[k + 1] and not TOC_NUMBERED.match(clean_title(text[a.start:a.end].strip()))}


def _build_range(
    text: str,
    offset: int,
    markdown: bool,
    short_tokens: int,
    max_table_tokens: int,
    max_group_tokens: int,
) -> tuple[list[Block], list[Heading]]:
    """Blocks tiling ``text`` (a page, or the whole text, starting at ``offset``) and its headings."""
    atoms = read_atoms(text, markdown)
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


def _headings(atoms: list[Atom], text: str, offset: int) -> list[Heading]:
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
        self.run: list[Atom] = []
        self.run_tokens = 0

    def add_short(self, a: Atom) -> None:
        """Add a short paragraph or item to the run."""
        self.run.append(a)
        self.run_tokens += a.tokens

    def add_footnote(self, a: Atom) -> None:
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


def _units(atoms: list[Atom], text: str, short_tokens: int, max_table_tokens: int,
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


def code_spans(text: str) -> list[tuple[int, int]]:
    """The fenced code blocks of Markdown ``text`` (the fence lines included), as the block builder sees them."""
    if "```" not in text and "~~~" not in text:
        return []
    return [(a.start, a.end) for a in read_atoms(text) if a.kind == "code"]


def blocks_by_kind(blocks: Sequence[Block]) -> dict[str, int]:
    """Block counts per kind, in a stable order."""
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.kind] = counts.get(b.kind, 0) + 1
    order = {k: i for i, k in enumerate(KINDS)}
    return dict(sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
