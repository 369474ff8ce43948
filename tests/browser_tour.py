"""The app in a real browser: start ``streamlit run app.py``, upload, analyze, compare, inspect.

Shared by ``tests/test_browser.py`` (checks) and ``bench/screenshots.py`` (the README's
screenshots). Headless Chromium from the system (Debian's ``chromium``), driven by the
Playwright Python package with ``executable_path``: Playwright's own browser download is not
needed. ``missing()`` says why the tour cannot run here ("" when it can).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
CHUNKERS = ["recursive-1100+pp", "sentence-5", "fixed-512"]
WINNER, LOSER = "recursive-1100+pp", "fixed-512"


def chromium_path() -> str | None:
    for p in (os.environ.get("CHUNKSCOPE_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser",
              shutil.which("chromium"), shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return p
    return None


def missing() -> str:
    """Why the browser tour cannot run on this machine ("" when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no chromium executable (apt-get install chromium, or set CHUNKSCOPE_CHROMIUM)"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser_test_folders(tmp_path: Path, sample_name: str) -> tuple[Path, Path, Path]:
    """For a browser test: skip it (with the reason) when Chromium or Playwright is missing; else
    (the injected sample written as ``sample_name`` under ``tmp_path``, the screenshot folder:
    ``$CHUNKSCOPE_SCREENSHOTS`` or the test's own, an empty cache folder)."""
    import pytest
    from inspector_sample import sample_markdown

    why = missing()
    if why:
        pytest.skip(f"browser test skipped: {why}")
    sample = tmp_path / sample_name
    sample.write_text(sample_markdown(), encoding="utf-8")
    shots = Path(os.environ.get("CHUNKSCOPE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    cache = tmp_path / "cache"
    cache.mkdir()
    return sample, shots, cache


@contextlib.contextmanager
def streamlit_app(cache_dir: Path, timeout: float = 90.0):
    """``streamlit run app.py`` on a free port; yields the base URL; stops it afterwards."""
    port = free_port()
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(cache_dir), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    log = open(cache_dir / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
         str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.time()
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited ({proc.returncode}); see {cache_dir / 'streamlit.log'}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() - t0 > timeout:
                raise RuntimeError("streamlit did not answer within "
                                   f"{timeout:.0f} s; see {cache_dir / 'streamlit.log'}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def browser(dark: bool = False):
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="cs-chromium-") as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            profile, executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1500, "height": 1100}, color_scheme="dark" if dark else "light",
            device_scale_factor=1)
        try:
            yield ctx
        finally:
            ctx.close()


def _wait_idle(page, timeout: float = 240_000) -> None:
    """Wait until the script run is over (Streamlit's running indicator gone)."""
    page.wait_for_timeout(150)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


def open_with_upload(ctx, url: str, document: Path, chunkers=CHUNKERS, coref: str = "heuristic"):
    """A new page on the app with these chunkers (page address), ``document`` uploaded; returns the page."""
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    q = urllib.parse.urlencode({"chunkers": ",".join(chunkers), "candidates": ",".join(chunkers), "coref": coref})
    page.goto(f"{url}/?{q}", wait_until="domcontentloaded")
    page.get_by_role("button", name="Analyze").wait_for(timeout=120_000)
    _wait_idle(page)
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(document))
    return page


def _nav(page, label: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=label).first.click()
    _wait_idle(page)


def _top(page, locator) -> None:
    """Scroll so that ``locator`` is at the top of the viewport, and move the mouse out of the way."""
    locator.first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.mouse.move(5, 995)
    page.wait_for_timeout(400)


def _alert(page) -> str:
    return page.locator('[data-testid="stAlert"]').first.inner_text()


# where the "▶ here" marker (and the other columns' "▷ here" at the same place) sits in the scrolling box that
# holds it, one entry per marker (top: pixels from the box's top)
HERE_IN_BOX = """() => [...document.querySelectorAll('[data-cs-here]')].map(el => {
  let box = el.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight + 4 && /(auto|scroll)/.test(getComputedStyle(box).overflowY)))
    box = box.parentElement;
  if (!box) return {box: false, at: el.dataset.csHere};
  return {box: true, at: el.dataset.csHere, top: el.getBoundingClientRect().top - box.getBoundingClientRect().top,
          height: box.clientHeight, scrollTop: box.scrollTop, scrollHeight: box.scrollHeight};
})"""


def _timed(page, action, until: str, arg=None, timeout: float = 60_000) -> float:
    """Seconds from ``action()`` until the JS predicate ``until`` holds (what the user waits for)."""
    t0 = time.perf_counter()
    action()
    page.wait_for_function(until, arg=arg, timeout=timeout, polling=20)
    dt = time.perf_counter() - t0
    _wait_idle(page)
    return dt


def _radar_plotted(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')].map(p => (p.data || [])"
        ".filter(t => t.type === 'scatterpolar' && !(t.name || '').endsWith(' 95%'))"  # not the interval bands
        ".map(t => t.name)).find(n => n.length) || []")


def _radar_listed(page) -> list[str]:
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="radar").first
    return [t.strip() for t in box.inner_text().split("\n")[1:] if t.strip()]


