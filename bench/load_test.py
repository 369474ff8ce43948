"""Load test of a shared server: real browsers at once, then many analyses in a row (loopback only).

    .venv/bin/python bench/load_test.py [--sessions 4] [--row 20] [--timeout-s 1500]

Starts ONE app process in shared mode on 127.0.0.1 (``CHUNKSCOPE_SHARED=1``, slots = sessions),
then with headless Chromium (Playwright, one browser context per session, so nothing is shared
between them but the server):

1. lone runs: each document analyzed by a single session, one after another (the reference
   results and the lone time);
2. concurrent: ``--sessions`` contexts upload *different* documents and press Analyze at the
   same time; each result must equal the lone run of the same document (winner, every
   chunking's metrics and score);
3. in a row: ``--row`` analyses one after another in the same server process (the documents in
   turn, SC max tokens changed each time so that every one is a real analysis), RSS read after each.

Prints: all complete, results equal, peak RSS (VmHWM), RSS growth over the in-a-row runs (first
half vs second half mean, and last minus first), the slowest concurrent session against the lone
time of the same document. Bounded: ``--timeout-s`` for the whole bench; skips (exit 0) with a
message when Chromium or Playwright is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CHUNKERS = ["recursive-1100+pp", "sentence-5", "fixed-512"]


def documents(tmp: Path) -> list[Path]:
    docs = [ROOT / "assets" / "sample_policy.md", ROOT / "assets" / "sample_technical.md",
            ROOT / "assets" / "sample_report.pdf"]
    seed = sorted((ROOT.parent / "shared" / "seeds").glob("002_*.txt"))
    if seed:
        p = tmp / "paper.txt"
        p.write_text(seed[0].read_text(encoding="utf-8")[:60_000], encoding="utf-8")
    else:
        p = tmp / "generated.md"
        p.write_text("\n\n".join(f"## Section {i}\n\nThis section explains topic {i}. It has two sentences."
                                 for i in range(200)), encoding="utf-8")
    return [d for d in docs if d.is_file()] + [p]


def rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in kB."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            vals[k] = int(v.split()[0])
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


def start_server(tmp: Path, slots: int) -> tuple[subprocess.Popen, str]:
    from browser_tour import free_port

    port = free_port()
    env = {**os.environ, "CHUNKSCOPE_SHARED": "1", "CHUNKSCOPE_BIND": "127.0.0.1",
           "CHUNKSCOPE_MAX_CONCURRENT": str(slots), "CHUNKSCOPE_WORKSPACE_ROOT": str(tmp / "ws"),
           "CHUNKSCOPE_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    log = open(tmp / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    t0 = time.time()
    while time.time() - t0 < 120:
        if proc.poll() is not None:
            raise SystemExit(f"streamlit exited; see {tmp / 'streamlit.log'}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("streamlit did not start within 120 s")


def essence(report: dict) -> dict:
    """What must be equal between a concurrent and a lone run: winner, metrics and scores."""
    return {"winner": report.get("winner"),
            "chunkings": {c["id"]: {"status": c["status"], "chunks": len(c.get("chunks", [])),
                                    "metrics": {k: (None if v is None else round(v, 9)) for k, v in c["metrics"].items()},
                                    "score": None if c.get("score") is None else round(c["score"], 9)}
                          for c in report.get("chunkings", [])}}


def analyze_in_browser(browser, url: str, doc: Path, max_tokens: int, timeout_ms: int) -> tuple[dict, float]:
    """One browser context: open, upload ``doc``, Analyze, download the JSON report. (report, seconds)."""
    from browser_tour import _wait_idle

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.set_default_timeout(timeout_ms)
        q = urllib.parse.urlencode({"chunkers": ",".join(CHUNKERS), "candidates": ",".join(CHUNKERS),
                                    "coref": "heuristic", "max_tokens": max_tokens})
        page.goto(f"{url}/?{q}", wait_until="domcontentloaded")
        page.get_by_role("button", name="Analyze").wait_for()
        _wait_idle(page, timeout_ms)
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(doc))
        page.get_by_text(doc.stem, exact=True).first.wait_for()
        _wait_idle(page, timeout_ms)
        t0 = time.perf_counter()
        page.get_by_role("button", name="Analyze").click()
        page.locator('[data-testid="stDownloadButton"] button', has_text="Report (JSON)").first.wait_for()
        took = time.perf_counter() - t0
        _wait_idle(page, timeout_ms)
        with page.expect_download() as dl:
            page.locator('[data-testid="stDownloadButton"] button', has_text="Report (JSON)").first.click()
        report = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
        return report, took
    finally:
        ctx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--row", type=int, default=20)
    ap.add_argument("--timeout-s", type=float, default=1500)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    from browser_tour import CHROMIUM_ARGS, chromium_path, missing

    why = missing()
    if why:
        print(f"load_test: skipped: {why}")
        return 0
    deadline = time.time() + args.timeout_s
    timer = threading.Timer(args.timeout_s, lambda: os._exit(3))  # a hard bound on the whole bench
    timer.daemon = True
    timer.start()
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="cs-load-") as d:
        tmp = Path(d)
        docs = documents(tmp)[: args.sessions]
        proc, url = start_server(tmp, args.sessions)
        try:
            from playwright.sync_api import sync_playwright

            ms = int(max(60, deadline - time.time()) * 1000)
            lone: dict[str, tuple[dict, float]] = {}
            warm: dict[str, float] = {}
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                for doc in docs:  # cold: the reference results (model load, first caches)
                    lone[doc.name] = analyze_in_browser(browser, url, doc, 1100, ms)
                    print(f"lone cold   {doc.name:24} {lone[doc.name][1]:6.1f}s  winner {lone[doc.name][0]['winner']}",
                          flush=True)
                for doc in docs:  # warm: what a lone session waits once the server is up
                    rep, warm[doc.name] = analyze_in_browser(browser, url, doc, 1100, ms)
                    print(f"lone warm   {doc.name:24} {warm[doc.name]:6.1f}s  equal to cold: "
                          f"{essence(rep) == essence(lone[doc.name][0])}", flush=True)
                browser.close()
            after_lone = rss_kb(proc.pid)
            if True:
                # concurrent: one browser process per session (Playwright's sync API is one thread each)
                results: dict[str, tuple[dict, float] | str] = {}

                def session(doc: Path) -> None:
                    try:
                        with sync_playwright() as pw2:
                            b = pw2.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                            try:
                                results[doc.name] = analyze_in_browser(b, url, doc, 1100, ms)
                            finally:
                                b.close()
                    except Exception as exc:  # noqa: BLE001 - reported below
                        results[doc.name] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"

                ts = [threading.Thread(target=session, args=(doc,)) for doc in docs]
                t0 = time.perf_counter()
                for t in ts:
                    t.start()
                for t in ts:
                    t.join(max(1, deadline - time.time()))
                wall = time.perf_counter() - t0
                equal, slow = [], []
                for doc in docs:
                    r = results.get(doc.name, "did not finish")
                    if isinstance(r, str):
                        print(f"concurrent  {doc.name:24} FAILED {r}")
                        equal.append(False)
                        continue
                    same = essence(r[0]) == essence(lone[doc.name][0])
                    equal.append(same)
                    slow.append((r[1], warm[doc.name], doc.name))
                    print(f"concurrent  {doc.name:24} {r[1]:6.1f}s  (lone warm {warm[doc.name]:.1f}s)  "
                          f"equal to lone: {same}", flush=True)
                out["concurrent"] = {"sessions": len(docs), "complete": sum(not isinstance(results.get(x.name), str)
                                                                           and x.name in results for x in docs),
                                     "equal": all(equal), "wall_s": round(wall, 1)}
                if slow:
                    worst = max(slow)
                    out["concurrent"]["slowest"] = {"doc": worst[2], "s": round(worst[0], 1),
                                                    "lone_warm_s": round(worst[1], 1),
                                                    "ratio": round(worst[0] / worst[1], 2)}
                # in a row, one server process
                with sync_playwright() as pw3:
                    b = pw3.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                    rss = []
                    done = 0
                    for i in range(args.row):
                        if time.time() > deadline - 30:
                            break
                        doc = docs[i % len(docs)]
                        rep, took = analyze_in_browser(b, url, doc, 1000 + i, ms)
                        done += int(bool(rep.get("chunkings")))
                        rss.append(rss_kb(proc.pid)[0])
                        print(f"row {i + 1:2}      {doc.name:24} {took:6.1f}s  RSS {rss[-1] / 1024:.0f} MB", flush=True)
                    b.close()
                half = max(1, len(rss) // 2)
                out["row"] = {"runs": args.row, "complete": done,
                              "rss_first_mb": round(rss[0] / 1024) if rss else None,
                              "rss_last_mb": round(rss[-1] / 1024) if rss else None,
                              "growth_mb": round((rss[-1] - rss[0]) / 1024) if rss else None,
                              "first_half_mean_mb": round(sum(rss[:half]) / half / 1024) if rss else None,
                              "second_half_mean_mb": round(sum(rss[half:]) / max(1, len(rss) - half) / 1024) if rss else None}
                out["rss_after_lone_mb"] = round(after_lone[0] / 1024)
                out["peak_rss_mb"] = round(rss_kb(proc.pid)[1] / 1024)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    ok = out.get("concurrent", {}).get("equal") and out.get("row", {}).get("complete") == args.row
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
