"""Chunks drawn on the PDF page: rendered pages, overlay layers, SVG and Plotly renderings.

- ``remember(doc, data)`` / ``pdf_bytes(doc)``: the PDF bytes of loaded documents, kept in a small
  LRU (a ``BoundedCache`` of ``MAX_BYTES`` in all; a file larger than that is not kept) keyed by the sha256 of
  the *file* (noted in
  ``doc.meta["pdf_sha256"]``), so pages can be rendered after the upload widget forgot the file.
  Not by the document's sha256, which is its text's: two PDFs with the same text (a form, one copy
  signed) would show each other's pages.
- ``render_page(data, page, zoom)``: PNG of one page (PyMuPDF pixmap, cached per page and zoom; at
  most ``MAX_PIXELS``, so a tiny PDF with a poster-sized page cannot take gigabytes to draw).
- ``page_layers(doc, chunking, page)``: what to draw on one page for one chunking, in rendered page
  coordinates: every chunk's boxes (one colour per chunk, its number at its first box), broken
  blocks with their cut, split pairs' mentions.
- ``page_svg(...)``: the page image with the layers as an SVG overlay (HTML; everything escaped).
- ``page_figure(...)``: the same as a Plotly figure whose chunk markers can be clicked.
- ``page_differences(doc, a, b)``: the pages where two chunkings differ most (the HTML report's
  thumbnails, drawn with ``page_svg`` on ``render_thumbnail`` JPEGs).
"""

from __future__ import annotations

import base64
import hashlib
import html
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from chunkscope.caching import BoundedCache
from chunkscope.geometry import Geometry, boxes_for, to_display
from chunkscope.present.highlight import Problems, pair_color, pair_tag
from chunkscope.report import ChunkingResult

MAX_BYTES = 200 * 1024 * 1024
DEFAULT_ZOOM = 1.5  # 108 dpi: body text reads well, a page PNG is ~100-300 KB
MAX_PIXELS = 4_000_000  # a rendered page at most (A4 at DEFAULT_ZOOM is 1.1 million): larger pages get a lower zoom
PDF_KEY = "pdf_sha256"  # doc.meta: the sha256 of the PDF file whose bytes ``remember`` kept
CUT_COLOR = "#D55E00"
FOCUS_COLOR = "#F0E442"
# one colour per chunk, cycling (adjacent chunks always differ); the cut and focus colours excluded
CHUNK_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#7F7F7F", "#8C564B", "#9467BD"]

_PDFS: BoundedCache[str, bytes] = BoundedCache(MAX_BYTES, getsizeof=len)


def remember(doc: Any, data: bytes) -> None:
    """Keep a PDF document's bytes for rendering (least recently used first out, ``MAX_BYTES`` in all)."""
    if getattr(doc, "source_format", "") != "pdf" or not data:
        return
    key = hashlib.sha256(data).hexdigest()
    doc.meta[PDF_KEY] = key
    _PDFS.put(key, data)


def pdf_bytes(doc: Any) -> bytes | None:
    """The bytes of the PDF file ``doc`` was loaded from, when ``remember`` still holds them."""
    key = (getattr(doc, "meta", None) or {}).get(PDF_KEY)
    return _PDFS.get(key) if isinstance(key, str) else None


def _render_errors() -> tuple[type[BaseException], ...]:
    """What PyMuPDF raises on a damaged file or page (its own errors, MuPDF's, a page out of range)."""
    import pymupdf

    return (RuntimeError, ValueError, IndexError, MemoryError, pymupdf.mupdf.FzErrorBase)


def unavailable_reason(doc: Any) -> str | None:
    """Why the page view cannot show ``doc`` (None when it can)."""
    if doc is None:
        return "No document loaded."
    if getattr(doc, "source_format", "") != "pdf":
        from chunkscope.ingest import FORMAT_WORDS

        fmt = getattr(doc, "source_format", "?")
        return (f"The page view needs a PDF; this document was loaded from {FORMAT_WORDS.get(fmt, fmt)}, which has no "
                "page images to draw on. Its chunks are shown as text in Compare and the Chunk inspector.")
    if getattr(doc, "geometry", None) is None:
        return ("This PDF document has no page boxes (it was loaded from JSON written before page boxes "
                "existed, or mapping failed): load the PDF itself again.")
    return None


