"""The Compare page's first opening in a browser session, after an analysis (GDPR by default).

    .venv/bin/python bench/first_open.py [DOCUMENT] [--pause-ms 1000 6000]

Starts ``streamlit run app.py`` (loopback), uploads the document in headless Chromium (Playwright),
presses Analyze, waits for the final winner card, then, for each pause, waits that long (a user
reading the winner card) and opens Compare, goes back to the Overview and opens Compare again. Prints,
per opening, the seconds from the click to Compare's title, to the end of the script run, and to the
first websocket frame the browser sends (how long the browser took before asking the server).
Skips (exit 0) when Chromium or Playwright is missing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

TITLES = {"Compare": "Compare chunkings", "Overview": "ChunkScope"}


def session(doc: Path, pause_ms: int) -> list[tuple[str, float, float, float | None]]:
    import browser_tour as bt

    frames: list[tuple[str, float]] = []
    out = []
    with tempfile.TemporaryDirectory() as tmp, bt.streamlit_app(Path(tmp)) as url, bt.browser() as ctx:
        page = ctx.new_page()
        page.set_default_timeout(300_000)
        page.on("websocket", lambda ws: ws.on("framesent", lambda _p: frames.append(("sent", time.perf_counter()))))
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("button", name="Analyze").wait_for()
        bt._wait_idle(page)
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(doc))
        page.get_by_text("Tokens (o200k)").first.wait_for()
        bt._wait_idle(page)
        page.get_by_role("button", name="Analyze").click()
        page.get_by_text("Leads ", exact=False).first.wait_for()
        page.wait_for_function("() => !document.querySelector('.cs-provisional')")
        bt._wait_idle(page)
        page.wait_for_timeout(pause_ms)
        for label in ("Compare", "Overview", "Compare"):
            t0, n0 = time.perf_counter(), len(frames)
            page.locator('[data-testid="stSidebarNav"] a', has_text=label).first.click()
            page.locator("h1", has_text=TITLES[label]).first.wait_for()
            title = time.perf_counter() - t0
            bt._wait_idle(page)
            done = time.perf_counter() - t0
            sent = next((t - t0 for kind, t in frames[n0:] if kind == "sent"), None)
            out.append((label, title, done, sent))
            page.wait_for_timeout(800)
    return out


def main() -> int:
    import browser_tour as bt

    ap = argparse.ArgumentParser()
    ap.add_argument("document", nargs="?", default=str(ROOT.parent / "shared" / "corpus" / "clair-dev" / "parsed"
                                                      / "Norma (légal)_GDPR.json"))
    ap.add_argument("--pause-ms", type=int, nargs="+", default=[1000, 6000])
    a = ap.parse_args()
    why = bt.missing()
    if why:
        print(f"skipped: {why}")
        return 0
    doc = Path(a.document)
    print(f"{doc.name}: opening Compare after the analysis (seconds from the click)\n")
    print("| pause after the winner card | opening | to the title | to the end of the run | browser sent the request after |")
    print("|---:|---|---:|---:|---:|")
    for pause in a.pause_ms:
        n = 0
        for label, title, done, sent in session(doc, pause):
            if label != "Compare":
                continue
            n += 1
            print(f"| {pause / 1000:.0f} s | {'first' if n == 1 else 'second'} | {title:.2f} | {done:.2f} | "
                  f"{'–' if sent is None else f'{sent:.2f}'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
