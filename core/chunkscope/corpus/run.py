"""Corpus mode: adaptive chunking over many documents (no Streamlit here).

The package, top-down::

    run_corpus(inputs, out_dir, settings, progress=None, options=RunOptions(engine="local"|"ray", jobs=N))
      plan.plan_corpus(inputs, store, settings_dict) -> (entries, tasks, ignored)   # discovery + resume, no model
        discover.discover(inputs, exclude=()) -> (list[CorpusItem], list[ignored dict])
      worker.process_document(task, store) -> entry fields   # analyze_file + write_result: every engine calls it
      tables.write_tables(store, entries)                     # metrics.parquet/.csv, winners.jsonl
    report.CorpusResults.load(results_dir)                    # the paper's tables, read back from the files

Engines: ``local`` (in-process, or a spawned process pool) here, ``ray`` in ``chunkscope.corpus.ray``;
both pin threads the same way (``pin_threads``) and write through ``write_result`` (atomic, see
``chunkscope.corpus.store``; ``out_dir`` may be an fsspec URI). docs/corpus.md has the details.
``run_corpus`` only plans (discovery, resume keys), fans the per-document task out, and writes the tables.

**Results directory**::

    reports/<stem>-<key16>.json           one chunkscope.report/1 per document
    reports/<stem>-<key16>.winners.jsonl  its winning chunks (chunk_records)
    metrics.parquet, metrics.csv          tidy long table (see TIDY_COLUMNS), one row set per document key
    winners.jsonl                         every document's winning chunks, concatenated (``document``: its key)
    summary.json                          schema chunkscope.corpus.run/1: documents ok/skipped/failed
    failed/<stem>-<key16>.json            why a document failed on its own (a rerun skips it; --retry-failed)

A failing document is recorded (status ``failed`` with a one-line reason) and the run goes on.

**Interrupts**: see :func:`chunkscope.interrupts.catch_interrupts` (an interrupted document is never recorded
as failed).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

from chunkscope.corpus.plan import plan_corpus
from chunkscope.corpus.store import ResultStore
from chunkscope.corpus.tables import SCHEMA, write_tables
from chunkscope.corpus.worker import (
    DocumentCheck,
    FaultHook,
    default_threads,
    init_worker,
    pin_threads,
    process_document,
    unpin_threads,
)
from chunkscope.interrupts import sigint_held

Progress = Callable[[int, int, dict[str, Any]], None]  # (done, total, last document entry)
Work = Callable[[dict[str, Any], ResultStore], dict[str, Any]]  # process_document, bound to the run's hooks
Started = Callable[[dict[str, Any]], None]
Finished = Callable[[dict[str, Any], dict[str, Any]], None]

ENGINES = ("local", "ray")


@dataclass
class RunOptions:
    """How to run (not what: that is Settings).

    ``jobs``: workers for either engine; ``threads``: math
    threads per worker (default: this machine's cores / jobs); Ray only: ``address`` (None: start a
    local Ray instance; "auto" or "ray://HOST:PORT": join that cluster), ``gpus_per_worker``,
    ``max_retries`` (tries after a worker died mid-document). ``retry_failed``: analyze again the documents
    that failed on their own in an earlier run (by default a rerun skips them, keeping their reason).
    ``embed_text``: which text of each winning chunk winners.jsonl marks for embedding (``raw``, ``clean``,
    ``context``; every line carries all three).
    ``confine``: a folder no file read may lie outside of, links resolved (a shared server's
    ``corpus_root``: a symlink planted there must not serve a server file). ``document_check``: the
    deployment's limits on each loaded document, passed in by the edge (a shared server's pages and tokens).
    ``fault``: tests only, called with each task in its worker before the analysis (a worker killed
    mid-document). Both reach the workers, so they must pickle (a module-level function or a partial of one)."""

    engine: str = "local"
    jobs: int = 1
    threads: int | None = None
    address: str | None = None
    gpus_per_worker: float = 0.0
    max_retries: int = 2
    retry_failed: bool = False
    confine: str | None = None  # every file read (documents, mentions) must resolve inside this folder
    document_check: DocumentCheck | None = None
    fault: FaultHook | None = None
    embed_text: str = "raw"  # which text of each winning chunk winners.jsonl marks for embedding

    def validate(self) -> None:
        """Raise ``ValueError`` (one line, naming the flag) for options that cannot run."""
        from chunkscope.text.markup import check_embed_text

        if problem := check_embed_text(self.embed_text):
            raise ValueError(f"--embed-text: {problem}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine {self.engine!r}: choose one of {', '.join(ENGINES)}")
        if self.jobs < 1:
            raise ValueError("--jobs must be >= 1")
        if self.threads is not None and self.threads < 1:
            raise ValueError("--threads-per-worker must be >= 1")
        if self.gpus_per_worker < 0:
            raise ValueError("--gpus-per-worker must be >= 0")
        if self.engine != "ray" and (self.address or self.gpus_per_worker):
            raise ValueError("--address and --gpus-per-worker need --engine ray")


class RunStats:
    """Done/failed counts, throughput and ETA of a run (what progress displays show)."""

    def __init__(self, total: int, todo: int):
        self.total, self.todo = total, todo
        self.done = total - todo  # skipped / unreadable documents are done from the start
        self.ok = self.failed = self.retried = 0
        self.t0 = time.perf_counter()

    def finished(self, status: str) -> None:
        """Count one document that ended with ``status``."""
        self.done += 1
        if status == "ok":
            self.ok += 1
        elif status == "failed":
            self.failed += 1

    def as_dict(self) -> dict[str, Any]:
        """The stats now: done, ok, failed, retried, left, elapsed, per_minute, eta."""
        elapsed = time.perf_counter() - self.t0
        analyzed = self.ok + self.failed
        rate = analyzed / elapsed if elapsed > 0 and analyzed else 0.0
        left = self.todo - analyzed
        return {"done": self.done, "total": self.total, "ok": self.ok, "failed": self.failed, "retried": self.retried,
                "left": left, "elapsed": round(elapsed, 1), "per_minute": round(60 * rate, 2),
                "eta": round(left / rate, 1) if rate else None}


def format_stats(st: dict[str, Any]) -> str:
    """One line: '12/40 done · 1 failed · 3.2 docs/min · ETA 8m45s' (the CLI and the Corpus page)."""
    eta = st.get("eta")
    eta_s = "-" if eta is None else (f"{int(eta // 60)}m{int(eta % 60):02d}s" if eta >= 60 else f"{eta:.0f}s")
    return (f"{st['done']}/{st['total']} done · {st['failed']} failed · {st['per_minute']:.1f} docs/min · ETA {eta_s}"
            + (f" · {st['retried']} retried" if st.get("retried") else ""))


def _init_pool_worker(*args: Any) -> None:
    """A local pool worker's start: Ctrl-C is ignored (the terminal sends it to the whole process group; the
    parent ends the workers, see ``_stop_pool``), then :func:`init_worker`. The worker was started with SIGINT
    blocked (``_run_pool``), so one sent while it started up is dropped here, never a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    init_worker(*args)


