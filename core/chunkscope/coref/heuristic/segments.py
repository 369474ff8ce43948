"""What the rules read and what is parsed: the text cut into blocks (comment-only blocks and fenced code left
out), and the windows around the pronouns that the rules can use (``Segment``), so the rest is never parsed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chunkscope.coref.heuristic.lexicon import FIRST_PERSON, PRONOUNS, RELATIVE
from chunkscope.coref.heuristic.rules import RULES, Rules

MAX_BLOCK_CHARS = 20_000  # longer blocks (no blank lines) are cut at line ends
LIST_ITEM = re.compile(r"^\s*(\(?[a-z0-9]{1,4}[).]|[-·•*])\s")
_COMMENT_BLOCK = re.compile(r"^\s*(<!--.*?-->\s*)+$", re.S)
_BLOCK_SEP = re.compile(r"\n[ \t]*\n")


def _pieces(block: str) -> list[tuple[int, int]]:
    """Cut a block longer than MAX_BLOCK_CHARS at line ends (else spaces) so the parser's memory stays small."""
    out, pos = [], 0
    while len(block) - pos > MAX_BLOCK_CHARS:
        limit = pos + MAX_BLOCK_CHARS
        cut = block.rfind("\n", pos + 1, limit)
        if cut <= pos:
            cut = block.rfind(" ", pos + 1, limit)
        cut = cut + 1 if cut > pos else limit  # cut after the newline/space
        out.append((pos, cut))
        pos = cut
    out.append((pos, len(block)))
    return out


def _blocks(text: str) -> list[tuple[int, str, str]]:
    """(offset, block text, kind) with kind "text", "heading" or "skip" (comments only, or fenced code:
    its "# comment" lines are not headings and its words are not the document's entities)."""
    from chunkscope.text.blocks import code_spans

    code = code_spans(text)  # sorted, disjoint
    ci = 0
    out: list[tuple[int, str, str]] = []
    pos = 0
    for m in list(_BLOCK_SEP.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        chunk = text[pos:end]
        while ci < len(code) and code[ci][1] <= pos:
            ci += 1
        if chunk.strip():
            if _COMMENT_BLOCK.match(chunk) or (ci < len(code) and code[ci][0] < end):
                kind = "skip"
            elif chunk.lstrip().startswith("#"):
                kind = "heading"
            else:
                kind = "text"
            out.extend((pos + a, chunk[a:b], kind) for a, b in _pieces(chunk))
        if m:
            pos = m.end()
    return out


def _words_re(words: Any) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")\b", re.I)


FORWARD_CHARS = 400  # how far after a pronoun its antecedent's next mention is looked for (Rules.forward)
# (a "that" before an article is a conjunction: "notice that the variables", not a mention of them; "such as" an example)
_FORWARD_DET = r"\b(?:(?:this|that|these|those)\s+(?!(?:the|a|an)\s)|such\s+(?!as\s))(?:[\w-]+\s+){0,3}?"
_PRONOUN_RE = _words_re(PRONOUNS)
_WORDS_RE = {(fp, fw): _words_re({**PRONOUNS, **(FIRST_PERSON if fp else {}), **({w: 0 for w in RELATIVE} if fw else {})})
             for fp in (False, True) for fw in (False, True)}


def pronoun_re(rules: Rules) -> re.Pattern[str]:
    """The words whose surroundings are parsed (:func:`segments_of`) under ``rules``."""
    return _WORDS_RE[rules.first_person, rules.forward]


@lru_cache(maxsize=4096)
def _forward_re(head: str) -> re.Pattern[str]:
    return re.compile(_FORWARD_DET + re.escape(head) + r"\b", re.I)


def next_mention(text: str, start: int, head: str) -> tuple[int, int] | None:
    """The first "this/that/these/those/such/the (up to 3 words) ``head``" in ``text[start:]`` within
    FORWARD_CHARS and before a heading, as a span."""
    stop = text.find("\n#", start, start + FORWARD_CHARS)
    m = _forward_re(head.lower()).search(
        text, start, stop if stop >= 0 else start + FORWARD_CHARS)
    return (m.start(), m.end()) if m else None


