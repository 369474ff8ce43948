"""Corpus-mode throughput, local runner vs Ray, on the dev corpus (precomputed mentions picked up).

    .venv/bin/python bench/corpus.py [--configs local1,local2,ray1,ray2,cluster2] [--max-bytes N]
                                     [--rss 30] [--all] [--corpus DIR] [--out DIR]

Configurations (each: a fresh results folder and a fresh cache folder, so no resume and no embedding
cache hits; wall time includes worker start-up and model loading):

- ``localJ``: ``run_corpus`` with the local engine and J workers (J=1: in this process);
- ``rayJ``: the Ray engine with J workers on a local Ray instance started for the run;
- ``clusterJ``: the Ray engine on a simulated two-node cluster (``ray.cluster_utils.Cluster``, both nodes
  on this machine, one CPU each), showing where the documents ran.

Then, measured in the same run:

- documents/minute and tokens/second of each configuration, speed-up against ``local1``;
- Ray's overhead per document against the local runner with the same number of workers
  ((wall_ray - wall_local) / documents, and in % of the local wall time);
- the same numbers: the largest |difference| of any per-document metric between ``local1`` and every
  other configuration (target: <= 1e-9);
- resume: re-running ``local1``'s command in a fresh process (``chunkscope corpus``, everything already
  done) against the run that produced it (target: under 10%);
- memory: one worker (a spawned process, as a pool worker or a Ray actor is) analysing ``--rss`` documents
  in a row (repeating the corpus): resident memory after the first, the 10th and the last, and the peak.

``--max-bytes`` leaves out the larger files (default 70000: the 66k-token GDPR file takes 2/3 of the
corpus time on its own; 0 keeps everything). Default chunkers: the adaptive candidates; ``--all``: every
default chunker. Exits 0; skips with a message without the corpus.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))


def metric_values(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    vals = {}
    for e in summary["documents"]:
        if e.get("report"):
            rep = json.loads((out / e["report"]).read_text())
            for c in rep["chunkings"]:
                for m, v in {**c.get("metrics", {}), "score": c.get("score")}.items():
                    vals[(e["rel"], c["id"], m)] = v
    return vals


def max_diff(a: dict, b: dict) -> float:
    if a.keys() != b.keys():
        return float("inf")
    worst = 0.0
    for k in a:
        if (a[k] is None) != (b[k] is None):
            return float("inf")
        if a[k] is not None:
            worst = max(worst, abs(a[k] - b[k]))
    return worst


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _rss_worker(tasks: list, store_dir: str, s_dict: dict, conn) -> None:
    """A worker as the engines start one (init_worker), then process_document on every task."""
    import resource

    from chunkscope.corpus.store import ResultStore
    from chunkscope.corpus.worker import init_worker, process_document

    init_worker(s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"), 1)
    store = ResultStore(store_dir)
    store.makedirs("reports")
    after = []
    for t in tasks:
        process_document(t, store)
        after.append(_rss_mb())
    conn.send({"after": after, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    conn.close()


def run_config(name: str, files: list[Path], out: Path, settings, cache: Path) -> dict:
    from chunkscope.corpus.run import RunOptions, run_corpus

    os.environ["CHUNKSCOPE_CACHE_DIR"] = str(cache)  # cold caches for each run
    kind, jobs = name.rstrip("0123456789"), int(name[len(name.rstrip("0123456789")):] or 1)
    cluster = None
    opts = RunOptions(engine="local" if kind == "local" else "ray", jobs=jobs, threads=1)
    t0 = time.perf_counter()
    if kind == "cluster":
        import ray
        from ray.cluster_utils import Cluster

        os.environ.setdefault("RAY_worker_niceness", "0")
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
        for _ in range(jobs - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False, logging_level="warning")
        cluster.wait_for_nodes()
    try:
        summary = run_corpus(files, out, settings, options=opts)
    finally:
        if cluster is not None:
            import ray

            ray.shutdown()
            cluster.shutdown()
    wall = time.perf_counter() - t0
    t = summary["timings"]
    return {"name": name, "jobs": jobs, "docs": t["documents_analyzed"], "tokens": t["tokens_analyzed"], "wall": wall,
            "failed": summary["counts"]["failed"], "workers": summary["workers"],
            "busy": sum(float(e.get("seconds") or 0) for e in summary["documents"] if e.get("status") == "ok")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="local1,local2,ray1,ray2,cluster2")
    ap.add_argument("--max-bytes", type=int, default=70000, help="leave out larger files (0: keep all)")
    ap.add_argument("--rss", type=int, default=30, help="analyses in a row for the memory check (0: skip)")
    ap.add_argument("--rss-docs", type=int, default=2, help="the memory check repeats the N smallest documents")
    ap.add_argument("--all", action="store_true", help="every default chunker, not only the candidates")
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="folder with parsed/ and mentions/")
    ap.add_argument("--out", default=None, help="where results go (default: a temporary folder, removed)")
    args = ap.parse_args(argv)

    parsed = Path(args.corpus) / "parsed"
    if not parsed.is_dir():
        print(f"skip: no dev corpus at {parsed}")
        return 0
    from chunkscope.analysis import DEFAULT_CANDIDATES, Settings

    files = sorted(p for p in parsed.glob("*.json") if not args.max_bytes or p.stat().st_size <= args.max_bytes)
    settings = Settings() if args.all else Settings(chunkers=DEFAULT_CANDIDATES)
    base = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="cs-bench-corpus-"))
    print(f"{len(files)} documents ({', '.join(p.stem[:24] for p in files)}); chunkers: "
          f"{'all defaults' if args.all else ', '.join(DEFAULT_CANDIDATES)}; cores: {os.cpu_count()}; "
          "1 thread per worker", flush=True)
    rows = []
    for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
        r = run_config(name, files, base / name, settings, base / f"cache-{name}")
        rows.append(r)
        nodes = sorted({w.split(":")[0] for w in r["workers"]})
        print(f"{name}: {r['docs']} ok, {r['failed']} failed in {r['wall']:.1f}s "
              f"({60 * r['docs'] / r['wall']:.2f} documents/min); worker processes {len(r['workers'])} "
              f"on {len(nodes)} node(s)", flush=True)

    print()
    print(f"{'config':>9} {'workers':>7} {'nodes':>5} {'docs':>5} {'tokens':>7} {'wall [s]':>9} {'docs/min':>9} "
          f"{'tokens/s':>9} {'vs local1':>9}")
    first = rows[0] if rows else None
    for r in rows:
        nodes = len({w.split(":")[0] for w in r["workers"]})
        print(f"{r['name']:>9} {r['jobs']:>7} {nodes:>5} {r['docs']:>5} {r['tokens']:>7} {r['wall']:>9.1f} "
              f"{60 * r['docs'] / r['wall']:>9.2f} {r['tokens'] / r['wall']:>9.0f} "
              f"{first['wall'] / r['wall'] if first else 1:>8.2f}x")
    by = {r["name"]: r for r in rows}
    print()
    for j in (1, 2):
        loc, ray_ = by.get(f"local{j}"), by.get(f"ray{j}")
        if loc and ray_ and loc["docs"]:
            per = (ray_["wall"] - loc["wall"]) / loc["docs"]
            print(f"Ray overhead, {j} worker(s): {per:+.2f} s per document "
                  f"({100 * (ray_['wall'] - loc['wall']) / loc['wall']:+.1f}% of the local wall time)")
    if "local1" in by:
        ref = metric_values(base / "local1")
        for r in rows[1:]:
            print(f"largest per-document metric difference, {r['name']} vs local1: "
                  f"{max_diff(ref, metric_values(base / r['name'])):.3g} ({len(ref)} values)")
        # resume in a fresh process, exactly as a user re-runs the command
        cmd = [sys.executable, "-m", "chunkscope.cli", "corpus", *map(str, files), "--out", str(base / "local1"),
               "--quiet", "--jobs", "1", "--threads-per-worker", "1", "--chunkers", ",".join(settings.chunkers)]
        env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(base / "cache-local1")}
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        resume = time.perf_counter() - t0
        line = (proc.stdout.strip().splitlines() or ["?"])[0]
        print(f"resume (fresh process, every document done): {resume:.1f}s vs {by['local1']['wall']:.1f}s for the run "
              f"= {100 * resume / by['local1']['wall']:.1f}%  [{line}]")
    if args.rss:
        from chunkscope.corpus.plan import plan_corpus
        from chunkscope.corpus.store import ResultStore

        store = ResultStore(base / "rss")
        _, tasks, _ = plan_corpus(files, store, settings.to_dict())
        # the smallest documents first, repeated up to --rss analyses (each written again: same files)
        tasks = sorted(tasks, key=lambda t: os.path.getsize(t["path"]))[:max(1, args.rss_docs)]
        seq = [tasks[i % len(tasks)] for i in range(args.rss)]
        os.environ["CHUNKSCOPE_CACHE_DIR"] = str(base / "cache-rss")
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_rss_worker, args=(seq, str(base / "rss"), settings.to_dict(), child))
        t0 = time.perf_counter()
        p.start()
        got = parent.recv()
        p.join()
        a = got["after"]
        print(f"memory, one worker, {len(a)} analyses ({len(tasks)} documents repeated) in "
              f"{time.perf_counter() - t0:.0f}s: RSS after the 1st {a[0]:.0f} MB, 10th {a[min(9, len(a) - 1)]:.0f} MB, "
              f"last {a[-1]:.0f} MB; peak {got['peak']:.0f} MB; growth 10th->last {a[-1] - a[min(9, len(a) - 1)]:+.0f} MB")
    if not args.out:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