ALERT_HAS = "t => [...document.querySelectorAll('[data-testid=\"stAlert\"]')].some(a => a.innerText.includes(t))"


def run_tour(url: str, sample: Path, shots: Path | None = None, dark: bool = False) -> dict:
    """Drive the app; return what was seen (for the test's checks) and timings.

    Saves ``overview.png``, ``overview-charts.png``, ``compare.png``, ``compare-pairs.png`` and
    ``inspector.png`` (with a ``-dark`` suffix when ``dark``) under ``shots`` when given.
    """
    seen: dict = {"dialogs": [], "console_errors": [], "timings": {}}
    sfx = "-dark" if dark else ""
    with browser(dark) as ctx:
        page = ctx.new_page()
        page.set_default_timeout(90_000)  # a loaded CI machine (2 shared cores) can be slow
        page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        page.on("console", lambda m: m.type == "error" and seen["console_errors"].append(m.text))
        q = urllib.parse.urlencode({"chunkers": ",".join(CHUNKERS), "candidates": ",".join(CHUNKERS),
                                    "coref": "heuristic"})
        page.goto(f"{url}/?{q}", wait_until="domcontentloaded")
        page.get_by_role("button", name="Analyze").wait_for(timeout=120_000)
        _wait_idle(page)
        seen["nav"] = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        legend = page.locator(".cs-metric-legend")
        seen["legend"] = legend.first.inner_text() if legend.count() and legend.first.is_visible() else ""
        # the embedding model the chunks will be indexed with (sidebar): chunks over its limit get flagged
        page.get_by_text("Your embedding model", exact=False).first.click()
        page.wait_for_timeout(500)
        _wait_idle(page)
        option = page.get_by_role("option", name="all-MiniLM-L6-v2", exact=True).first
        for _ in range(3):  # the dropdown may close again while the page settles: open it until it shows
            page.get_by_role("combobox", name="Index with").first.click()
            try:
                option.wait_for(timeout=10_000)
                break
            except Exception:
                page.keyboard.press("Escape")
        option.click()
        _wait_idle(page)
        page.get_by_text("Your embedding model", exact=False).first.click()  # fold it again
        _wait_idle(page)

        t0 = time.perf_counter()
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(sample))
        page.get_by_text(sample.stem, exact=True).first.wait_for(timeout=60_000)  # the summary's subheader
        _wait_idle(page)
        seen["timings"]["upload_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        page.get_by_role("button", name="Analyze").click()
        page.get_by_text("Leads ", exact=False).first.wait_for(timeout=300_000)
        seen["timings"]["analyze_s"] = time.perf_counter() - t0
        _wait_idle(page)
        card = page.locator(".st-key-cs_winner_card")
        seen["winner_card"] = card.inner_text()
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 3", timeout=60_000)
        seen["radar_traces"] = _radar_plotted(page)
        seen["radar_listed"] = _radar_listed(page)
        seen["downloads"] = page.locator('[data-testid="stDownloadButton"]').count()
        seen["model_limit_caption"] = page.get_by_text("over model limit", exact=False).count()
        seen["escaped_text_shown"] = page.get_by_text("<script>window.__pwned", exact=False).count() > 0
        if shots:
            _top(page, page.locator("h1"))
            page.screenshot(path=str(shots / f"overview{sfx}.png"))
            _top(page, page.locator('[data-testid="stMultiSelect"]').filter(has_text="radar"))
            page.wait_for_timeout(600)
            page.screenshot(path=str(shots / f"overview-charts{sfx}.png"))

        # the exports download (their content is built on click)
        seen["exports"] = {}
        for label, name in (("Report (JSON)", "json"), ("Winning chunks", "jsonl"), ("HTML report", "html")):
            with page.expect_download(timeout=60_000) as dl:
                page.locator('[data-testid="stDownloadButton"] button', has_text=label).first.click()
            path = dl.value.path()
            seen["exports"][name] = {"file": dl.value.suggested_filename,
                                     "head": Path(path).read_text(encoding="utf-8")[:20_000]}

        # a weight change that changes the winner: the radar lists and plots the new winner and runner-up
        page.get_by_text("Metric weights", exact=True).first.click()
        page.wait_for_timeout(500)
        sliders = page.get_by_role("slider")
        for i in (0, 2, 3, 4):  # RC, DCC, BI, SC to 0: ICC alone decides
            sliders.nth(i).focus()
            page.keyboard.press("Home")
            _wait_idle(page)
        page.wait_for_timeout(800)
        seen["reweighted"] = {"winner": next(ln for ln in card.inner_text().split("\n") if "🏆" in ln)
                              .replace("🏆", "").strip(),
                              "listed": _radar_listed(page), "plotted": _radar_plotted(page)}
        for i in (0, 2, 3, 4):  # back to 1.0 (steps of 0.25)
            sliders.nth(i).focus()
            for _ in range(4):
                page.keyboard.press("ArrowRight")
            _wait_idle(page)
        page.get_by_text("Metric weights", exact=True).first.click()
        page.wait_for_timeout(500)
        _wait_idle(page)

        t0 = time.perf_counter()
        _nav(page, "Compare")
        page.locator(".cs-broken").first.wait_for(timeout=60_000)
        seen["timings"]["open_compare_s"] = time.perf_counter() - t0
        seen["compare_broken"] = page.locator(".cs-broken").count()
        seen["compare_broken_tag"] = page.locator(".cs-btag").first.inner_text()
        seen["compare_cut"] = page.locator(".cs-cut").count()
        seen["compare_focus"] = page.locator("#cs-here").count()
        seen["compare_info"] = _alert(page)
        seen["compare_over_limit"] = page.get_by_text("-token limit of all-MiniLM-L6-v2", exact=False).count()
        if shots:
            page.wait_for_timeout(600)
            _top(page, page.locator('[data-testid="stRadio"]', has_text="Problem kind"))
            page.screenshot(path=str(shots / f"compare{sfx}.png"))
        seen["timings"]["kind_switch_s"] = _timed(
            page, lambda: page.locator('[data-testid="stRadio"] label', has_text="split pairs").first.click(),
            ALERT_HAS, "splits pair")
        page.locator(".cs-pro").first.wait_for(timeout=30_000)
        seen["compare_pairs"] = {"entity": page.locator(".cs-ent").count(), "pronoun": page.locator(".cs-pro").count(),
                                 "tags": page.locator(".cs-ptag").all_inner_texts()}
        seen["compare_info_pairs"] = _alert(page)
        if shots:
            page.wait_for_timeout(600)
            _top(page, page.locator('[data-testid="stRadio"]', has_text="Problem kind"))
            page.screenshot(path=str(shots / f"compare-pairs{sfx}.png"))
        page.locator('[data-testid="stRadio"] label', has_text="broken blocks").first.click()
        _wait_idle(page)
        seen["timings"]["next_problem_s"] = _timed(
            page, lambda: page.get_by_role("button", name="next problem ▶").click(), ALERT_HAS, "Problem 2 of")
        page.wait_for_timeout(1500)
        seen["next_problem_here"] = page.evaluate(HERE_IN_BOX)  # every column at the problem, not only its own
        # the whole page / part holding the problem: its text box scrolls to the "▶ here" marker
        page.locator('[data-testid="stRadio"] label', has_text="a whole page / part").first.click()
        page.get_by_text("parts hold", exact=False).first.wait_for(timeout=30_000)
        _wait_idle(page)
        page.wait_for_timeout(1500)
        seen["whole_page_here"] = page.evaluate(HERE_IN_BOX)

        t0 = time.perf_counter()
        _nav(page, "Chunk inspector")
        page.get_by_text("Heading path:", exact=False).first.wait_for(timeout=60_000)
        seen["timings"]["open_inspector_s"] = time.perf_counter() - t0
        page.get_by_role("combobox", name="Chunking").first.click()
        page.get_by_role("option", name=LOSER, exact=True).first.click()
        _wait_idle(page)
        box = page.get_by_label("Chunk (1–", exact=False).first
        seen["timings"]["select_chunk_s"] = _timed(
            page, lambda: (box.fill("2"), box.press("Enter")),  # chunk #1 is shown first
            "() => document.body.innerText.includes('chunk #2 of')")
        seen["inspector_text"] = page.locator(".cs-hl").first.inner_text()[:2000]
        # ...or click a row of the chunk table (glide grid: the row marker column on the left)
        grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
        seen["timings"]["click_row_s"] = _timed(
            page, lambda: page.mouse.click(grid["x"] + 15, grid["y"] + 36 + 35 * 2 + 17),
            "() => document.body.innerText.includes('chunk #3 of')")  # the third row
        page.get_by_label("Chunk (1–", exact=False).first.fill("1")
        page.get_by_label("Chunk (1–", exact=False).first.press("Enter")
        page.wait_for_function("() => document.body.innerText.includes('chunk #1 of')")
        _wait_idle(page)
        if shots:
            _top(page, page.locator("h1"))
            page.screenshot(path=str(shots / f"inspector{sfx}.png"))

        seen["pwned"] = page.evaluate("() => window.__pwned === undefined ? null : window.__pwned")
        seen["title"] = page.title()
        seen["traceback"] = page.get_by_text("Traceback", exact=False).count()
    return seen