def _relative_worth_parsing(btxt: str, m: re.Match[str]) -> bool:
    """A relative pronoun is paired only when a word just before it is mentioned again after it (the parse
    then checks that it is the relative clause's noun): the others need no parse."""
    before = re.findall(r"[A-Za-z][\w-]*", btxt[max(0, m.start() - 80):m.start()])[-8:]
    return any(next_mention(btxt, m.end(), w) for w in set(before) if len(w) > 2)
_SENT_BOUND = re.compile(r"[.!?][\"')\]]*\s+")  # a sentence end as a regex sees it (conservative: no ; or :)
INTRO_CHARS = 600  # of a list's introducing block, at most this much (its end) is parsed for an item's pronouns
# a list item reads the block introducing its list only when it starts at most this far after that block's end:
# a document of numbered paragraphs ("(12) ...", recitals) is one long "list" whose far items have no lead-in
LEAD_CHARS = 2500


def reaches_lead(item_start: int, lead_end: int) -> bool:
    """A list item starting at ``item_start`` may take its pronoun's antecedent from the block introducing
    its list, which ends at ``lead_end`` (the windows parse that block only then; the resolver reads it)."""
    return item_start - lead_end <= LEAD_CHARS


@dataclass
class Segment:
    """A stretch of one block to parse; ``gap``: text before it (since the previous segment) is not parsed;
    ``reset``: a heading lies in that gap (the section changed)."""

    offset: int
    text: str
    kind: str
    gap: bool
    reset: bool
    item: bool  # the block is a list item
    level: int = 0  # a heading's level (the number of leading "#"), 0 for other blocks
    block: tuple[int, int] = (0, 0)  # the whole block's span (LEAD_CHARS is measured between blocks)


def _level(block: str) -> int:
    """A heading block's level: the number of its leading "#"."""
    head = block.lstrip()
    return len(head) - len(head.lstrip("#"))


def parent_heading(heads: list[tuple[int, Any]], level: int) -> Any:
    """Close the open headings (``(level, what)``, outermost first) that a heading of ``level`` ends; the
    ``what`` of the one left enclosing it (its parent), or None."""
    while heads and heads[-1][0] >= level:
        heads.pop()
    return heads[-1][1] if heads else None


def window_key(rules: Rules) -> tuple[Any, ...]:
    """The fields of ``rules`` that change what :func:`parse_windows` cuts (the rest only change the choices)."""
    return rules.max_sentences_back, rules.first_person, rules.forward, rules.heading_back


def read_blocks(text: str) -> list[tuple[int, str, str]]:
    """The blocks the rules read: comment-only blocks and fenced code left out."""
    return [b for b in _blocks(text) if b[2] != "skip"]


def parse_windows(text: str, rules: Rules = RULES) -> list[Segment]:
    """The stretches of ``text`` the rules need parsed (:func:`segments_of` of :func:`read_blocks`)."""
    return segments_of(read_blocks(text), rules.max_sentences_back, pronoun_re(rules), rules.heading_back)


def all_blocks(text: str) -> list[Segment]:
    """Every block the rules read, whole, as segments (to parse everything: ``resolve(text, windows=False)``)."""
    return [Segment(o, t, k, False, False, bool(LIST_ITEM.match(t)), _level(t) if k == "heading" else 0,
                    (o, o + len(t))) for o, t, k in read_blocks(text)]



def segments_of(blocks: list[tuple[int, str, str]], back: int, words: re.Pattern[str] = _PRONOUN_RE,
                heading_back: bool = False) -> list[Segment]:
    """The parts of ``blocks`` the rules can use: for each pronoun, from ``back`` sentences
    before it (within its section, or the previous section's for a pronoun in a heading when
    ``heading_back``; across blocks) to the end of its sentence; for a pronoun in a list
    item, also the end of the block introducing the list; for a pronoun in a heading when
    ``heading_back``, also the whole parent heading. Overlapping stretches merge."""
    return _as_segments(blocks, _needed(blocks, back, words, heading_back))