def _run_local(tasks: list[dict[str, Any]], store: ResultStore, opts: RunOptions, s_dict: dict[str, Any],
               work: Work, started: Started, finished: Finished) -> None:
    """The local engine: in this process for one worker (or one document), else a spawned process pool."""
    threads = opts.threads or default_threads(opts.jobs)
    if opts.jobs <= 1 or len(tasks) == 1:
        prev = pin_threads(threads)
        try:
            for t in tasks:
                started(t)
                finished(t, work(t, store))
        finally:
            unpin_threads(prev)
        return
    _run_pool(tasks, store, min(opts.jobs, len(tasks)), threads, s_dict, work, started, finished)


def _run_pool(tasks: list[dict[str, Any]], store: ResultStore, jobs: int, threads: int, s_dict: dict[str, Any],
              work: Work, started: Started, finished: Finished) -> None:
    """Analyze ``tasks`` on ``jobs`` spawned worker processes, each pinned to ``threads``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = mp.get_context("spawn")  # fork after torch/threads is unsafe
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_pool_worker,
                             initargs=(s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"), threads,
                                       s_dict.get("embedding_backend", "auto")))
    workers: dict[int, Any] = getattr(ex, "_processes", {})  # filled as they start (the same dict); shutdown drops it
    try:
        futs = {}
        with sigint_held():  # the workers start at submit
            for t in tasks:
                futs[ex.submit(work, t, store)] = t
                started(t)
        for f in as_completed(futs):
            t = futs[f]
            try:
                upd = f.result()
            except Exception as exc:  # boundary: the worker process died (killed, out of memory: the pool is
                # broken) or its result did not come back; that document fails, the run goes on
                upd = {"status": "failed", "reason": f"worker failed: {type(exc).__name__}: {exc}"}
            finished(t, upd)
        ex.shutdown(wait=True)
    except BaseException:  # Ctrl-C: leaving must not wait for the documents still queued or running
        _stop_pool(ex, list(workers.values()))
        raise


def _stop_pool(ex: Any, workers: list[Any]) -> None:
    """End a process pool's workers, then the pool (its queued documents are cancelled; a document cut short
    writes nothing: every write is atomic, and a resume analyzes it again). The workers go first: an orphan
    would wait for work forever, and the pool, broken, shuts down at once and releases its queues."""
    for p in workers:
        p.terminate()
    for p in workers:
        p.join(5)
        if p.is_alive():
            p.kill()
    ex.shutdown(wait=True, cancel_futures=True)


class _Tracker:
    """A run's summary entries and stats as the engine reports each document, told to ``progress``."""

    def __init__(self, entries: list[dict[str, Any]], todo: int, progress: Progress | None):
        self.entries, self.progress = entries, progress
        self.stats = RunStats(len(entries), todo)

    def emit(self, done: int, e: dict[str, Any]) -> None:
        """Tell ``progress`` about one event, with the run's stats."""
        if self.progress:
            self.progress(done, len(self.entries), {**e, "stats": self.stats.as_dict()})

    def announce(self, todo: int, engine: str) -> None:
        """Tell the documents decided before the run (skipped, unreadable), then the start."""
        if not self.progress:
            return
        k = 0
        for e in self.entries:
            if "status" in e:
                k += 1
                self.emit(k, e)
        self.emit(self.stats.done, {"status": "start", "name": "", "todo": todo, "engine": engine})

    def started(self, t: dict[str, Any]) -> None:
        """An engine began a document."""
        self.emit(self.stats.done, {"status": "running", "name": t["name"], "rel": t["rel"]})

    def finished(self, t: dict[str, Any], upd: dict[str, Any]) -> None:
        """An engine ended a document: its entry is filled, exactly once (a late duplicate is ignored)."""
        e = self.entries[t["index"]]
        if "status" in e:
            return
        e.update(upd)
        if upd.get("attempts", 1) > 1:
            self.stats.retried += 1
        self.stats.finished(e["status"])
        self.emit(self.stats.done, e)

    def retried(self, t: dict[str, Any], reason: str) -> None:
        """An engine sent a document to another worker."""
        self.emit(self.stats.done, {"status": "retry", "name": t["name"], "rel": t["rel"], "reason": reason})


