"""Corpus-mode throughput on the dev corpus (7 documents, ~96k o200k tokens, with mentions).

    .venv/bin/python bench/corpus.py [--jobs 1,2] [--all] [--corpus DIR] [--out DIR]

For each ``--jobs`` value: a fresh results folder and a fresh cache folder (no resume, no
embedding cache hits), ``run_corpus`` over ``DIR/parsed`` with the precomputed mentions picked
up from ``DIR/mentions``, then documents per minute and tokens per second over the wall time
of the analysis (worker start-up and model loading included). Default chunkers: the adaptive
candidates (``page+pp``, ``recursive-1100+pp``, ``recursive-600+pp``; ``llm-regex+pp`` is
skipped without an LLM endpoint), i.e. what a corpus run needs to pick a winner; ``--all``
runs every default chunker (semantic included: much slower). Exits 0; skips with a message
without the corpus.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", default="1,2", help="comma-separated --jobs values (default 1,2)")
    ap.add_argument("--all", action="store_true", help="every default chunker, not only the candidates")
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with parsed/ and mentions/")
    ap.add_argument("--out", default=None, help="where results go (default: a temporary folder, removed)")
    args = ap.parse_args(argv)

    parsed = Path(args.corpus) / "parsed"
    if not parsed.is_dir():
        print(f"skip: no dev corpus at {parsed}")
        return 0
    from chunkscope.analysis import DEFAULT_CANDIDATES, Settings
    from chunkscope.corpus import run_corpus

    settings = Settings() if args.all else Settings(chunkers=DEFAULT_CANDIDATES)
    base = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="cs-bench-corpus-"))
    rows = []
    for jobs in [int(j) for j in args.jobs.split(",") if j.strip()]:
        out = base / f"jobs{jobs}"
        os.environ["CHUNKSCOPE_CACHE_DIR"] = str(base / f"cache{jobs}")  # cold caches for each run
        t0 = time.perf_counter()
        summary = run_corpus(parsed, out, settings, jobs=jobs)
        wall = time.perf_counter() - t0
        t = summary["timings"]
        c = summary["counts"]
        docs, tokens = t["documents_analyzed"], t["tokens_analyzed"]
        rows.append((jobs, docs, tokens, wall, 60 * docs / wall if wall else 0.0, tokens / wall if wall else 0.0))
        longest = max((e for e in summary["documents"] if e.get("status") == "ok"), key=lambda e: e.get("seconds", 0),
                      default=None)
        print(f"jobs={jobs}: {c['ok']} ok, {c['failed']} failed, {tokens:,} tokens in {wall:.1f}s "
              f"({60 * docs / wall:.2f} documents/min, {tokens / wall:.0f} tokens/s)"
              + (f"; longest document {longest['name'][:40]} {longest['seconds']:.1f}s" if longest else ""),
              flush=True)
    print()
    print(f"chunkers: {'all defaults' if args.all else ', '.join(DEFAULT_CANDIDATES)}; cores: {os.cpu_count()}")
    print(f"{'jobs':>4} {'docs':>5} {'tokens':>8} {'wall [s]':>9} {'docs/min':>9} {'tokens/s':>9}")
    for jobs, docs, tokens, wall, dpm, tps in rows:
        print(f"{jobs:>4} {docs:>5} {tokens:>8} {wall:>9.1f} {dpm:>9.2f} {tps:>9.0f}")
    if len(rows) > 1 and rows[0][3]:
        print(f"speed-up jobs={rows[-1][0]} vs jobs={rows[0][0]}: {rows[0][3] / rows[-1][3]:.2f}x")
    if not args.out:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