def _needed(blocks: list[tuple[int, str, str]], back: int, words: re.Pattern[str],
            heading_back: bool) -> list[list[tuple[int, int]]]:
    """For each block, the ``(start, end)`` stretches of it :func:`segments_of` keeps (unsorted, overlapping)."""
    need: list[list[tuple[int, int]]] = [[] for _ in blocks]
    sec = prev_sec = 0  # index of the first block of the current (previous) section
    intro = -1  # the last non-item text block of the section
    heads: list[tuple[int, int]] = []  # (level, block index) of the enclosing headings
    for bi, (off, btxt, kind) in enumerate(blocks):
        parent = None
        if kind == "heading":
            prev_sec, sec, intro = sec, bi, -1
            level = _level(btxt)
            parent = parent_heading(heads, level)
            heads.append((level, bi))
        floor = prev_sec if heading_back and kind == "heading" else sec
        lead = intro if kind != "heading" and intro >= 0 and intro != bi and LIST_ITEM.match(btxt) \
            and reaches_lead(off, blocks[intro][0] + len(blocks[intro][1])) else -1
        for m in words.finditer(btxt):
            if m.group(0).lower() in RELATIVE and not _relative_worth_parsing(btxt, m):
                continue
            if heading_back and parent is not None:
                need[parent].append((0, len(blocks[parent][1])))
            _need_sentences(need, blocks, bi, m, back, floor)
            if lead >= 0:
                need[lead].append(_lead_in(blocks[lead][1]))
        if kind == "text" and not LIST_ITEM.match(btxt):
            intro = bi
    return need


def _need_sentences(need: list[list[tuple[int, int]]], blocks: list[tuple[int, str, str]], bi: int,
                    m: re.Match[str], back: int, floor: int) -> None:
    """Add to ``need`` the pronoun ``m`` of block ``bi``'s sentence, and the ``back`` sentences before it across
    the earlier blocks down to block ``floor``."""
    btxt = blocks[bi][1]
    p = m.start()
    # end: the end of the pronoun's sentence
    e = _SENT_BOUND.search(btxt, m.end())
    need[bi].append((p, e.start() + 1 if e else len(btxt)))
    # start: ``back`` sentences back, across the section's earlier blocks
    left, j, pos = back + 1, bi, p  # sentence starts to go back, own sentence included
    while True:
        starts = [0] + [x.end() for x in _SENT_BOUND.finditer(blocks[j][1], 0, pos)]
        end = pos if j == bi else len(blocks[j][1])
        if len(starts) >= left or j <= floor:
            need[j].append((starts[-left] if len(starts) >= left else 0, end))
            return
        need[j].append((0, end))
        left -= len(starts)
        j -= 1
        pos = len(blocks[j][1])


def _lead_in(itxt: str) -> tuple[int, int]:
    """The end of the block ``itxt`` introducing a list: at most INTRO_CHARS, from a sentence start."""
    lo = max(0, len(itxt) - INTRO_CHARS)
    if lo:
        starts = [x.end() for x in _SENT_BOUND.finditer(itxt, lo)]
        lo = starts[0] if starts else lo
    return lo, len(itxt)


def _merged(spans: list[tuple[int, int]]) -> list[list[int]]:
    """``spans`` sorted, overlapping or touching ones merged."""
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def _as_segments(blocks: list[tuple[int, str, str]], need: list[list[tuple[int, int]]]) -> list[Segment]:
    """The stretches ``need`` of each block as segments, with what was left out between them."""
    out: list[Segment] = []
    gap = reset = False  # text since the previous segment was left out / a heading among it
    for (off, btxt, kind), spans in zip(blocks, need):
        if not spans:
            gap = True
            reset |= kind == "heading"
            continue
        merged = _merged(spans)
        for k, (a, b) in enumerate(merged):
            gap |= bool(btxt[:a].strip()) if k == 0 else True
            head = kind == "heading" and k == 0
            out.append(Segment(off + a, btxt[a:b], kind if k == 0 else "text", gap and bool(out), reset,
                               bool(LIST_ITEM.match(btxt)), _level(btxt) if head else 0, (off, off + len(btxt))))
            gap = reset = False
        gap = bool(btxt[merged[-1][1]:].strip())
    return out
