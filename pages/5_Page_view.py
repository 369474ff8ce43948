"""Page view: the PDF page with each chunk's region drawn over it, for one to three chunkings.

Click a chunk on the page (or pick it in the list) to see its text, tokens and flags; broken blocks
are outlined with their cut marked, both mentions of a split pair are outlined. Step pages, or
jump to the page of a chunk. Non-PDF documents: the page says why there is nothing to draw on.
"""

from __future__ import annotations

import html
import time

import streamlit as st

from chunkscope.document import Document
from chunkscope.ingest.health import blame
from chunkscope.present import highlight, pdfpages
from chunkscope.present.inspector import pages_label
from chunkscope.report import Report
from ui.analysis import current_report, keep_state, latest_report
from ui.common import counted, counted_pairs, guard, md_escape
from ui.keys import PV_ASKED, PV_FOCUS, PV_PAGE
from ui.overview import swatch
from ui.page import panel_settings, require_document
from ui.pdfview import render_health

st.set_page_config(page_title="Page view · ChunkScope", page_icon="📄", layout="wide")
keep_state()
st.title("Page view")

PV_CHUNKINGS = "cs_pv_chunkings"
PV_SEL = "cs_pv_sel"  # {chunking id: selected chunk index}
PV_OPENED = "cs_pv_opened"  # the documents the view has opened for (each opens once at its winner's first problem)


def _report(doc: Document) -> Report | None:
    settings, problem = panel_settings()
    if problem:
        st.sidebar.error(md_escape(problem))
    return current_report(doc, settings) or latest_report(doc)


def _step(n: int, delta: int) -> None:
    st.session_state[PV_PAGE] = max(1, min(n, int(st.session_state.get(PV_PAGE, 1)) + delta))


def _jump(doc, c, cid: str) -> None:
    """Go to the page of a chunk's first box and select it."""
    no = st.session_state.get("cs_pv_jump")  # shown 1-based, as in the other pages
    if no is None or not 1 <= int(no) <= len(c.chunks):
        return
    idx = int(no) - 1
    ch = c.chunks[idx]
    target = pdfpages.first_page_of(doc, ch.start, ch.end)
    if target:
        st.session_state[PV_PAGE] = int(target)
    _select(cid, idx)


def _select(cid: str, idx: int | None) -> None:
    sel = dict(st.session_state.get(PV_SEL) or {})
    if idx is None:
        sel.pop(cid, None)
    else:
        sel[cid] = int(idx)
    st.session_state[PV_SEL] = sel


def _clicked(cid: str, key: str) -> None:
    ev = st.session_state.get(key)
    pts = getattr(getattr(ev, "selection", None), "points", None)
    if pts is None and isinstance(ev, dict):
        pts = (ev.get("selection") or {}).get("points")
    for pt in pts or []:
        cd = pt.get("customdata") if isinstance(pt, dict) else None
        if isinstance(cd, list):
            cd = cd[0] if cd else None
        if cd is not None:
            _select(cid, int(cd))
            return


def _flags(doc, c, idx: int, p: highlight.Problems) -> list[str]:
    ch = c.chunks[idx]
    out = []
    for b in p.broken:
        if b.boundary in (ch.start, ch.end):
            why = blame(doc, b.block, b.boundary)
            out.append(f"✂ cuts a block at {b.boundary:,}" + (f" ({why})" if why else ""))
    for k, s in enumerate(p.split):
        if s.boundary in (ch.start, ch.end):
            out.append(f"⛓ splits pair {highlight.pair_tag(s, k)} (“{doc.text[s.entity[0]:s.entity[1]].strip()[:40]}” / "
                       f"“{doc.text[s.pronoun[0]:s.pronoun[1]].strip()[:20]}”)")
    if idx in p.out_of_size:
        out.append("⚠ out of size")
    return out


def details(doc, c, cid: str, idx: int, p: highlight.Problems) -> None:
    ch = c.chunks[idx]
    pages = doc.pages_of(ch.start, ch.end)
    st.html(f'<div style="font-weight:700">{swatch(cid)} · chunk #{idx + 1} · {ch.tokens} tokens · '
            f'{"page" if len(set(pages)) < 2 else "pages"} {html.escape(pages_label(pages))}'
            '</div>')
    for f in _flags(doc, c, idx, p):
        st.caption(md_escape(f))
    body = doc.text[ch.start:ch.end]
    st.html('<div style="white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;max-height:260px;'
            'overflow:auto;border:1px solid rgba(128,128,128,.4);border-radius:6px;padding:6px">'
            + html.escape(body[:6000]) + ("…" if len(body) > 6000 else "") + "</div>")


