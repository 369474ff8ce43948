"""The page view (pages/5_Page_view.py) with streamlit.testing, and the overlay renderers."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PAGE = str(ROOT / "pages" / "5_Page_view.py")
CHUNKERS = ("sentence-5", "fixed-512")


@pytest.fixture(scope="module")
def pdf_doc_report():
    from pdf_factory import make_pdf

    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_bytes
    from chunkscope.present import pdfpages

    data = make_pdf(4, blank_pages=(3,))
    doc = load_bytes(data, "report.pdf")
    pdfpages.remember(doc, data)
    report = analyze(doc, Settings(chunkers=CHUNKERS, candidates=CHUNKERS, coref="none"))
    return doc, report


def _page(doc, report=None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["document"] = doc
    if report is not None:
        at.session_state["cs_reports"] = {"k": report}
    return at.run()


def _ok(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_non_pdf_says_why():
    from chunkscope.ingest import load_bytes

    at = _page(load_bytes(b"# T\n\nSome text here.\n", "t.md"))
    _ok(at)
    assert "needs a PDF" in at.info[0].value and "loaded from Markdown, which has no page images" in at.info[0].value


def test_page_view_draws_chunks_steps_and_selects(pdf_doc_report):
    doc, report = pdf_doc_report
    at = _page(doc, report)
    _ok(at)
    assert at.multiselect(key="cs_pv_chunkings").value == [report.winner]
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    # one count for the page checks and what the conversion said (the blank page 3), both listed inside
    n = len(doc.meta["health"]["warnings"]) + len(doc.warnings)
    assert doc.warnings and at.expander[0].label == f"Extraction health: {n} warning(s)"
    assert "⚠ conversion: page 3 has no extractable text" in [c.value for c in at.expander[0].caption]
    assert next(m.value for m in at.metric if m.label == "text dropped") == "0.0%"
    at.button(key="cs_pv_next").click().run()
    _ok(at)
    assert at.number_input(key="cs_pv_page").value == 2
    # page 3 has no text: a warning for that page, still no traceback
    at.button(key="cs_pv_next").click().run()
    _ok(at)
    assert any("Page 3" in w.value and "no text" in w.value for w in at.warning)
    # two chunkings side by side
    at.multiselect(key="cs_pv_chunkings").set_value(list(CHUNKERS)).run()
    _ok(at)
    assert len(at.get("plotly_chart")) == 2
    # jump to a chunk on page 4: the page follows and the chunk is selected (its text shown)
    c = report.get("sentence-5")
    idx = next(i for i, ch in enumerate(c.chunks) if doc.page_of(ch.start) == 4 and doc.boxes(ch.start, ch.end))
    at.multiselect(key="cs_pv_chunkings").set_value(["sentence-5"]).run()
    at.number_input(key="cs_pv_jump").set_value(idx + 1).run()  # shown 1-based
    _ok(at)
    assert at.number_input(key="cs_pv_page").value == doc.page_of(c.chunks[idx].start)
    body = "".join(h.proto.body for h in at.get("html"))
    assert f"chunk #{idx + 1} ·" in body
    # another page: the chunk chosen on page 4 is not shown as this page's (it was, stale)
    at.number_input(key="cs_pv_page").set_value(1).run()
    _ok(at)
    assert f"chunk #{idx + 1} ·" not in "".join(h.proto.body for h in at.get("html"))
    assert at.selectbox(key="cs_pv_pick_sentence-5_1").value is None


def test_layers_svg_and_figure(pdf_doc_report):
    from chunkscope.present import pdfpages

    doc, report = pdf_doc_report
    c = report.get("sentence-5")
    lay = pdfpages.page_layers(doc, c, 1)
    assert lay.chunks and all(s.boxes for s in lay.chunks)
    assert [s.index for s in lay.chunks] == pdfpages.chunks_on_page(doc, c, 1)[:len(lay.chunks)]
    colors = [s.color for s in lay.chunks]
    assert all(a != b for a, b in zip(colors, colors[1:]))  # neighbours differ
    svg = pdfpages.page_svg(lay, pdfpages.render_page(doc, 1), focus=lay.chunks[0].index, title="<b>x</b>")
    assert svg.count('class="cs-chunk"') == sum(len(s.boxes) for s in lay.chunks)
    assert "data:image/png;base64," in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "<b>x" not in svg
    fig = pdfpages.page_figure(lay, None, texts=["<script>alert(1)</script>"] * len(c.chunks))
    hover = [t for tr in fig.data for t in (tr.hovertext or []) if isinstance(tr.hovertext, (list, tuple))]
    assert hover and all("<script>" not in h for h in hover)


def test_overlay_time_two_chunkings(pdf_doc_report):
    """Not a speed assertion (bench/pdf.py measures): overlays are built from cached data."""
    from chunkscope.present import pdfpages

    doc, report = pdf_doc_report
    pdfpages.render_page(doc, 2)
    t0 = time.perf_counter()
    for cid in CHUNKERS:
        pdfpages.page_figure(pdfpages.page_layers(doc, report.get(cid), 2), pdfpages.render_page(doc, 2))
    assert time.perf_counter() - t0 < 30  # sanity only


def test_page_view_opens_on_the_winner_even_when_a_non_candidate_scores_higher(pdf_doc_report):
    import copy

    from chunkscope.analysis import rescore

    doc, report = pdf_doc_report
    report = rescore(copy.deepcopy(report), dict(report.settings["weights"]), ("sentence-5",))
    assert report.winner == "sentence-5" and report.ranked[0].id != "sentence-5"  # fixed-512 ranks first
    at = _page(doc, report)
    _ok(at)
    assert at.multiselect(key="cs_pv_chunkings").value == ["sentence-5"]


def test_page_view_opens_where_the_winner_s_first_problem_is_then_keeps_the_user_s_page(pdf_doc_report):
    """R-data.pdf's Page view opened on its title page; it opens where the winner breaks a block first."""
    import copy

    from chunkscope.analysis import rescore
    from chunkscope.present import pdfpages

    doc, report = pdf_doc_report
    report = rescore(copy.deepcopy(report), dict(report.settings["weights"]), ("sentence-5",))
    first = pdfpages.first_problem_page(doc, report.get("sentence-5"))
    assert first is not None and first[0] > 1, first  # sentence-5 first breaks a block on page 2
    at = _page(doc, report)
    _ok(at)
    assert at.number_input(key="cs_pv_page").value == first[0]
    assert any(f"Opened on page {first[0]}, where sentence-5's first {first[1]} is." == c.value for c in at.caption)
    at.number_input(key="cs_pv_page").set_value(1).run()
    _ok(at)
    assert at.number_input(key="cs_pv_page").value == 1  # the user's page stays
    assert not any(c.value.startswith("Opened on page") for c in at.caption)
    at.session_state["cs_reports"] = {"k": pdf_doc_report[1]}  # another winner (fixed-512): still the user's page
    at.run()
    _ok(at)
    assert at.number_input(key="cs_pv_page").value == 1
    assert pdfpages.first_problem_page(doc, report.get("fixed-512")) is None
    # a page asked for (the health panel's page button) is where it opens, the first time too
    from ui.keys import PV_ASKED, PV_PAGE

    asked = AppTest.from_file(PAGE, default_timeout=120)
    asked.session_state["document"] = doc
    asked.session_state["cs_reports"] = {"k": report}
    asked.session_state[PV_PAGE], asked.session_state[PV_ASKED] = 4, True
    asked.run()
    _ok(asked)
    assert asked.number_input(key="cs_pv_page").value == 4
    assert not any(c.value.startswith("Opened on page") for c in asked.caption)