@lru_cache(maxsize=48)
def _render(key: str, page: int, zoom: float, data: bytes, fmt: str = "png", quality: int = 95
            ) -> tuple[bytes, int, int]:
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as pdf:
        pg = pdf[page - 1]
        area = max(1.0, pg.rect.width * pg.rect.height)
        zoom = min(zoom, (MAX_PIXELS / area) ** 0.5)  # the overlays are in page points: any zoom fits them
        pix = pg.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        return pix.tobytes(fmt, jpg_quality=quality), pix.width, pix.height


def render_page(doc: Any, page: int, zoom: float = DEFAULT_ZOOM, fmt: str = "png", quality: int = 95
                ) -> tuple[bytes, int, int] | None:
    """(image bytes, width px, height px) of 1-based ``page`` (``fmt`` "png" or "jpg"), or None when
    the PDF is not at hand or the page cannot be rendered. Cached per (document, page, zoom, format)."""
    data = pdf_bytes(doc)
    if data is None:
        return None
    try:
        return _render(doc.meta[PDF_KEY], int(page), float(zoom), data, fmt, int(quality))
    except _render_errors():
        return None


VIEW_PAD = 14.0  # points of white kept around what a page prints, when the Page view crops its margins
MIN_CROP = 0.9  # crop only when what the page prints spans less than this share of its width or height
MIN_VIEW = 0.6  # ... and never show less than this share of either (a page holding only its number stays a page)
MAX_BOXES = 512  # pages whose box is remembered (four numbers each)
_BOXES: BoundedCache[tuple[str, int], tuple[float, float, float, float] | None] = BoundedCache(MAX_BOXES)
_NOT_KEPT = object()


def content_box(doc: Any, page: int) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1) in rendered-page points of what 1-based ``page`` prints (text, figures, rules: its
    non-white pixels), padded by ``VIEW_PAD`` and widened to at least ``MIN_VIEW`` of the page each way; None when
    the PDF is not at hand, the page is blank, or it prints across nearly all of it (no margin worth cropping).
    The Page view shows this box, so that a page with wide margins (a LaTeX manual prints on 60% of the width) is
    drawn larger. Remembered per document and page."""
    key = (str(doc.meta.get(PDF_KEY, "")), int(page))
    if key[0]:
        kept = _BOXES.get(key, _NOT_KEPT)
        if kept is not _NOT_KEPT:
            return kept
    image = render_page(doc, page)
    if image is None or getattr(doc, "geometry", None) is None:
        return None
    try:
        box = _content_box(image, doc.geometry.page_size(int(page)))
    except _render_errors():  # a page out of range, or an image PyMuPDF cannot read back
        return None
    return _BOXES.put(key, box)


def _widen(lo: float, hi: float, size: float) -> tuple[float, float]:
    """``[lo, hi]`` widened about its middle to at least ``MIN_VIEW`` of ``size``, kept within ``[0, size]``."""
    need = MIN_VIEW * size
    if hi - lo >= need:
        return lo, hi
    mid = (lo + hi) / 2
    lo = min(max(0.0, mid - need / 2), size - need)
    return lo, lo + need


def _content_box(image: tuple[bytes, int, int], size: tuple[float, float]) -> tuple[float, float, float, float] | None:
    import numpy as np
    import pymupdf

    pix = pymupdf.Pixmap(image[0])
    a = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[:, :, :3]
    ink = np.any(a < 235, axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return None
    w, h = size
    sx, sy = w / pix.width, h / pix.height
    x0, x1 = max(0.0, cols[0] * sx - VIEW_PAD), min(w, (cols[-1] + 1) * sx + VIEW_PAD)
    y0, y1 = max(0.0, rows[0] * sy - VIEW_PAD), min(h, (rows[-1] + 1) * sy + VIEW_PAD)
    if x1 - x0 >= MIN_CROP * w and y1 - y0 >= MIN_CROP * h:
        return None
    (x0, x1), (y0, y1) = _widen(x0, x1, w), _widen(y0, y1, h)
    return (float(x0), float(y0), float(x1), float(y1))


THUMB_ZOOM = 0.75  # 54 dpi: a page is ~460 px wide, its JPEG ~20-60 KB


def render_thumbnail(doc: Any, page: int, zoom: float = THUMB_ZOOM, quality: int = 70
                     ) -> tuple[bytes, int, int] | None:
    """A small JPEG rendering of 1-based ``page`` (for the HTML report): ``render_page``'s result."""
    return render_page(doc, page, zoom, "jpg", quality)


# ------------------------------------------------------------------ layers


