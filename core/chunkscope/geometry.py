"""Where a PDF document's text sits on its pages: compact per-line boxes and ``chunk_boxes``.

Built at ingest (``chunkscope.ingest.pdfmap``) by aligning the Markdown that pymupdf4llm produced
with PyMuPDF's own words. Stored in ``Document.geometry`` as *runs*: a run is a character range
``[start, end)`` of ``Document.text`` whose visible characters all sit on one line of one page,
with that line part's box. Markdown syntax without ink (``#``, ``|``, ``**``, ``<!-- PageBreak -->``)
belongs to no run. Boxes are PDF points, origin top-left, in the *unrotated* page's coordinates
(as PyMuPDF reports them); ``Page.rotation`` and the matrix to the rendered page are kept per page.

JSON shape (``Geometry.to_dict``)::

    {"version": 1,
     "pages": [[width, height, rotation, a, b, c, d, e, f], ...],  # unrotated size, rotation, rotation_matrix
     "runs": [[start, end, page, x0, y0, x1, y1], ...],             # page counted from 1
     "coverage": {"mapped": int, "mappable": int, "pages": [[mapped, mappable], ...]}}

This module is pure Python (no PyMuPDF): reports and the page view read it without the PDF.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Sequence

VERSION = 1
Box = list  # [page, x0, y0, x1, y1]


@dataclass
class Geometry:
    """Where the text is on the PDF's pages: page sizes and text runs (span, page, box), with their coverage."""
    pages: list[tuple[float, ...]] = field(default_factory=list)
    runs: list[tuple[int, int, int, float, float, float, float]] = field(default_factory=list)
    mapped: int = 0
    mappable: int = 0
    page_coverage: list[tuple[int, int]] = field(default_factory=list)  # (mapped, mappable) per page
    _starts: list[int] | None = field(default=None, repr=False, compare=False)

    @property
    def coverage(self) -> float | None:
        """Mapped / mappable visible characters (None when nothing is mappable)."""
        return self.mapped / self.mappable if self.mappable else None

    def page_size(self, page: int) -> tuple[float, float]:
        """(width, height) of 1-based ``page`` as rendered (rotation applied)."""
        w, h, rot = self.pages[page - 1][:3]
        return (h, w) if int(rot) % 180 else (w, h)

    def to_dict(self) -> dict[str, Any]:
        """The geometry as JSON (versioned)."""
        return {
            "version": VERSION,
            "pages": [[round(v, 3) for v in p] for p in self.pages],
            "runs": [list(r) for r in self.runs],
            "coverage": {"mapped": self.mapped, "mappable": self.mappable,
                         "pages": [list(pc) for pc in self.page_coverage]},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Geometry":
        """Geometry from :meth:`to_dict`'s JSON; ``ValueError`` for another version."""
        if int(d.get("version", VERSION)) != VERSION:
            raise ValueError(f"geometry version {d.get('version')!r} is not {VERSION}")
        runs = [(int(r[0]), int(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5]), float(r[6]))
                for r in d.get("runs", [])]
        cov = d.get("coverage") or {}
        return cls(pages=[tuple(float(v) for v in p) for p in d.get("pages", [])], runs=runs,
                   mapped=int(cov.get("mapped", 0)), mappable=int(cov.get("mappable", 0)),
                   page_coverage=[(int(m), int(n)) for m, n in cov.get("pages", [])])

    def runs_in(self, start: int, end: int) -> list[tuple[int, int, int, float, float, float, float]]:
        """Runs overlapping ``[start, end)`` in text order."""
        if self._starts is None or len(self._starts) != len(self.runs):
            self._starts = [r[0] for r in self.runs]
        i = max(0, bisect_right(self._starts, start) - 1)
        out = []
        while i < len(self.runs) and self.runs[i][0] < end:
            r = self.runs[i]
            if r[1] > start:
                out.append(r)
            i += 1
        return out


def _clip(run: Sequence, start: int, end: int) -> tuple[float, float]:
    """x-range of the part of ``run`` inside [start, end): characters interpolated along the line."""
    rs, re_, _, x0, _, x1, _ = run
    n = max(1, re_ - rs)
    a = (max(start, rs) - rs) / n
    b = (min(end, re_) - rs) / n
    return x0 + (x1 - x0) * a, x0 + (x1 - x0) * b


def boxes_for(geometry: Geometry | None, start: int, end: int, merge: bool = True) -> list[Box]:
    """Boxes ``[page, x0, y0, x1, y1]`` covering text ``[start, end)`` (see ``chunk_boxes``)."""
    if geometry is None or end <= start:
        return []
    out: list[list[float]] = []
    for run in geometry.runs_in(start, end):
        x0, x1 = _clip(run, start, end)
        if x1 - x0 <= 0.01:
            continue
        box = [run[2], round(x0, 1), round(run[4], 1), round(x1, 1), round(run[6], 1)]
        if merge and out and _mergeable(out[-1], box):
            prev = out[-1]
            out[-1] = [prev[0], min(prev[1], box[1]), min(prev[2], box[2]), max(prev[3], box[3]),
                       max(prev[4], box[4])]
        else:
            out.append(box)
    return [[int(b[0]), *b[1:]] for b in out]


def _mergeable(a: Sequence[float], b: Sequence[float], tol: float = 12.0) -> bool:
    """Two boxes of one column: same page, same left and right edges (within ``tol``), adjacent
    or overlapping vertically (gap under one line height). Merged boxes keep reports small."""
    if a[0] != b[0]:
        return False
    if abs(a[1] - b[1]) > tol or abs(a[3] - b[3]) > tol:
        return False
    line = max(b[4] - b[2], 1.0)
    return b[2] - a[4] <= line * 0.8 and a[2] - b[4] <= line * 0.8


def chunk_boxes(doc: Any, start: int, end: int, merge: bool = True) -> list[Box]:
    """Where chunk ``[start, end)`` of ``doc`` sits: ``[[page, x0, y0, x1, y1], ...]``.

    Pages counted from 1, PDF points, origin top-left, unrotated page coordinates as PyMuPDF
    reports them. One box per line part (consecutive lines of one column merged when
    ``merge``); a chunk that crosses a page break has boxes on both pages. ``[]`` for a document
    without geometry (not a PDF) and for a chunk made only of inkless markup.
    """
    return boxes_for(getattr(doc, "geometry", None), start, end, merge=merge)


def boxes_pages(boxes: Sequence[Sequence[float]]) -> list[int]:
    """Sorted distinct pages of ``boxes``."""
    return sorted({int(b[0]) for b in boxes})


def to_display(geometry: Geometry, box: Sequence[float]) -> tuple[float, float, float, float]:
    """A stored (unrotated) box -> (x0, y0, x1, y1) on the page as rendered (rotation applied)."""
    page = int(box[0])
    p = geometry.pages[page - 1]
    if len(p) < 9 or int(p[2]) % 360 == 0:
        return float(box[1]), float(box[2]), float(box[3]), float(box[4])
    a, b, c, d, e, f = p[3:9]
    xs, ys = [], []
    for x, y in ((box[1], box[2]), (box[3], box[2]), (box[1], box[4]), (box[3], box[4])):
        xs.append(a * x + c * y + e)
        ys.append(b * x + d * y + f)
    return min(xs), min(ys), max(xs), max(ys)
