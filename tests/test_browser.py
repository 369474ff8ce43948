"""End to end in a real browser: streamlit run app.py + headless Chromium (Debian's) via Playwright.

Uploads a sample with injected ``<script>`` / ``<img onerror>``, runs the analysis, checks the
winner card, the radar (plotly), a highlighted broken block and split pair on the Compare page,
the Chunk inspector, and that no injected script ran. Screenshots go to the test's temporary
folder (or ``$CHUNKSCOPE_SCREENSHOTS``); ``bench/screenshots.py`` makes the README's.
Skips cleanly when Chromium or the playwright package is missing.
"""

from __future__ import annotations

import json

import pytest
from browser_tour import LOSER, WINNER, browser_test_folders, run_tour, streamlit_app

pytestmark = pytest.mark.timeout(300)


def test_tour_in_a_real_browser(tmp_path):
    sample, shots, cache = browser_test_folders(tmp_path, "policy_injected.md")
    with streamlit_app(cache) as url:
        seen = run_tour(url, sample, shots)

    # nothing injected ran: no global, no title change, no dialog
    assert seen["pwned"] is None and "PWNED" not in seen["title"] and not seen["dialogs"]
    assert seen["escaped_text_shown"]  # ... and the markup shows as text
    assert seen["traceback"] == 0
    # the navigation calls the first page Overview; the metric legend is on the page, in words
    assert seen["nav"][:1] == ["Overview"] and "app" not in seen["nav"], seen["nav"]
    assert "References Completeness" in seen["legend"] and "Size Compliance" in seen["legend"]
    # chunks over the chosen embedding model's limit (all-MiniLM-L6-v2, 256 word pieces) are flagged
    assert seen["model_limit_caption"] >= 1 and seen["compare_over_limit"] >= 1
    # the winner card: winner, margin over the runner-up, where it leads and trails
    card = seen["winner_card"]
    assert WINNER in card and f"vs {LOSER}" in card and "Leads" in card and "Trails it on" in card
    assert seen["radar_traces"] == [WINNER, LOSER] == seen["radar_listed"]  # winner and runner-up overlaid
    # after a weight change that changes the winner, the radar lists and plots the same (new) pair
    rw = seen["reweighted"]
    assert rw["winner"] != WINNER and rw["listed"] == rw["plotted"] and rw["plotted"][0] == rw["winner"], rw
    assert seen["downloads"] == 6  # report JSON, winning chunks JSONL, all chunks CSV and Parquet, HTML report, settings (TOML)
    ex = seen["exports"]
    assert ex["json"]["file"].endswith(".chunkscope.json") and '"schema": "chunkscope.report/1"' in ex["json"]["head"]
    first = json.loads(ex["jsonl"]["head"].splitlines()[0])
    assert first["chunker"] == WINNER and {"id", "text", "start", "end", "tokens", "document_sha256"} <= set(first)
    assert "Adaptive winner: " + WINNER in ex["html"]["head"] and "<script>window.__pwned" not in ex["html"]["head"]
    # Compare: the loser breaks the table (outlined, tagged, the cutting boundary marked) ...
    # every column's text box shows the current problem's place ("▶ here" in its column, "▷ here" in the
    # other), after next problem ▶ and in the whole page (opened at the problem, not at its top)
    for here in (seen["next_problem_here"], seen["whole_page_here"]):
        assert len(here) == 2 and len({h["at"] for h in here}) == 1, here
        assert all(h["box"] and 0 <= h["top"] <= h["height"] for h in here), here
    assert all(h["scrollTop"] > 0 for h in seen["whole_page_here"]), seen["whole_page_here"]
    assert seen["compare_broken"] > 0 and seen["compare_cut"] >= 1 and seen["compare_focus"] == 1
    assert seen["compare_broken_tag"] == "✂ broken table"
    assert "cuts table block" in seen["compare_info"] and LOSER in seen["compare_info"]
    # ... and splits "It" from "The Northwind Gateway" (both marked with the same tag)
    pairs = seen["compare_pairs"]
    assert pairs["entity"] >= 1 and pairs["pronoun"] >= 1 and any(pairs["tags"].count(t) == 2 for t in pairs["tags"])
    assert "“It” from its antecedent “The Northwind Gateway”" in seen["compare_info_pairs"]
    # the Chunk inspector shows the selected chunk (of the loser, cutting the table)
    assert "Customer invoices" in seen["inspector_text"]
    assert seen["timings"]["click_row_s"] < 30  # clicking a row of the chunk table selects that chunk
    for name in ("overview", "compare", "compare-pairs", "inspector"):
        assert (shots / f"{name}.png").stat().st_size > 10_000