@dataclass
class ChunkShape:
    """One chunk's boxes on a page, in its colour."""

    index: int
    color: str
    boxes: list[tuple[float, float, float, float]]  # rendered-page points
    label_at: tuple[float, float] | None  # where its number goes (first box on this page)
    start: int
    end: int
    continues: bool = False  # the chunk started on an earlier page

    @property
    def tag(self) -> str:
        """The label at its first box: its 1-based number, "…" after it when it started on an
        earlier page (one text for the SVG and the Plotly renderings: the app and the report)."""
        return f"{self.index + 1}" + ("…" if self.continues else "")


@dataclass
class Layers:
    """What is drawn over one page: chunks, broken blocks, split pairs."""

    page: int
    width: float
    height: float
    chunks: list[ChunkShape] = field(default_factory=list)
    broken: list[dict[str, Any]] = field(default_factory=list)  # {"boxes": [...], "cut": (x, y0, y1) | None}
    split: list[dict[str, Any]] = field(default_factory=list)  # {"color", "ends": [[boxes], [boxes]]}


def _page_boxes(geo: Geometry, page: int, start: int, end: int, merge: bool = True
                ) -> list[tuple[float, float, float, float]]:
    return [to_display(geo, b) for b in boxes_for(geo, start, end, merge=merge) if b[0] == page]


def page_layers(doc: Any, c: ChunkingResult, page: int, problems: Problems | None = None) -> Layers:
    """Everything to draw on 1-based ``page`` for chunking ``c`` (rendered page coordinates)."""
    geo: Geometry = doc.geometry
    w, h = geo.page_size(page)
    lay = Layers(page=page, width=w, height=h)
    if not doc.pages or page > len(doc.pages):
        return lay
    ps = doc.pages[page - 1]
    for i, ch in enumerate(c.chunks):
        if ch.end <= ps.start or ch.start >= ps.end:
            continue
        boxes = _page_boxes(geo, page, ch.start, ch.end)
        if not boxes:
            continue
        first = boxes[0]
        lay.chunks.append(ChunkShape(i, CHUNK_COLORS[i % len(CHUNK_COLORS)], boxes, (first[0], first[1]),
                                     ch.start, ch.end, continues=ch.start < ps.start))
    p = problems if problems is not None else Problems.of(c)
    for b in p.broken:
        s, e = b.block
        if e <= ps.start or s >= ps.end:
            continue
        boxes = _page_boxes(geo, page, s, e)
        cut = None
        at = _page_boxes(geo, page, b.boundary, b.boundary + 1, merge=False)
        if at:
            x0, y0, _, y1 = at[0]
            cut = (x0, y0, y1)
        if boxes:  # one outline around the block's part on this page
            union = (min(x[0] for x in boxes), min(x[1] for x in boxes), max(x[2] for x in boxes),
                     max(x[3] for x in boxes))
            lay.broken.append({"boxes": [union], "cut": cut, "block": [s, e], "boundary": b.boundary})
    for k, pair in enumerate(p.split):
        ends = [_page_boxes(geo, page, pair.entity[0], pair.entity[1]), _page_boxes(geo, page, pair.pronoun[0], pair.pronoun[1])]
        if any(ends):
            lay.split.append({"color": pair_color(pair, k), "ends": ends, "tag": pair_tag(pair, k)})
    return lay


def chunks_on_page(doc: Any, c: ChunkingResult, page: int) -> list[int]:
    """Indices of the chunks of ``c`` with text on 1-based ``page`` (by page span)."""
    if not doc.pages or page > len(doc.pages):
        return []
    ps = doc.pages[page - 1]
    return [i for i, ch in enumerate(c.chunks) if ch.end > ps.start and ch.start < ps.end]