def test_html_report_thumbnails_of_the_pages_where_winner_and_runner_up_differ(pdf_doc_report):
    import re

    from chunkscope.analysis.selection import explain
    from chunkscope.present import pdfpages
    from chunkscope.present.html_report import html_report
    from chunkscope.report import Report

    doc, report = pdf_doc_report
    ex = explain(report)
    a, b = report.get(ex.winner), report.get(ex.runner)
    diffs = pdfpages.page_differences(doc, a, b)
    assert 1 <= len(diffs) <= 4 and all(d["score"] > 0 for d in diffs)
    assert [d["score"] for d in diffs] == sorted((d["score"] for d in diffs), reverse=True)
    assert 3 not in [d["page"] for d in diffs]  # the blank page: nothing differs there
    # the counts are real: a cut only in one chunking sits on the page the entry names
    only_a = {ch.start for ch in a.chunks[1:]} - {ch.start for ch in b.chunks[1:]}
    for d in diffs:
        assert d["cuts"][0] == sum(1 for p in only_a if doc.page_of(p) == d["page"])

    page = html_report(report, doc)
    section = page.split("differ most</h2>", 1)[1].split("<h2>All chunkings", 1)[0]
    figs = section.split('<figure class="cs-thumb">')[1:]
    assert len(figs) == len(diffs)
    for d, fig in zip(diffs, figs):
        assert f"<b>Page {d['page']}</b>" in fig
        assert fig.count("<svg") == 2 and 'class="cs-chunk"' in fig  # both chunkings, boxes drawn
    # each page image is embedded once (a CSS background both drawings share), as a small JPEG
    imgs = re.findall(r"data:image/jpeg;base64,([A-Za-z0-9+/=]+)", section)
    assert len(imgs) == len(diffs) and "data:image/png" not in section
    assert all(len(x) < 200_000 for x in imgs)
    # ids from the report are escaped
    hostile = Report.from_dict(report.to_dict())
    for c in hostile.chunkings:
        c.id = "<i>" + c.id
    hostile.winner = "<i>" + report.winner
    if hostile.verdict:
        hostile.verdict = None
    page2 = html_report(hostile, doc)
    assert "<i>" not in page2 and "&lt;i&gt;" in page2 and "differ most" in page2