def _settings_dict(settings: Any) -> dict[str, Any]:
    """The settings dict of a ``Settings``, a dict or None (the defaults)."""
    from chunkscope.analysis import Settings

    if settings is None:
        settings = Settings()
    return settings.to_dict() if hasattr(settings, "to_dict") else Settings.from_dict(settings).to_dict()


def _run_engine(tasks: list[dict[str, Any]], store: ResultStore, opts: RunOptions, s_dict: dict[str, Any],
                tracker: _Tracker) -> float:
    """Analyze ``tasks`` on the chosen engine; return its wall time in seconds."""
    t0 = time.perf_counter()
    work: Work = functools.partial(process_document, check=opts.document_check, fault=opts.fault)
    if tasks and opts.engine == "ray":
        from chunkscope.corpus.ray import run_ray

        run_ray(tasks, store, opts, s_dict, opts.threads or default_threads(opts.jobs), init_worker, work,
                tracker.started, tracker.finished, tracker.retried)
    elif tasks:
        _run_local(tasks, store, opts, s_dict, work, tracker.started, tracker.finished)
    return time.perf_counter() - t0


def _summary(inputs: Any, opts: RunOptions, s_dict: dict[str, Any], entries: list[dict[str, Any]],
             ignored: list[dict[str, str]], total_s: float, run_s: float) -> dict[str, Any]:
    """The run's summary.json (schema ``SCHEMA``)."""
    counts = {k: sum(1 for e in entries if e.get("status") == k) for k in ("ok", "skipped", "failed")}
    analyzed = [e for e in entries if e.get("status") == "ok"]
    tokens_now = sum(int(e.get("tokens") or 0) for e in analyzed)
    return {
        "schema": SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "inputs": [str(x) for x in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)],
        "jobs": opts.jobs,
        "engine": opts.engine,
        "threads_per_worker": opts.threads or default_threads(opts.jobs),
        "workers": sorted({e["worker"] for e in entries if e.get("worker")}),
        "settings": s_dict,
        "counts": {**counts, "documents": len(entries), "with_report": sum(1 for e in entries if e.get("report"))},
        "documents": entries,
        "ignored": ignored,
        "timings": {
            "total": round(total_s, 3),
            "analysis_wall": round(run_s, 3),
            "documents_analyzed": len(analyzed),
            "tokens_analyzed": tokens_now,
            "documents_per_minute": round(60 * len(analyzed) / run_s, 3) if analyzed and run_s > 0 else None,
            "tokens_per_second": round(tokens_now / run_s, 1) if analyzed and run_s > 0 else None,
        },
    }


