"""Margin notes (LaTeX's ``\\marginpar``) found in the page's words and removed from its Markdown."""

from __future__ import annotations

import re
from typing import Any, Sequence

from chunkscope.ingest.outline import lines_outside_code

MARGIN_GAP = 10.0  # points between a margin number and the text column (a line's own first word: a space)
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
