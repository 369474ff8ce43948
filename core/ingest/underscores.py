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
from typing import Any, Sequence

_THIN = 1.2  # points: a rule is at most this thick
_TOUCH = 1.2  # points: a rule's end and the word's edge meet within this
_SHORT, _LONG = 0.15, 0.7  # a rule's length, in heights of the words' boxes (a form's blank is longer)
_LOW = 0.6  # the rule lies below this share of the word box's height (the baseline, not the middle)

# pymupdf.PDF_REDACT_IMAGE_NONE, PDF_REDACT_LINE_ART_REMOVE_IF_COVERED, PDF_REDACT_TEXT_NONE: keep images and
# text, remove only the paths inside the rule's box
_KEEP_IMAGES, _LINE_ART_COVERED, _KEEP_TEXT = 0, 1, 1

Rule = tuple[str, str, tuple[float, float, float, float]]  # the word before, the word after, the rule's box


def _lower_part(w: Sequence[Any], y: float) -> bool:
    y0, y1 = float(w[1]), float(w[3])
    return y0 + _LOW * (y1 - y0) <= y <= y1 + 0.5


def underscore_rules(page: Any, words: Sequence[Sequence[Any]]) -> list[Rule]:
    """The rules on ``page`` that stand for an underscore between two of its ``words`` (PyMuPDF's
    ``get_text("words")``): ``(word before, word after, box)`` for each, in the page's order."""
    if not words:
        return []
    try:
        boxes = [r for kind, r in page.get_bboxlog() if "path" in kind]
    except Exception:
        return []
    out: list[Rule] = []
    for x0, y0, x1, y1 in boxes:
        if y1 - y0 > _THIN or x1 <= x0:
            continue
        y = (y0 + y1) / 2
        for a in words:
            h = float(a[3]) - float(a[1])
            if not (abs(float(a[2]) - x0) <= _TOUCH and _SHORT * h <= x1 - x0 <= _LONG * h and _lower_part(a, y)):
                continue
            b = next((w for w in words if abs(float(w[0]) - x1) <= _TOUCH and _lower_part(w, y)), None)
            if b is not None:
                out.append((str(a[4]), str(b[4]), (x0, y0, x1, y1)))
                break
    return out


def hide_rules(page: Any, rules: Sequence[Rule]) -> bool:
    """Remove the rules' paths from the page (in memory; its text and images stay). False when the page
    cannot be changed (then the converter sees them, as before)."""
    import pymupdf

    try:
        for _, _, (x0, y0, x1, y1) in rules:
            page.add_redact_annot(pymupdf.Rect(x0 - 0.3, y0 - 0.3, x1 + 0.3, y1 + 0.3))
        page.apply_redactions(images=_KEEP_IMAGES, graphics=_LINE_ART_COVERED, text=_KEEP_TEXT)
        return True
    except Exception:
        return False


# the gap between the two words in the Markdown: a space, or a space between two runs of the same
# emphasis ("**glp** **vertex**", "_v_ _size_", "`a` `b`"), which the underscore joins into one run
_GAP = r"(?: |\*\* \*\*|_ _|` `)"


def restore(md: str, rules: Sequence[Rule]) -> tuple[str, int]:
    """The page's Markdown with an ``_`` in the gap of each rule (the end of the word before it, one
    space, the start of the word after it; the first such gap not yet filled), and how many were
    written. A rule whose gap is not found changes nothing."""
    made = 0
    for before, after, _ in rules:
        tail, head = re.search(r"[^\W_]+$", before), re.match(r"[^\W_]+", after)
        if not tail or not head:
            continue
        a, b = tail.group(0), head.group(0)
        pattern = rf"(?<![^\W_]){re.escape(a)}{_GAP}{re.escape(b)}(?![^\W_])"
        md, n = re.subn(pattern, f"{a}_{b}", md, count=1)  # letters and digits: no escapes in it
        made += n
    return md, made