def run_corpus(inputs, out_dir: str | os.PathLike, settings=None, jobs: int = 1,
               progress: Progress | None = None, max_bytes: int | None = None,
               options: RunOptions | None = None) -> dict[str, Any]:
    """Analyze every document under ``inputs`` into ``out_dir`` (a folder or an fsspec URI); return the summary.

    ``settings``: a ``Settings`` or its dict. ``options``: engine, workers... (``jobs`` is a shortcut for
    ``RunOptions(jobs=...)``). Documents are planned first (discovery, resume: no model is loaded), then
    analyzed by the engine, each written by :func:`process_document` in its worker. Progress events
    carry ``stats`` (:class:`RunStats`: done/failed, docs/min, ETA).
    """
    opts = options or RunOptions(jobs=jobs)
    opts.validate()
    t_start = time.perf_counter()
    s_dict = _settings_dict(settings)
    store = ResultStore(out_dir)
    entries, tasks, ignored = plan_corpus(inputs, store, s_dict, max_bytes, opts.retry_failed, opts.confine)
    store.makedirs("reports")
    store.makedirs("failed")
    tracker = _Tracker(entries, len(tasks), progress)
    tracker.announce(len(tasks), opts.engine)
    run_s = _run_engine(tasks, store, opts, s_dict, tracker)
    for t in tasks:  # an engine that lost a document (it should not): recorded, never silent
        entries[t["index"]].setdefault("status", "failed")
        entries[t["index"]].setdefault("reason", "no result came back from the engine")
    write_tables(store, entries, opts.embed_text)
    summary = _summary(inputs, opts, s_dict, entries, ignored, time.perf_counter() - t_start, run_s)
    summary["embed_text"] = opts.embed_text
    store.write_text("summary.json", json.dumps(summary, ensure_ascii=False, indent=1))
    return summary