def panel(doc, report, cid: str, page: int, height: int, single: bool = False,
          view: tuple[float, float, float, float] | None = None) -> float:
    c = report.get(cid)
    p = highlight.Problems.of(c)
    score = f" · score {c.score:.3f}" if c.score is not None else ""
    st.html(f'<div style="font-weight:700">{swatch(cid)}{" 🏆" if cid == report.winner else ""}'
            f'<span style="font-weight:400;opacity:.8">{html.escape(score)}</span></div>')
    t0 = time.perf_counter()
    layers = pdfpages.page_layers(doc, c, page, p)
    sel = (st.session_state.get(PV_SEL) or {}).get(cid)
    on_page = [s.index for s in layers.chunks]
    texts = [f"chunk {i + 1} · {x.tokens} tokens · " + " ".join(doc.text[x.start:x.start + 80].split())[:60]
             for i, x in enumerate(c.chunks)]
    image = pdfpages.render_page(doc, page)
    fig = pdfpages.page_figure(layers, image, focus=sel if sel in on_page else None, texts=texts, height_px=height,
                               view=view)
    took = time.perf_counter() - t0
    key = f"cs_pv_fig_{cid}_{page}"
    where, side = st.columns([3, 2]) if single else (st.container(), st.container())
    with where:
        st.plotly_chart(fig, key=key, on_select=lambda: _clicked(cid, key), selection_mode="points",
                        config={"displayModeBar": False, "scrollZoom": False}, width="stretch")
    with side:
        _side(doc, c, cid, page, p, layers, sel, on_page, texts)
    return took


def _side(doc, c, cid: str, page: int, p, layers, sel, on_page, texts) -> None:
    st.caption(f"{counted(len(on_page), 'chunk')} on this page · "
               f"{counted(sum(len(b['boxes']) > 0 for b in layers.broken), 'broken block')} · "
               f"{counted_pairs(len(layers.split) if p.pairs_checked else None, 'split-pair mention')}")
    opts = [None] + on_page
    pick = f"cs_pv_pick_{cid}_{page}"
    here = sel if sel in opts else None  # a chunk chosen on another page is not this page's
    if st.session_state.get(pick) != here:
        st.session_state[pick] = here  # a click on the page shows in the list too (the state is the one value)
    st.selectbox("Chunk on this page", opts, key=pick,
                 format_func=lambda i: "— click a chunk or pick one —" if i is None else texts[i][:70],
                 on_change=lambda: _select(cid, st.session_state.get(pick)))
    if here is not None and here < len(c.chunks):
        details(doc, c, cid, here, p)


def open_where_asked(doc: Document, report: Report | None, ids: list[str]) -> str:
    """Set the page and the chunkings the view opens on: once per document at the winner's first problem (unless
    a page or a chunk was asked for), a chunk asked for by another page first. Returns the note saying where it
    opened ("" when it did not move)."""
    focus = st.session_state.pop(PV_FOCUS, None)
    asked = st.session_state.pop(PV_ASKED, False)
    opened_note = ""
    opened = set(st.session_state.get(PV_OPENED) or ())
    if report is not None and report.winner in ids and doc.sha256 not in opened:
        st.session_state[PV_OPENED] = opened | {doc.sha256}  # once per document; afterwards the user's page stays
        won = report.get(report.winner) if report.winner else None
        first = None if focus or asked or won is None else pdfpages.first_problem_page(doc, won)
        if first is not None:  # the winner alone, on the page of its first problem
            st.session_state[PV_PAGE] = first[0]
            st.session_state[PV_CHUNKINGS] = [report.winner]
            opened_note = f"Opened on page {first[0]}, where {report.winner}'s first {first[1]} is."
    if focus and focus[0] in ids:
        _select(focus[0], focus[1])
        cur = [i for i in st.session_state.get(PV_CHUNKINGS, []) if i in ids]
        st.session_state[PV_CHUNKINGS] = ([focus[0]] + [i for i in cur if i != focus[0]])[:3]
    if st.session_state.get(PV_CHUNKINGS) is None or not all(i in ids for i in st.session_state[PV_CHUNKINGS]):
        st.session_state[PV_CHUNKINGS] = [report.winner] if report is not None and report.winner in ids else ids[:1]
    return opened_note


