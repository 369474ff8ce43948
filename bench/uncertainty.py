"""Benchmark of the uncertainty (issue 19): what the bootstrap and the verdict add to an analysis.

Measured in the same run, on the dev corpus (default GDPR, the longest document):
(a) the whole ``analyze()`` (composed mode, every default chunker, precomputed mentions);
(b) the bootstrap from scratch (intervals of every metric and score, the verdict), i.e. what
    ``analyze()`` spends in ``uncertainty`` (median of 5; resample cache cleared each time);
(c) a re-rank with new weights on a judged report (``rescore``: cached resamples; median of 20).
Target: (b) / (a) <= 5%. No model call is made by (b) or (c).

Usage: python bench/uncertainty.py [--docs GDPR] [--report REPORT.json]
``--report`` skips (a) and times (b), (c) on a saved report (the ratio then uses the report's own
``timings.total``, measured when it was produced).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))


def time_judging(report) -> tuple[float, float]:
    from chunkscope.analysis import rescore

    fresh = []
    for _ in range(5):
        report._resamples = None
        t0 = time.perf_counter()
        rescore(report)
        fresh.append(time.perf_counter() - t0)
    cached = []
    for i in range(20):
        t0 = time.perf_counter()
        rescore(report, {"SC": 1.0 + i % 2})
        cached.append(time.perf_counter() - t0)
    rescore(report, {"SC": 1.0})
    return statistics.median(fresh), statistics.median(cached)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default="GDPR", help="comma-separated parts of dev-corpus file names")
    ap.add_argument("--report", help="time (b) and (c) on this saved report instead of analyzing")
    args = ap.parse_args()
    import scipy.stats  # noqa: F401  # loaded by sentence-transformers in any analysis that embeds

    from chunkscope.report import Report

    rows = []
    if args.report:
        rep = Report.load(args.report)
        rows.append((rep.document.get("name", "?"), len(rep.document.get("blocks", [])),
                     float(rep.timings.get("total", 0.0)), rep))
    else:
        if not (CORPUS / "parsed").is_dir():
            print(f"dev corpus not found at {CORPUS}: skipping")
            return 0
        from chunkscope.analysis import Resources, Settings, analyze
        from chunkscope.ingest.reference import load_reference

        res = Resources(None, "composed")
        res.embedder().encode(["warm up the model"])  # load outside the timings
        for part in [p.strip() for p in args.docs.split(",") if p.strip()]:
            hits = sorted((CORPUS / "parsed").glob(f"*{part}*.json"))
            if not hits:
                print(f"{part}: not in the dev corpus")
                continue
            doc = load_reference(hits[0])
            mentions = CORPUS / "mentions" / (hits[0].stem + ".parquet")
            settings = Settings(coref="precomputed", mentions=str(mentions)) if mentions.exists() else Settings()
            t0 = time.perf_counter()
            rep = analyze(doc, settings, res)
            rows.append((doc.name, len(doc.blocks), time.perf_counter() - t0, rep))
    print(f"{'document':<34} {'blocks':>6} {'(a) analyze s':>13} {'(b) bootstrap s':>15} {'(b)/(a)':>8} "
          f"{'(c) re-rank ms':>14}  verdict")
    for name, nb, total, rep in rows:
        fresh, cached = time_judging(rep)
        v = rep.verdict or {}
        print(f"{name[:34]:<34} {nb:>6} {total:>13.2f} {fresh:>15.3f} {fresh / total:>8.2%} {cached * 1000:>14.1f}  "
              f"{v.get('kind', '-')} -> {rep.winner}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
