"""Map the Markdown of each PDF page back to the page: PyMuPDF words aligned to the Markdown.

``build_geometry(pdf, page_texts, page_offsets)`` -> ``chunkscope.geometry.Geometry``.

For every page, the Markdown is cut into tokens (whitespace and table pipes separate them;
Markdown syntax without ink is masked out: heading ``#``, ``**``/``_`` emphasis, backticks,
table pipes and separator rows, list markers, link targets, ``<br>``, image placeholders, the
``<!-- PageBreak -->``/``PageHeader``/``PageFooter`` comment syntax). The tokens are aligned with
``page.get_text("words")`` in three passes: (1) ``difflib`` on normalised word keys in order, with
character-level alignment inside replaced stretches (words split or joined differently); (2) the
same again between what is left on both sides (blocks pymupdf4llm moved: columns, tables);
(3) single tokens to any word with the same key. Each mapped character gets its word's line;
consecutive characters on one line form a *run* whose box is the union of their words' boxes.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from typing import Any, Sequence

from chunkscope.geometry import Geometry
from chunkscope.ingest.pdf.open import PDF_READ_ERRORS
from chunkscope.text.markup import LINK_TARGET

_MASK_PATTERNS = [
    re.compile(r"<!-- PageBreak -->"),
    re.compile(r"<!-- Page(?:Header|Footer): |(?<=\S) -->(?=\n|$)"),
    re.compile(r"\*{0,2}==>.*?<==\*{0,2}"),  # pymupdf4llm picture placeholders
    re.compile(r"\*{0,2}-{3,} (?:Start|End) of picture text -{3,}\*{0,2}(?:<br>)?"),
    re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)"),  # images
    LINK_TARGET,
    re.compile(r"(?<!\S)\[(?=[^\]\n]*\]\()"),  # link opening bracket
    re.compile(r"^#{1,6} ", re.M),  # heading markers
    re.compile(r"^\|[-:| ]+\|$", re.M),  # table separator row
    re.compile(r"<br>|</?(?:sup|sub|u|b|i|em|strong|code|span|mark|s|del|ins|small)>"),
    re.compile(r"\|"),
    re.compile(r"^[ \t]*[-*+] (?=\S)", re.M),  # list markers
    re.compile(r"^```.*$", re.M),  # code fences
    re.compile(r"\*\*|__|~~|`"),
    re.compile(r"(?<![\w])_(?=\S)|(?<=\S)_(?![\w])"),  # _italic_
    re.compile(r"(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])"),  # *italic*
]
_SEPARATORS = re.compile(r"\s+|\||<br>")


def markup_mask(text: str) -> bytearray:
    """1 for every character of ``text`` that is Markdown syntax without ink (or whitespace)."""
    mask = bytearray(len(text))
    for rx in _MASK_PATTERNS:
        for m in rx.finditer(text):
            mask[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    for i, ch in enumerate(text):
        if ch.isspace():
            mask[i] = 1
    return mask


def _norm(s: str) -> str:
    return unicodedata.normalize("NFKC", s).lower()


def _key(s: str) -> str:
    n = _norm(s)
    alnum = "".join(ch for ch in n if ch.isalnum())
    return alnum or n


class _Token:
    __slots__ = ("positions", "text", "key", "word")

    def __init__(self, positions: list[int], text: str):
        self.positions = positions
        self.text = text
        self.key = _key(text)
        self.word: int | None = None


def md_tokens(text: str, mask: bytearray) -> list[_Token]:
    """Tokens of the page's Markdown: unmasked characters between separators, with positions."""
    out: list[_Token] = []
    pos = 0
    for m in list(_SEPARATORS.finditer(text)) + [None]:
        end = m.start() if m is not None else len(text)
        if end > pos:
            positions = [i for i in range(pos, end) if not mask[i]]
            if positions:
                out.append(_Token(positions, "".join(text[i] for i in positions)))
        if m is not None:
            pos = m.end()
    return out


