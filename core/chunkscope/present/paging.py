"""Document paging: the views (pages, or windows of about N characters) the text views step through."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Sequence


def windows(text_length: int, pages: Sequence[Sequence[int]], max_chars: int = 12000,
            cuts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Character ranges to render a long document piece by piece, tiling ``[0, text_length)``.

    With pages: one range per page (text before the first page joins it, text after the last
    joins the last; a page over twice ``max_chars`` is split like unpaged text). Without pages:
    windows of about ``max_chars`` that end on one of ``cuts`` (block boundaries) when one is
    near. The one place the app decides how a document is cut for display (block view, Compare,
    Chunk inspector all use it through ``document_views``).
    """

    if text_length <= 0:
        return []
    cuts = sorted({int(x) for x in cuts if 0 < x < text_length})

    def split(a: int, b: int) -> list[tuple[int, int]]:
        out = []
        while b - a > max_chars:
            target = a + max_chars
            i = bisect.bisect_right(cuts, target) - 1
            m = cuts[i] if i >= 0 and cuts[i] > a + max_chars // 3 else target
            out.append((a, m))
            a = m
        out.append((a, b))
        return out

    if not pages:
        return split(0, text_length)
    edges = sorted({0, text_length, *(min(max(int(p[0]), 0), text_length) for p in pages[1:])})
    out: list[tuple[int, int]] = []
    for a, b in zip(edges, edges[1:]):
        out.extend(split(a, b) if b - a > 2 * max_chars else [(a, b)])
    return out


@dataclass(frozen=True)
class View:
    """A piece of the document to render: characters ``[start, end)`` and the blocks that start
    in it, ``first..last`` (inclusive; ``last < first`` when none does), with a label."""

    label: str
    start: int
    end: int
    first: int
    last: int

    @property
    def has_blocks(self) -> bool:
        """True when the view holds at least one block."""
        return self.last >= self.first


def document_views(doc: Any, max_chars: int = 12000) -> list[View]:
    """``windows()`` of a Document, labelled ("page 3", "page 3 (2/2)", "part 2 of 9") with block ranges.

    Views that hold neither a block start nor any non-blank text are left out."""

    text = doc.text
    ranges = windows(len(text), [[p.start, p.end] for p in doc.pages], max_chars, cuts=doc.split_points)
    starts = [b.start for b in doc.blocks]
    page_starts = [p.start for p in doc.pages]
    raw = []
    for k, (a, b) in enumerate(ranges):
        first = bisect.bisect_left(starts, a) if k else 0
        last = bisect.bisect_left(starts, b) - 1 if k < len(ranges) - 1 else len(starts) - 1
        if last < first and not text[a:b].strip():
            continue
        page = (max(1, bisect.bisect_right(page_starts, a))) if doc.pages else None
        raw.append((page, a, b, first, last))
    out: list[View] = []
    n = len(raw)
    for k, (page, a, b, first, last) in enumerate(raw):
        if page is None:
            label = f"part {k + 1} of {n}"
        else:
            same = [r for r in raw if r[0] == page]
            label = f"page {page}" if len(same) == 1 else f"page {page} ({same.index(raw[k]) + 1}/{len(same)})"
        out.append(View(label, a, b, first, last))
    return out


def view_index(views: Sequence[View], pos: int) -> int:
    """Index of the view holding character ``pos`` (the last one for ``pos`` past the end)."""

    if not views:
        return 0
    return max(0, min(len(views) - 1, bisect.bisect_right([v.start for v in views], pos) - 1))