def page_differences(doc: Any, a: ChunkingResult, b: ChunkingResult, limit: int = 4) -> list[dict[str, Any]]:
    """The pages where chunkings ``a`` and ``b`` differ most, most different first (at most ``limit``;
    pages where they agree are left out).

    On each page (the page holding the offset), count the cuts one makes and the other does not,
    and the problems (broken blocks, split pairs) one has and the other not; a differing problem
    weighs 2 cuts (it is what the metrics count). Each entry: ``{"page", "score", "cuts": [only a,
    only b], "broken": [only a, only b], "split": [only a, only b]}``.
    """
    if not getattr(doc, "pages", None) or getattr(doc, "geometry", None) is None:
        return []
    n = len(doc.pages)
    stats: dict[int, dict[str, list[int]]] = {}

    def bump(pos: int, kind: str, side: int) -> None:
        pg = doc.page_of(pos)
        if pg is None or not 1 <= pg <= n:
            return
        stats.setdefault(pg, {"cuts": [0, 0], "broken": [0, 0], "split": [0, 0]})[kind][side] += 1

    cuts = [{ch.start for ch in c.chunks[1:]} for c in (a, b)]
    probs = [Problems.of(c) for c in (a, b)]
    broken = [{(tuple(x.block), x.boundary) for x in p.broken} for p in probs]
    split = [{(tuple(x.entity), tuple(x.pronoun), x.boundary) for x in p.split} for p in probs]
    for side in (0, 1):
        for pos in cuts[side] - cuts[1 - side]:
            bump(pos, "cuts", side)
        for _blk, cut in broken[side] - broken[1 - side]:
            bump(cut, "broken", side)
        for _ent, _pro, cut in split[side] - split[1 - side]:
            bump(cut, "split", side)
    scored = sorted(((sum(st["cuts"]) + 2 * (sum(st["broken"]) + sum(st["split"])), pg) for pg, st in stats.items()),
                    key=lambda x: (-x[0], x[1]))
    return [{"page": pg, "score": score, **stats[pg]} for score, pg in scored[:limit]]


def first_problem_page(doc: Any, c: ChunkingResult) -> tuple[int, str] | None:
    """``(page, what)`` of the first problem of ``c`` in the text (a broken block or a split pair: "broken
    block", "split pair"), where the Page view opens; None when it has none."""
    probs = Problems.of(c)
    first = min([(x.boundary, "broken block") for x in probs.broken]
                + [(x.boundary, "split pair") for x in probs.split], default=None)
    if first is None:
        return None
    page = doc.page_of(first[0])
    return (int(page), first[1]) if page else None


def first_page_of(doc: Any, start: int, end: int) -> int | None:
    """Page of the first box of ``[start, end)`` (else the page holding ``start``)."""
    bx = boxes_for(getattr(doc, "geometry", None), start, end)
    if bx:
        return int(bx[0][0])
    return doc.page_of(start)


# ------------------------------------------------------------------ SVG


def _f(x: float) -> str:
    return f"{x:.1f}"


def page_svg(layers: Layers, image: tuple[bytes, int, int] | None = None, focus: int | None = None,
             width_px: int | None = None, title: str = "", image_class: str = "", mime: str = "image/png") -> str:
    """HTML: the page image (or a blank page) with the layers as an SVG overlay.

    ``image_class``: instead of an ``<img>``, a box of the page's shape with this CSS class (whose
    background is the page image, defined once in the page's ``<style>``: the HTML report shows
    one page for two chunkings without embedding its image twice). ``mime``: the image's type.

    Chunk rectangles are translucent in the chunk's colour with its number at its first box; the
    ``focus`` chunk is outlined in yellow. Broken blocks: dashed orange-red outline and a thick
    orange-red bar at the cut. Split pairs: both mentions outlined in the pair's colour.
    Everything that comes from the document is escaped (only numbers and ids reach the SVG).
    """
    w, h = layers.width, layers.height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(w)} {_f(h)}" '
           f'style="position:absolute;left:0;top:0;width:100%;height:100%">']
    if title:
        out.append(f"<title>{html.escape(title)}</title>")
    out += _svg_chunks(layers.chunks, focus)
    for b in layers.broken:
        out += _svg_broken(b)
    for pair in layers.split:
        out += _svg_pair(pair)
    for s in layers.chunks:  # drawn last: on top of everything
        out += _svg_focus_and_label(s, focus)
    out.append("</svg>")
    style = f"max-width:{width_px}px;" if width_px else ""
    return (f'<div class="cs-page" style="position:relative;{style}border:1px solid rgba(128,128,128,.45)">'
            f'{_svg_backdrop(layers, image, image_class, mime)}{"".join(out)}</div>')


def _svg_chunks(chunks: Sequence[ChunkShape], focus: int | None) -> list[str]:
    """Every chunk's boxes, translucent in its colour (the ``focus`` chunk stronger, the others fainter)."""
    out = []
    for s in chunks:
        op = 0.42 if focus == s.index else (0.16 if focus is not None else 0.26)
        for (x0, y0, x1, y1) in s.boxes:
            out.append(f'<rect class="cs-chunk" data-chunk="{s.index}" x="{_f(x0)}" y="{_f(y0)}" '
                       f'width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" fill="{s.color}" fill-opacity="{op}" '
                       f'stroke="{s.color}" stroke-width="0.6"/>')
    return out