def _char_align(tokens: Sequence[_Token], words: Sequence[str], word_ids: Sequence[int],
                char_map: dict[int, int]) -> None:
    """Character-level alignment of a stretch of tokens with a stretch of words."""
    a_chars: list[str] = []
    a_pos: list[int] = []
    for t in tokens:
        for i, ch in zip(t.positions, t.text):
            n = _norm(ch)
            a_chars.extend(n)
            a_pos.extend([i] * len(n))
    b_chars: list[str] = []
    b_word: list[int] = []
    for w, wid in zip(words, word_ids):
        n = _norm(w)
        b_chars.extend(n)
        b_word.extend([wid] * len(n))
    sm = SequenceMatcher(None, a_chars, b_chars, autojunk=False)
    got: dict[int, int] = {}
    for blk in sm.get_matching_blocks():
        if blk.size < 3:  # a letter or two matched across a stretch is noise, not a split word
            continue
        for k in range(blk.size):
            got.setdefault(a_pos[blk.a + k], b_word[blk.b + k])
    # a token keeps its characters' words only when most of it matched (else it was text the
    # other side does not have, matched letter by letter to unrelated words)
    for t in tokens:
        hit = [i for i in t.positions if i in got]
        if len(hit) >= max(2, (len(t.positions) + 1) // 2) or len(t.positions) == len(hit) == 1:
            for i in hit:
                char_map.setdefault(i, got[i])


def _greedy_anchors(a: Sequence[str], b: Sequence[str], look: int = 24) -> list[tuple[int, int]]:
    """Pairs (i, j) with ``a[i] == b[j]``, increasing in both, found walking both sequences with a
    small look-ahead; after a mismatch a new anchor needs its next key to match too (so a common
    word does not resynchronise at the wrong place). What is left is aligned afterwards."""
    out: list[tuple[int, int]] = []
    i = j = 0
    n, m = len(a), len(b)
    while i < n and j < m:
        if a[i] == b[j]:
            out.append((i, j))
            i += 1
            j += 1
            continue

        def sure(x: int, y: int) -> bool:
            return a[x] == b[y] and (x + 1 >= n or y + 1 >= m or a[x + 1] == b[y + 1])

        jj = next((y for y in range(j + 1, min(m, j + look)) if sure(i, y)), None)
        ii = next((x for x in range(i + 1, min(n, i + look)) if sure(x, j)), None)
        if jj is not None and (ii is None or jj - j <= ii - i):
            j = jj
        elif ii is not None:
            i = ii
        else:
            i += 1
            j += 1
    return out


def align_page(text: str, words: Sequence[Sequence[Any]]) -> tuple[dict[int, int], int]:
    """Map positions of ``text`` (page Markdown) to indices of ``words``; also the mappable count."""
    mask = markup_mask(text)
    mappable = len(text) - sum(mask)
    al = _Aligner(md_tokens(text, mask), words)
    al.anchored()
    for _ in range(2):  # blocks that pymupdf4llm emitted in another order than the content stream
        left_t = [i for i, t in enumerate(al.tokens) if t.word is None]
        left_w = [j for j in range(len(words)) if not al.used[j]]
        if not left_t or not left_w:
            break
        al.align(left_t, left_w, fine=True)
    al.single_words()
    _repair_lines(text, al.tokens, words, al.wkeys, al.char_map)
    _fill_punctuation(text, mask, al.char_map)
    return al.char_map, mappable


class _Aligner:
    """The Markdown's tokens matched to the page's words, pass by pass: ``char_map`` (text position -> word index)
    and ``used`` (each word matched or not) grow as tokens find their words."""

    def __init__(self, tokens: list[_Token], words: Sequence[Sequence[Any]]) -> None:
        self.tokens = tokens
        self.words = words
        self.wkeys = [_key(str(w[4])) for w in words]
        self.char_map: dict[int, int] = {}
        self.used = [False] * len(words)

    def assign(self, t: _Token, wid: int) -> None:
        """Token ``t`` is word ``wid``."""
        t.word = wid
        self.used[wid] = True
        for i in t.positions:
            self.char_map[i] = wid

    def anchored(self) -> None:
        """In-order anchors in linear time, then each gap between anchors aligned finely."""
        pairs = _greedy_anchors([t.key for t in self.tokens], self.wkeys)
        for a, b in pairs:
            self.assign(self.tokens[a], b)
        prev_a, prev_b = -1, -1
        for a, b in pairs + [(len(self.tokens), len(self.words))]:
            if a - prev_a > 1 and b - prev_b > 1:
                self.align(list(range(prev_a + 1, a)), list(range(prev_b + 1, b)), fine=True)
            prev_a, prev_b = a, b

    def align(self, tok_idx: list[int], word_idx: list[int], fine: bool) -> None:
        """The tokens ``tok_idx`` matched to the words ``word_idx`` in order; with ``fine``, a short stretch that
        differs is aligned letter by letter (``_char_align``)."""
        sm = SequenceMatcher(None, [self.tokens[i].key for i in tok_idx], [self.wkeys[j] for j in word_idx],
                             autojunk=False)
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            if op == "equal":
                for a, b in zip(range(i1, i2), range(j1, j2)):
                    self.assign(self.tokens[tok_idx[a]], word_idx[b])
            elif op == "replace" and fine and (i2 - i1) <= 60 and (j2 - j1) <= 60:
                self._letters([self.tokens[tok_idx[a]] for a in range(i1, i2)], [word_idx[b] for b in range(j1, j2)])

    def _letters(self, ts: list[_Token], ws: list[int]) -> None:
        """Tokens ``ts`` aligned letter by letter with the words ``ws``."""
        before = len(self.char_map)
        _char_align(ts, [str(self.words[w][4]) for w in ws], ws, self.char_map)
        if len(self.char_map) > before:
            for t in ts:
                if any(i in self.char_map for i in t.positions):
                    t.word = self.char_map.get(t.positions[0], -1)
            for w in ws:
                self.used[w] = True

    def single_words(self) -> None:
        """Each token still alone: the same word nearest to where the previous token sits."""
        by_key: dict[str, list[int]] = {}
        for j, k in enumerate(self.wkeys):
            by_key.setdefault(k, []).append(j)
        prev: int | None = None
        for t in self.tokens:
            if t.word is None and t.key in by_key and any(ch.isalnum() for ch in t.key):
                cands = [j for j in by_key[t.key] if not self.used[j]] or by_key[t.key]
                y = self.words[prev][1] if prev is not None else 0.0
                self.assign(t, min(cands, key=lambda j: abs(self.words[j][1] - y)))
            if t.word is not None and t.word >= 0:
                prev = t.word


def _repair_lines(text: str, tokens: Sequence[_Token], words: Sequence[Sequence[Any]], wkeys: Sequence[str],
                  char_map: dict[int, int]) -> None:
    """A token matched to a same-key word far from the rest of its Markdown line (more than three
    word heights from where most of the line's characters sit: a common word such as "options"
    taken from a list item when the heading holding it was drawn later in the content stream)
    moves to the word with its key on that line, when there is one."""
    line_no = 0
    by_line: dict[int, list[_Token]] = {}
    last = 0
    for t in tokens:
        line_no += text.count("\n", last, t.positions[0])
        last = t.positions[0]
        by_line.setdefault(line_no, []).append(t)
    for toks in by_line.values():
        placed = [(t, char_map.get(t.positions[0])) for t in toks]
        weight: dict[float, int] = {}
        for t, w in placed:
            if w is not None:
                y = round(float(words[w][1]))
                weight[y] = weight.get(y, 0) + len(t.positions)
        if len(weight) < 2:
            continue
        y_main = max(weight, key=lambda y: weight[y])
        if 2 * weight[y_main] < sum(weight.values()):
            continue
        for t, w in placed:
            if w is None or not any(ch.isalnum() for ch in t.key):
                continue
            height = max(1.0, float(words[w][3]) - float(words[w][1]))
            if abs(float(words[w][1]) - y_main) <= 3 * height:
                continue
            cands = [j for j, k in enumerate(wkeys) if k == t.key and abs(float(words[j][1]) - y_main) <= 0.5 * height]
            if len(cands) == 1:
                for i in t.positions:
                    if char_map.get(i) == w:
                        char_map[i] = cands[0]
                t.word = cands[0]


def _fill_punctuation(text: str, mask: bytearray, char_map: dict[int, int], reach: int = 3) -> None:
    """Mappable characters left over (punctuation split off differently) next to mapped ones take
    their neighbour's word: the nearest mapped character within ``reach`` on the same text line."""
    for i in range(len(text)):
        if mask[i] or i in char_map:
            continue
        for d in range(1, reach + 1):
            for j in (i - d, i + d):
                if 0 <= j < len(text) and j in char_map and "\n" not in text[min(i, j):max(i, j) + 1]:
                    char_map[i] = char_map[j]
                    break
            if i in char_map:
                break


def page_words(page) -> list[tuple]:
    """The page's words as PyMuPDF extracts them, in content-stream order."""
    try:
        return [w for w in page.get_text("words") if str(w[4]).strip()]
    except PDF_READ_ERRORS:
        return []


def reading_order(words: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The same words line by line, top to bottom, each line left to right (a word's line: its
    baseline rounded to 2 points, so words of one printed line share it)."""
    return sorted(words, key=lambda w: (round(float(w[3]) / 2), float(w[0])))


def best_word_order(text: str, words: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
    """The page's words in the order that follows its Markdown best: the content stream's
    (``words`` as extracted) or line by line (``reading_order``), whichever gives more in-order
    anchors (``_greedy_anchors``). The stream order is right for most producers (LaTeX, Word) and
    is kept at once when it anchors nearly every token; browsers and some others paint text in
    another order (running headers last, code spans piecewise), where aligning in stream order
    pairs words with the wrong occurrence of the same word. The stream order wins ties."""
    if not words:
        return words
    tkeys = [t.key for t in md_tokens(text, markup_mask(text))]
    stream = len(_greedy_anchors(tkeys, [_key(str(w[4])) for w in words]))
    if stream >= 0.97 * len(tkeys):
        return words
    lines = reading_order(words)
    return lines if len(_greedy_anchors(tkeys, [_key(str(w[4])) for w in lines])) > stream else words


def page_runs(text: str, offset: int, page_no: int, words: Sequence[Sequence[Any]]
              ) -> tuple[list[tuple[int, int, int, float, float, float, float]], int, int]:
    """Runs of one page (absolute offsets), mapped and mappable character counts."""
    char_map, mappable = align_page(text, words)
    runs: list[tuple[int, int, int, float, float, float, float]] = []
    cur: list[Any] | None = None
    for i in sorted(char_map):
        w = words[char_map[i]]
        line = (w[5], w[6])
        if cur is not None and cur[7] == line and _same_line_box(cur, w):
            cur[1] = i + 1
            cur[3], cur[4] = min(cur[3], w[0]), min(cur[4], w[1])
            cur[5], cur[6] = max(cur[5], w[2]), max(cur[6], w[3])
        else:
            if cur is not None:
                runs.append(_run(cur, offset))
            cur = [i, i + 1, page_no, w[0], w[1], w[2], w[3], line]
    if cur is not None:
        runs.append(_run(cur, offset))
    return runs, len(char_map), mappable


def _same_line_box(cur: Sequence[Any], w: Sequence[Any]) -> bool:
    """A word joins the current run only if it continues the line to the right (text order =
    left-to-right reading); a jump back (a word met again, reordered text) starts a new run."""
    return w[0] >= cur[3] - 1.0


def _run(cur: Sequence[Any], offset: int) -> tuple[int, int, int, float, float, float, float]:
    return (cur[0] + offset, cur[1] + offset, cur[2], round(float(cur[3]), 1), round(float(cur[4]), 1),
            round(float(cur[5]), 1), round(float(cur[6]), 1))


def page_info(page) -> tuple[float, ...]:
    """(unrotated width, height, rotation, rotation_matrix a..f) of a PyMuPDF page."""
    try:
        cb = page.cropbox  # unrotated, like the word boxes
        w, h = float(cb.width), float(cb.height)
        m = page.rotation_matrix
        return (w, h, float(page.rotation), m.a, m.b, m.c, m.d, m.e, m.f)
    except PDF_READ_ERRORS:
        return (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def build_geometry(infos: Sequence[tuple[float, ...]], page_texts: Sequence[str], page_offsets: Sequence[int],
                   words_by_page: Sequence[Sequence[Any]]) -> Geometry:
    """Geometry of a whole document: page ``k`` (``page_info``: size, rotation) holds
    ``page_texts[k]`` at ``page_offsets[k]``; ``words_by_page[k]`` are its ``page_words``
    (taken before pymupdf4llm, which removes page rotations in memory), aligned in the order that
    follows the page's Markdown best (``best_word_order``)."""
    geo = Geometry()
    for k, (text, off) in enumerate(zip(page_texts, page_offsets)):
        geo.pages.append(tuple(infos[k]))
        words = best_word_order(text, words_by_page[k])
        runs, mapped, mappable = page_runs(text, off, k + 1, words) if words else ([], 0, len(text) - sum(markup_mask(text)))
        geo.runs.extend(runs)
        geo.page_coverage.append((mapped, mappable))
        geo.mapped += mapped
        geo.mappable += mappable
    return geo
