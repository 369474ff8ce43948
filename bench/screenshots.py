"""Screenshots for the README (assets/screenshots/) and the app's timings on a long document.

    .venv/bin/python bench/screenshots.py            # the tour on the injected sample -> assets/screenshots/
    .venv/bin/python bench/screenshots.py --dark     # also the dark-theme shots
    .venv/bin/python bench/screenshots.py --gdpr     # upload -> winner time for the GDPR dev document

Same browser code as tests/test_browser.py (tests/browser_tour.py). Exits 0 with a note when
Chromium or playwright is missing. Screenshots are PNG, each kept under 400 KB.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import browser_tour as bt  # noqa: E402
from inspector_sample import sample_markdown  # noqa: E402

GDPR = ROOT.parent / "shared" / "corpus" / "clair-dev" / "parsed" / "Norma (légal)_GDPR.json"
GDPR_MENTIONS = GDPR.parent.parent / "mentions" / "Norma (légal)_GDPR.parquet"
ALERT_HAS = bt.ALERT_HAS


def tour(out: Path, dark: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sample = tmp / "policy_injected.md"
        sample.write_text(sample_markdown(), encoding="utf-8")
        with bt.streamlit_app(tmp) as url:
            seen = bt.run_tour(url, sample, out)
            if dark:
                bt.run_tour(url, sample, out, dark=True)
    print(json.dumps(seen["timings"], indent=1))
    for p in sorted(out.glob("*.png")):
        kb = p.stat().st_size / 1024
        print(f"{p.relative_to(ROOT)}  {kb:.0f} KB{'  (over 400 KB!)' if kb > 400 else ''}")


def gdpr(chunkers: str | None) -> None:
    """Upload the GDPR reference JSON and its mentions in the app, press Analyze, time the winner;
    then time interactions once the analysis is cached."""
    import urllib.parse

    if not GDPR.is_file():
        print(f"skipped: {GDPR} not found")
        return
    res: dict = {}
    with tempfile.TemporaryDirectory() as d, bt.streamlit_app(Path(d)) as url, bt.browser() as ctx:
        page = ctx.new_page()
        q = "?" + urllib.parse.urlencode({"chunkers": chunkers}) if chunkers else ""
        page.goto(url + "/" + q)
        page.get_by_role("button", name="Analyze").wait_for(timeout=120_000)
        bt._wait_idle(page)
        t0 = time.perf_counter()
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(GDPR))
        page.get_by_text("Norma (légal)_GDPR", exact=True).first.wait_for(timeout=120_000)
        bt._wait_idle(page)
        res["upload_parse_s"] = time.perf_counter() - t0
        page.get_by_text("Embeddings and coreference").first.click()
        page.locator('[data-testid="stFileUploader"] input[type=file]').nth(1).set_input_files(str(GDPR_MENTIONS))
        page.get_by_text("Using mentions", exact=False).or_(page.get_by_text("GDPR.parquet")).first.wait_for()
        bt._wait_idle(page)
        res["mentions_upload_s"] = time.perf_counter() - t0 - res["upload_parse_s"]
        t1 = time.perf_counter()
        page.get_by_role("button", name="Analyze").click()
        page.get_by_text("Leads ", exact=False).first.wait_for(timeout=900_000)
        res["analyze_click_to_winner_s"] = time.perf_counter() - t1
        res["upload_to_winner_s"] = time.perf_counter() - t0
        bt._wait_idle(page)
        res["winner_card"] = page.locator(".st-key-cs_winner_card").inner_text()[:300]
        res["coref"] = page.get_by_text("precomputed", exact=False).count()
        # cached interactions
        slider = page.get_by_role("slider").first
        t = time.perf_counter()
        bt._nav(page, "Compare")
        page.locator(".cs-hl").first.wait_for(timeout=60_000)
        res["open_compare_s"] = time.perf_counter() - t
        res["next_problem_s"] = bt._timed(page, lambda: page.get_by_role("button", name="next problem ▶").click(),
                                          ALERT_HAS, "Problem 2 of")
        res["kind_switch_s"] = bt._timed(
            page, lambda: page.locator('[data-testid="stRadio"] label', has_text="split pairs").first.click(),
            ALERT_HAS, "splits pair")
        res["whole_page_s"] = bt._timed(
            page, lambda: page.locator('[data-testid="stRadio"] label', has_text="a whole page").first.click(),
            "() => document.body.innerText.includes('parts hold')")
        t = time.perf_counter()
        bt._nav(page, "Chunk inspector")
        page.get_by_text("Heading path:", exact=False).first.wait_for(timeout=60_000)
        res["open_inspector_s"] = time.perf_counter() - t
        box = page.get_by_label("Chunk (0–", exact=False).first
        res["select_chunk_s"] = bt._timed(page, lambda: (box.fill("40"), box.press("Enter")),
                                          "() => document.body.innerText.includes('chunk #40 of')")
        t = time.perf_counter()
        bt._nav(page, "Overview")
        page.get_by_text("Leads ", exact=False).first.wait_for(timeout=60_000)
        res["back_to_overview_s"] = time.perf_counter() - t
        del slider
    print(json.dumps(res, indent=1, ensure_ascii=False))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "screenshots")
    ap.add_argument("--dark", action="store_true", help="also take dark-theme screenshots")
    ap.add_argument("--gdpr", action="store_true", help="time upload -> winner on the GDPR dev document")
    ap.add_argument("--chunkers", help="with --gdpr: chunker ids to run (default: the app's default set)")
    args = ap.parse_args()
    why = bt.missing()
    if why:
        print(f"skipped: {why}")
        return 0
    if args.gdpr:
        gdpr(args.chunkers)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    tour(args.out, args.dark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