def _svg_broken(b: dict[str, Any]) -> list[str]:
    """A broken block: its dashed outline, and a bar with "✂ cut" at the boundary that broke it."""
    out = []
    for (x0, y0, x1, y1) in b["boxes"]:
        out.append(f'<rect class="cs-broken" x="{_f(x0 - 2)}" y="{_f(y0 - 2)}" width="{_f(x1 - x0 + 4)}" '
                   f'height="{_f(y1 - y0 + 4)}" fill="none" stroke="{CUT_COLOR}" stroke-width="1.5" '
                   f'stroke-dasharray="5 3"/>')
    if b["cut"]:
        x, y0, y1 = b["cut"]
        out.append(f'<line class="cs-cut" x1="{_f(x)}" y1="{_f(y0 - 4)}" x2="{_f(x)}" y2="{_f(y1 + 4)}" '
                   f'stroke="{CUT_COLOR}" stroke-width="3.5"/>')
        out.append(f'<text x="{_f(x + 3)}" y="{_f(y0 - 5)}" font-size="9" font-weight="700" '
                   f'fill="{CUT_COLOR}">✂ cut</text>')
    return out


def _svg_pair(pair: dict[str, Any]) -> list[str]:
    """A split pair: both mentions outlined in the pair's colour, its tag above each."""
    out = []
    for end in pair["ends"]:
        for (x0, y0, x1, y1) in end:
            out.append(f'<rect class="cs-pair" x="{_f(x0 - 1)}" y="{_f(y0 - 1)}" width="{_f(x1 - x0 + 2)}" '
                       f'height="{_f(y1 - y0 + 2)}" fill="none" stroke="{pair["color"]}" stroke-width="2"/>')
        if end:
            x0, y0 = end[0][0], end[0][1]
            out.append(f'<text x="{_f(x0)}" y="{_f(y0 - 2)}" font-size="8" font-weight="700" '
                       f'fill="{pair["color"]}">{html.escape(pair["tag"])}</text>')
    return out


def _svg_focus_and_label(s: ChunkShape, focus: int | None) -> list[str]:
    """The yellow outline of the ``focus`` chunk, and a chunk's number at its first box."""
    out = []
    if focus == s.index:
        for (x0, y0, x1, y1) in s.boxes:
            out.append(f'<rect class="cs-focus" x="{_f(x0 - 1.5)}" y="{_f(y0 - 1.5)}" '
                       f'width="{_f(x1 - x0 + 3)}" height="{_f(y1 - y0 + 3)}" fill="none" '
                       f'stroke="{FOCUS_COLOR}" stroke-width="2.5"/>')
    if s.label_at:
        x, y = s.label_at
        tag = s.tag
        wlab = 6 + 5.2 * len(tag)
        out.append(f'<g class="cs-label" data-chunk="{s.index}"><rect x="{_f(x - wlab - 1)}" y="{_f(y)}" '
                   f'width="{_f(wlab)}" height="10" rx="2" fill="{s.color}"/>'
                   f'<text x="{_f(x - wlab / 2 - 1)}" y="{_f(y + 8)}" font-size="8" font-weight="700" '
                   f'fill="#fff" text-anchor="middle">{html.escape(tag)}</text></g>')
    return out


def _svg_backdrop(layers: Layers, image: tuple[bytes, int, int] | None, image_class: str, mime: str) -> str:
    """What the overlay is drawn on.

    A box with the page image as its CSS background (``image_class``), the image itself, or a blank page of
    the page's shape.
    """
    w, h = layers.width, layers.height
    if image_class:
        return (f'<div class="{html.escape(image_class)}" style="width:100%;aspect-ratio:{_f(w)}/{_f(h)};'
                f'background-color:#fff;background-size:100% 100%;background-repeat:no-repeat"></div>')
    if image is not None:
        b64 = base64.b64encode(image[0]).decode("ascii")
        return (f'<img src="data:{html.escape(mime)};base64,{b64}" style="width:100%;display:block" '
                f'alt="page {layers.page}"/>')
    return f'<div style="width:100%;aspect-ratio:{_f(w)}/{_f(h)};background:#fff;border:1px dashed #999"></div>'


# ------------------------------------------------------------------ Plotly (clickable)