def controls(doc: Document, report: Report | None, ids: list[str], n: int) -> tuple[list[str], int]:
    """The chunkings to draw (1–3), the page stepper and the jump to a chunk; returns the chunkings and the page."""
    st.session_state[PV_PAGE] = max(1, min(n, int(st.session_state.get(PV_PAGE, 1))))
    c1, c2, c3 = st.columns([2.2, 1.6, 1.6])
    chosen = c1.multiselect("Chunkings (1–3, side by side)", ids, key=PV_CHUNKINGS, max_selections=3,
                            format_func=lambda i: i + (" 🏆" if report is not None and i == report.winner else ""))
    with c2:
        b1, b2, b3 = st.columns([1, 2, 1], vertical_alignment="bottom")
        b1.button("◀", key="cs_pv_prev", on_click=_step, args=(n, -1), disabled=n < 2, help="previous page")
        page = b2.number_input(f"Page (1–{n})", 1, n, key=PV_PAGE)
        b3.button("▶", key="cs_pv_next", on_click=_step, args=(n, 1), disabled=n < 2, help="next page")
    c = report.get(chosen[0]) if chosen and report is not None else None
    if c is not None:
        c3.number_input(f"Jump to chunk of {chosen[0]} (1–{len(c.chunks)})", 1, max(1, len(c.chunks)), value=None,
                        key="cs_pv_jump", placeholder="chunk #", on_change=_jump, args=(doc, c, chosen[0]))
    return chosen, int(page)


def page_notes(doc: Document, page: int) -> None:
    """The page's own extraction warnings, and a note when the PDF itself is not held (boxes on blank pages)."""
    hp = (doc.meta.get("health") or {}).get("pages", [])
    pwarn = hp[page - 1].get("warnings") if page - 1 < len(hp) else None
    if pwarn:
        st.warning(f"Page {page}: " + md_escape("; ".join(pwarn)))
    if pdfpages.pdf_bytes(doc) is None:
        st.caption("The PDF file itself is not held in this session (loaded from JSON or from another page): "
                   "boxes are drawn on blank pages. Load the PDF on the Overview page to see the pages.")


def panels(doc: Document, report: Report, chosen: list[str], page: int) -> None:
    """The page once per chosen chunking, side by side, its margins cropped, and what the overlays mean."""
    assert doc.geometry is not None  # a page view is only drawn for PDFs with their geometry (unavailable_reason)
    pw, ph_ = doc.geometry.page_size(page)
    view = pdfpages.content_box(doc, page)  # the page's margins cropped: its text drawn larger
    if view is not None:
        pw, ph_ = view[2] - view[0], view[3] - view[1]
    width = {1: 540, 2: 430, 3: 280}[len(chosen)]  # about the column width (px) in the wide layout
    height = int(min(1400, max(300, width * ph_ / max(pw, 1.0))))
    cols = st.columns(len(chosen))
    took = 0.0
    for col, cid in zip(cols, chosen):
        with col, guard(f"The page of {cid}"):
            took += panel(doc, report, cid, page, height, single=len(chosen) == 1, view=view)
    st.caption(f"Overlays built in {took * 1000:.0f} ms. Colours: one per chunk (its number at its first box; "
               "“…” when it started on an earlier page) · dashed orange-red: a broken block, the bar is the cut · "
               "coloured outlines: the two mentions of a split entity–pronoun pair · yellow: the selected chunk.")


def blank_page(doc: Document, page: int) -> None:
    """The page with no chunking drawn on it."""
    assert doc.geometry is not None  # see panels()
    width, height = doc.geometry.page_size(page)
    image = pdfpages.render_page(doc, page)
    st.html(pdfpages.page_svg(pdfpages.Layers(page=page, width=width, height=height), image, width_px=760))


def main() -> None:
    doc = require_document()
    why = pdfpages.unavailable_reason(doc)
    if why:
        st.info(why)
        return
    render_health(doc)
    report = _report(doc)
    ids = [c.id for c in report.ranked] if report is not None else []
    if report is None:
        st.info("Not analyzed yet: the page is shown without chunks. Press Analyze on the Overview page to draw them.")
    opened_note = open_where_asked(doc, report, ids)
    chosen, page = controls(doc, report, ids, len(doc.pages))
    if opened_note:
        st.caption(opened_note)
    page_notes(doc, page)
    if not chosen or report is None:
        blank_page(doc, page)
    else:
        panels(doc, report, chosen, page)


with guard("The Page view"):
    main()
