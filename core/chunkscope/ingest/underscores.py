"""Underscores drawn as rules, not glyphs.

LaTeX's ``\\_`` in its default (OT1) font encoding, and texinfo's, is no character: it is a short rule
drawn on the baseline between two letters. The text layer then has a gap where the underscore is
("glp create graph"), and MuPDF, which takes a line through a character's box above its baseline for a
line through the text, flags the letter the rule touches as struck out, so pymupdf4llm wrote
"glp ~~c~~ reate ~~g~~ raph" (GLPK's graphs.pdf: 677 ``~~``).

``underscore_rules`` finds such rules on a page: a thin horizontal path, 0.15-0.7 of the text's height
long, in the lower part of a line of text, that fills the gap between two words and overlaps neither.
``hide_rules`` removes them from the page in memory before it is converted (the rendered page, made from
the file's bytes, keeps them), so no letter is struck out; ``restore`` writes an ``_`` into each
such gap of the page's Markdown ("glp_create_graph", "**glp_vertex**").
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any, Sequence

from chunkscope.ingest.pdf.open import PDF_ERRORS, PDF_READ_ERRORS

_THIN = 1.2  # points: a rule is at most this thick
_TOUCH = 1.2  # points: a rule's end and the word's edge meet within this
_SHORT, _LONG = 0.15, 0.7  # a rule's length, in heights of the words' boxes (a form's blank is longer)
_LOW = 0.6  # the rule lies below this share of the word box's height (the baseline, not the middle)

# pymupdf.PDF_REDACT_IMAGE_NONE, PDF_REDACT_LINE_ART_REMOVE_IF_COVERED, PDF_REDACT_TEXT_NONE: keep images and
# text, remove only the paths inside the rule's box
_KEEP_IMAGES, _LINE_ART_COVERED, _KEEP_TEXT = 0, 1, 1

# the word before, the word after, the rule's box, and which adjacent pair of those two words on the page it is
# (0: the first "set name" in reading order), so that the "_" goes into that gap of the Markdown, not another
Rule = tuple[str, str, tuple[float, float, float, float], int]


def _lower_part(w: Sequence[Any], y: float) -> bool:
    y0, y1 = float(w[1]), float(w[3])
    return y0 + _LOW * (y1 - y0) <= y <= y1 + 0.5


def _underlined(word: Sequence[Any], thin: Sequence[tuple[float, float, float, float]], y: float) -> bool:
    """A thin rule at height ``y`` runs under most of ``word``: the word is underlined (ulem's ``\\uline``
    draws a rule under every word and every space), so a short rule beside it is the underline's, not an
    underscore."""
    wx0, wx1 = float(word[0]), float(word[2])
    return any(abs((r[1] + r[3]) / 2 - y) <= 1.0 and min(r[2], wx1) - max(r[0], wx0) > 0.5 * (wx1 - wx0)
               for r in thin)


def _joined(before: str, after: str) -> tuple[str, str] | None:
    """The letters an underscore joins: the end of the word before it and the start of the word after it
    ("(glp", "create);" -> "glp", "create"); None when either has none."""
    tail, head = re.search(r"[^\W_]+$", before), re.match(r"[^\W_]+", after)
    return (tail.group(0), head.group(0)) if tail and head else None


def _pair_index(words: Sequence[Sequence[Any]], i: int, after: str) -> int:
    """How many times the letters ``words[i]`` and ``after`` join stand next to each other (as two adjacent
    words) before position ``i``: which of the Markdown's gaps between them is this one."""
    pair = _joined(str(words[i][4]), after)
    return sum(1 for k in range(i) if _joined(str(words[k][4]), str(words[k + 1][4])) == pair)


def underscore_rules(page: Any, words: Sequence[Sequence[Any]]) -> list[Rule]:
    """The rules on ``page`` that stand for an underscore between two of its ``words`` (PyMuPDF's
    ``get_text("words")``): ``(word before, word after, box, pair index)`` for each, in the page's order.
    Underlined words (a rule under the word as well) are not joined."""
    if not words:
        return []
    try:
        boxes = [r for kind, r in page.get_bboxlog() if "path" in kind]
    except PDF_READ_ERRORS:
        return []
    thin = [(float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in boxes if r[3] - r[1] <= _THIN and r[2] > r[0]]
    by_end = sorted(range(len(words)), key=lambda i: float(words[i][2]))  # words by right edge, then left
    ends = [float(words[i][2]) for i in by_end]
    by_start = sorted(range(len(words)), key=lambda i: float(words[i][0]))
    starts = [float(words[i][0]) for i in by_start]

    def near(order: list[int], xs: list[float], x: float) -> list[int]:  # word indexes with an edge at x
        return sorted(order[bisect_left(xs, x - _TOUCH): bisect_right(xs, x + _TOUCH)])

    out: list[Rule] = []
    for x0, y0, x1, y1 in thin:
        y = (y0 + y1) / 2
        for i in near(by_end, ends, x0):
            a = words[i]
            h = float(a[3]) - float(a[1])
            if not (_SHORT * h <= x1 - x0 <= _LONG * h and _lower_part(a, y)):
                continue
            b = next((words[j] for j in near(by_start, starts, x1) if _lower_part(words[j], y)), None)
            if b is not None and not _underlined(a, thin, y) and not _underlined(b, thin, y):
                out.append((str(a[4]), str(b[4]), (x0, y0, x1, y1), _pair_index(words, i, str(b[4]))))
            break
    return out


def hide_rules(page: Any, rules: Sequence[Rule]) -> bool:
    """Remove the rules' paths from the page (in memory; its text and images stay). False when the page
    cannot be changed (then the converter sees them, as before)."""
    import pymupdf

    try:
        for _, _, (x0, y0, x1, y1), _ in rules:
            page.add_redact_annot(pymupdf.Rect(x0 - 0.3, y0 - 0.3, x1 + 0.3, y1 + 0.3))
        page.apply_redactions(images=_KEEP_IMAGES, graphics=_LINE_ART_COVERED, text=_KEEP_TEXT)
        return True
    except PDF_ERRORS:
        return False


# the gap between the two words in the Markdown: a space, or a space between two runs of the same
# emphasis ("**glp** **vertex**", "_v_ _size_", "`a` `b`"), which the underscore joins into one run
_GAP = r"(?: |\*\* \*\*|_ _|` `)"


def restore(md: str, rules: Sequence[Rule]) -> tuple[str, int]:
    """The page's Markdown with an ``_`` in the gap of each rule (the end of the word before it, one
    space, the start of the word after it), and how many were written. The gap filled is the rule's
    pair index-th "a b" of the page ("Call set name ... Then call set_name": the second); a rule
    whose gap is not found changes nothing."""
    made = 0
    filled: dict[tuple[str, str], list[int]] = {}  # pair indexes already filled, per pair of words
    for before, after, _, index in sorted(rules, key=lambda r: (r[0], r[1], r[3])):
        pair = _joined(before, after)
        if pair is None:
            continue
        a, b = pair
        pattern = rf"(?<![^\W_]){re.escape(a)}{_GAP}{re.escape(b)}(?![^\W_])"
        done = filled.setdefault((a, b), [])
        gaps = list(re.finditer(pattern, md))  # the unfilled ones: a filled gap no longer matches
        k = index - sum(1 for j in done if j < index)
        if not 0 <= k < len(gaps):
            continue
        m = gaps[k]
        md = md[:m.start()] + f"{a}_{b}" + md[m.end():]  # letters and digits: no escapes in it
        done.append(index)
        made += 1
    return md, made