def test_html_report_without_pdf_bytes_draws_blank_pages_and_non_pdf_has_no_section(pdf_doc_report):
    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_bytes
    from chunkscope.present import pdfpages
    from chunkscope.present.html_report import html_report

    doc, report = pdf_doc_report
    saved = pdfpages._PDFS.pop(doc.meta[pdfpages.PDF_KEY])
    try:
        page = html_report(report, doc)
    finally:
        pdfpages.remember(doc, saved)
    assert "differ most" in page and "drawn on blank pages" in page and "data:image/jpeg" not in page
    assert 'class="cs-chunk"' in page
    md = load_bytes(("# Title\n\n" + "The archive keeps contracts for ten years. " * 40).encode(), "t.md")
    r = analyze(md, Settings(chunkers=CHUNKERS, candidates=CHUNKERS, coref="none"))
    for p in (html_report(r, md), html_report(r)):
        assert "On the page" not in p and "differ most" not in p and "cs-chunk" not in p
        assert "blank pages" not in p and "page boxes" not in p


def _form_pdf(signed: bool, size: float = 595) -> bytes:
    import pymupdf

    pdf = pymupdf.open()
    page = pdf.new_page(width=size, height=size)
    page.insert_text((72, 72), "Employee review form. Please sign below.", fontsize=12)
    if signed:  # a drawn signature: no text, so both files give the same document text
        page.draw_rect(pymupdf.Rect(72, 100, 300, 160), color=(1, 0, 0), fill=(1, 0, 0))
    data = pdf.tobytes()
    pdf.close()
    return data


def test_page_images_are_those_of_the_file_loaded_not_of_another_with_the_same_text():
    """Two users load PDFs with the same text (one copy signed): each sees its own pages. The
    bytes were kept by the document's sha256 (its text's), so the last one loaded was drawn for both."""
    import pymupdf

    from chunkscope.ingest import load_bytes
    from chunkscope.present import pdfpages

    signed, blank = _form_pdf(True), _form_pdf(False)
    a, b = load_bytes(signed, "alice.pdf"), load_bytes(blank, "bob.pdf")
    assert a.sha256 == b.sha256 and signed != blank
    pdfpages.remember(b, blank)
    pdfpages.remember(a, signed)
    assert pdfpages.pdf_bytes(b) == blank and pdfpages.pdf_bytes(a) == signed
    red = (255, 0, 0)
    at = (int(150 * pdfpages.DEFAULT_ZOOM), int(130 * pdfpages.DEFAULT_ZOOM))
    assert pymupdf.Pixmap(pdfpages.render_page(b, 1)[0]).pixel(*at) != red
    assert pymupdf.Pixmap(pdfpages.render_page(a, 1)[0]).pixel(*at) == red


def test_a_poster_sized_page_is_drawn_within_the_pixel_cap():
    """A 1 KB PDF with a 12,000-point page took 2 GB to draw at the default zoom."""
    from chunkscope.ingest import load_bytes
    from chunkscope.present import pdfpages

    data = _form_pdf(True, size=12_000)
    doc = load_bytes(data, "poster.pdf")
    pdfpages.remember(doc, data)
    _, w, h = pdfpages.render_page(doc, 1)
    assert w * h <= pdfpages.MAX_PIXELS and w >= 1900  # still a usable image, about 2,000 px square


def test_compare_whole_page_opens_where_a_block_over_a_page_break_is_cut():
    """A paragraph that goes on over the page break is one block; the page chunker cuts it at the
    break, on page 2, while the block starts on page 1: the whole-page view opened page 1 and the
    "here" tag sat at the block's start, so the cut was not on the page shown."""
    import pymupdf

    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_bytes

    pdf = pymupdf.open()
    for line in ("The maintainers keep the archive consistent across releases and",
                 "thus every upload is checked before it reaches the mirrors."):
        pdf.new_page().insert_text((72, 700), line, fontsize=11)
    doc = load_bytes(pdf.tobytes(), "two.pdf")
    pdf.close()
    report = analyze(doc, Settings(chunkers=("page", "whole"), candidates=("page", "whole"), coref="none",
                                   embedder=None))
    assert report.get("page").diagnostics["BI"].broken  # the page chunker breaks the paragraph
    at = AppTest.from_file(str(ROOT / "pages" / "1_Compare.py"), default_timeout=120)
    at.session_state["document"] = doc
    at.session_state["cs_reports"] = {"k": report}
    at.run()
    _ok(at)
    assert "(cut on page 2, " in at.info[0].value, at.info[0].value  # where the cut is, not where the block starts
    at.radio(key="cs_cmp_mode").set_value("a whole page / part").run()
    _ok(at)
    assert at.selectbox(key="cs_cmp_view").value == 1  # page 2 opens
    body = "".join(h.proto.body for h in at.get("html"))
    cut = doc.pages[1].start
    assert f'data-at="{cut}">▶ here' in body