def page_figure(layers: Layers, image: tuple[bytes, int, int] | None = None, focus: int | None = None,
                texts: Sequence[str] | None = None, height_px: int = 900,
                view: tuple[float, float, float, float] | None = None) -> Any:
    """A Plotly figure of the page with the layers; each chunk is one trace whose points (one per
    box, ``customdata`` = chunk index) can be clicked (``st.plotly_chart(on_select=...)``).
    ``texts[i]``: hover text of chunk ``i`` (escaped here). ``view``: the part of the page shown
    (:func:`content_box`), the whole page when None."""
    import plotly.graph_objects as go

    w, h = layers.width, layers.height
    fig = go.Figure()
    if image is not None:
        b64 = base64.b64encode(image[0]).decode("ascii")
        fig.add_layout_image(source=f"data:image/png;base64,{b64}", xref="x", yref="y", x=0, y=0,
                             sizex=w, sizey=h, sizing="stretch", layer="below", xanchor="left", yanchor="top")
    for s in layers.chunks:
        _figure_chunk(fig, s, focus == s.index, texts)
    for b in layers.broken:
        xs, ys = _outline(b["boxes"], 2)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=CUT_COLOR, width=1.5, dash="dash"),
                                 hoverinfo="skip", showlegend=False))
        if b["cut"]:
            x, y0, y1 = b["cut"]
            fig.add_trace(go.Scatter(x=[x, x], y=[y0 - 4, y1 + 4], mode="lines", line=dict(color=CUT_COLOR, width=4),
                                     hovertext="broken block: cut here", hoverinfo="text", showlegend=False))
    for pair in layers.split:
        xs, ys = _outline([box for end in pair["ends"] for box in end], 1)
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=pair["color"], width=2),
                                 hovertext=f"split pair {pair['tag']}", hoverinfo="text", showlegend=False))
    x0, y0, x1, y1 = view if view is not None else (0.0, 0.0, w, h)
    fig.update_xaxes(range=[x0, x1], visible=False, constrain="domain")
    fig.update_yaxes(range=[y1, y0], visible=False, scaleanchor="x", scaleratio=1, constrain="domain",
                     constraintoward="top")
    fig.update_layout(height=height_px, margin=dict(l=0, r=0, t=0, b=0), plot_bgcolor="#fff",
                      paper_bgcolor="rgba(0,0,0,0)", dragmode=False, clickmode="event+select")
    return fig


def _outline(boxes: Sequence[tuple[float, float, float, float]], pad: float) -> tuple[list[float | None], ...]:
    """The x and y of closed rectangles around ``boxes`` (``pad`` points out), one line trace (None between)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for (x0, y0, x1, y1) in boxes:
        xs += [x0 - pad, x1 + pad, x1 + pad, x0 - pad, x0 - pad, None]
        ys += [y0 - pad, y0 - pad, y1 + pad, y1 + pad, y0 - pad, None]
    return xs, ys


def _figure_chunk(fig: Any, s: ChunkShape, focused: bool, texts: Sequence[str] | None) -> None:
    """One chunk: its filled boxes, invisible markers at their centres to click and hover, its number."""
    import plotly.graph_objects as go

    from chunkscope.present.figures import rgba

    xs, ys = _outline(s.boxes, 0)
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", fill="toself", fillcolor=rgba(s.color, 0.42 if focused else 0.22),
                             line=dict(color=FOCUS_COLOR if focused else s.color, width=3 if focused else 0.8),
                             hoverinfo="skip", showlegend=False))
    hover = html.escape(texts[s.index]) if texts is not None and s.index < len(texts) else f"chunk {s.index + 1}"
    cx = [(b[0] + b[2]) / 2 for b in s.boxes]
    cy = [(b[1] + b[3]) / 2 for b in s.boxes]
    fig.add_trace(go.Scatter(x=cx, y=cy, mode="markers", marker=dict(size=14, color=s.color, opacity=0.02),
                             customdata=[s.index] * len(cx), hovertext=[hover] * len(cx), hoverinfo="text",
                             showlegend=False, name=f"chunk {s.index + 1}"))
    if s.label_at:
        fig.add_annotation(x=s.label_at[0], y=s.label_at[1], text=f"<b>{html.escape(s.tag)}</b>", showarrow=False,
                           xanchor="right", yanchor="top", font=dict(size=12, color="#fff"), bgcolor=s.color,
                           borderpad=1)
