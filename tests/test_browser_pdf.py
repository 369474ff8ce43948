"""The page view in a real browser: upload a PDF, analyze, open Page view, click a chunk on the
page and see it selected (its text shown, its boxes outlined in yellow). Skips without Chromium."""

from __future__ import annotations

import pytest
from browser_tour import _nav, _wait_idle, browser, missing, open_with_upload, streamlit_app
from pdf_factory import make_pdf

pytestmark = pytest.mark.timeout(400)
CHUNKERS = ["sentence-5", "fixed-512"]


def test_click_a_chunk_on_the_page(tmp_path):
    why = missing()
    if why:
        pytest.skip(f"browser test skipped: {why}")
    pdf = tmp_path / "retention.pdf"
    pdf.write_bytes(make_pdf(3))
    cache = tmp_path / "cache"
    cache.mkdir()
    with streamlit_app(cache) as url, browser() as ctx:
        page = open_with_upload(ctx, url, pdf)
        page.get_by_text("Extraction health", exact=False).first.wait_for()
        _wait_idle(page)
        page.get_by_role("button", name="Analyze").click()
        page.get_by_text("Leads ", exact=False).first.wait_for(timeout=300_000)
        _wait_idle(page)
        _nav(page, "Page view")
        page.wait_for_selector(".js-plotly-plot")
        _wait_idle(page)
        assert page.get_by_text("chunk #", exact=False).count() == 0  # nothing selected yet
        # what the page prints is in view (its white margins cropped, pdfpages.content_box), not only its text
        # boxes: this page prints from x = 50 (its header line) to about 520 of an A4 page's 595 points
        shown = page.evaluate("() => document.querySelector('.js-plotly-plot')._fullLayout.xaxis.range")
        assert 20 < shown[0] < 50 and 500 < shown[1] < 580, shown
        yellow = "() => [...document.querySelectorAll('.js-plotly-plot .scatterlayer path.js-line')]" \
                 ".filter(p => (p.style.stroke || '').includes('240, 228, 66')).length"
        assert page.evaluate(yellow) == 0
        pts = page.locator(".js-plotly-plot .scatterlayer .trace .points path")
        assert pts.count() > 2
        box = pts.nth(1).bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.get_by_text("chunk #", exact=False).first.wait_for(timeout=60_000)
        _wait_idle(page)
        page.wait_for_function(yellow.replace("=> [", "=> [").rstrip() + " > 0", timeout=30_000)
        assert page.locator('[data-testid="stException"]').count() == 0