def test_a_chunk_from_an_earlier_page_is_marked_in_the_app_figure_as_in_the_report(pdf_doc_report):
    """The legend says "…" marks a chunk that started on an earlier page: the Page view's Plotly
    figure draws the same label as the report's SVG (it drew the bare number)."""
    from chunkscope.present import pdfpages

    doc, report = pdf_doc_report
    found = []
    for cid in CHUNKERS:
        for page in range(2, len(doc.pages) + 1):
            lay = pdfpages.page_layers(doc, report.get(cid), page)
            found += [(lay, s) for s in lay.chunks if s.continues]
    assert found, "the fixture has a chunk over a page break"
    for lay, s in found:
        tag = f"{s.index + 1}…"
        assert f">{tag}</text>" in pdfpages.page_svg(lay)
        labels = [a.text for a in pdfpages.page_figure(lay).layout.annotations]
        assert f"<b>{tag}</b>" in labels and f"<b>{s.index + 1}</b>" not in labels
        assert s.tag == tag  # the one helper both draw with


def test_the_page_view_crops_a_page_s_empty_margins():
    """A new user found a LaTeX manual's pages too small to read on the Page view: the text spans 60% of the page's
    width. The figure shows what the page prints (plus a little white), and every chunk box stays inside it."""
    import pymupdf

    from chunkscope.ingest import load_bytes
    from chunkscope.present import pdfpages

    pdf = pymupdf.open()
    page = pdf.new_page(width=612, height=792)
    for k in range(20):  # a narrow column of text in the middle of the page
        page.insert_text((160, 200 + 18 * k), f"Line {k + 1} of a narrow column of prose, set in the middle.", fontsize=9)
    full = pdf.new_page(width=612, height=792)
    full.draw_rect(pymupdf.Rect(5, 5, 607, 787), color=(0, 0, 0), width=2)  # a page framed to its edges
    full.insert_text((40, 60), "A framed page.", fontsize=9)
    data = pdf.tobytes()
    doc = load_bytes(data, "narrow.pdf")
    assert pdfpages.content_box(doc, 1) is None  # the PDF's bytes are not held: no image, no crop
    pdfpages.remember(doc, data)
    x0, y0, x1, y1 = pdfpages.content_box(doc, 1)
    # the column (x 160-390, y 190-560) padded, and widened to 60% of the page each way, about its middle
    assert x0 < 146 and x1 > 390 and abs((x1 - x0) - 0.6 * 612) < 1 and y0 < 180 and y1 > 555, (x0, y0, x1, y1)
    assert x1 < 500 and y1 < 792
    assert pdfpages.content_box(doc, 2) is None  # it prints to its edges: nothing to crop
    lone = pymupdf.open()
    lone.new_page(width=612, height=792).insert_text((300, 760), "7", fontsize=9)  # a page holding its number only
    image = pdfpages._render("lone", 1, pdfpages.DEFAULT_ZOOM, lone.tobytes())  # too little text to load as a doc
    box = pdfpages._content_box(image, (612.0, 792.0))
    assert box is not None and box[2] - box[0] >= 0.6 * 612 - 1e-6 and box[3] - box[1] >= 0.6 * 792 - 1e-6, box
    from chunkscope.chunkers.registry import run_chunker
    from chunkscope.report import ChunkingResult, ChunkRow

    r = run_chunker(doc, "recursive-1100")
    res = ChunkingResult("recursive-1100", "r", {}, True, "ok", chunks=[ChunkRow(s.start, s.end, 1) for s in r.spans])
    lay = pdfpages.page_layers(doc, res, 1)
    boxes = [b for s in lay.chunks for b in s.boxes]
    assert boxes and all(x0 <= b[0] and b[2] <= x1 and y0 <= b[1] and b[3] <= y1 for b in boxes)
    fig = pdfpages.page_figure(lay, pdfpages.render_page(doc, 1), view=(x0, y0, x1, y1))
    assert list(fig.layout.xaxis.range) == [x0, x1] and list(fig.layout.yaxis.range) == [y1, y0]
    assert list(pdfpages.page_figure(lay).layout.xaxis.range) == [0, 612]  # without a view: the whole page
