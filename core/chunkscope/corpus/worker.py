"""One document in any worker: the worker's start, the pure per-document task, and the one writer.

**The per-document task** :func:`analyze_file` is a pure function of (file, settings): it loads
the document, runs :func:`chunkscope.analysis.analyze` and returns plain JSON-able data (the report
and the winning chunks). The only process state it touches is a cache of the embedding
model (read-only once loaded; it never changes a result), so any engine that can call a
Python function on (path, settings dict) -- a process pool, Ray / Dask / Spark / a job
queue -- can run it. :func:`process_document` runs it on a planned task and writes the result
(:func:`write_result`: atomic, see ``chunkscope.corpus.store``); every engine calls it.

**Threads**: every engine pins a worker's math libraries the same way (:func:`pin_threads`), so a
document's numbers never depend on which engine or node ran it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from chunkscope.corpus.store import ResultStore, as_store
from chunkscope.corpus.tables import not_run
from chunkscope.document import Document
from chunkscope.interrupts import INTERRUPTED
from chunkscope.report import dumps as report_dumps

THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
              "NUMEXPR_NUM_THREADS")


def default_threads(jobs: int) -> int:
    """Threads per worker when not given: this machine's cores shared by the workers (at least 1)."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


def pin_threads(n: int) -> dict[str, Any]:
    """Pin the math libraries of this process to ``n`` threads; return what :func:`unpin_threads` restores.

    The environment for OpenMP/MKL/BLAS started later, ``torch.set_num_threads`` now. Every engine calls it the same way in each worker, so a document's
    numbers never depend on which engine or node ran it."""
    prev: dict[str, Any] = {"env": {k: os.environ.get(k) for k in THREAD_ENV}, "torch": None}
    for k in THREAD_ENV:
        os.environ[k] = str(n)
    try:
        import torch

        prev["torch"] = torch.get_num_threads()
        torch.set_num_threads(n)
    except ImportError:  # no torch: the embedder reports itself unavailable per document
        pass
    return prev


def unpin_threads(prev: dict[str, Any]) -> None:
    """Restore the thread settings :func:`pin_threads` returned."""
    for k, v in prev.get("env", {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    if prev.get("torch"):
        import torch

        torch.set_num_threads(prev["torch"])


# a deployment's limits on one loaded document (a shared server's pages and tokens): raises ValueError to refuse it
DocumentCheck = Callable[[Document], None]
# tests only: called with each task in its worker before the analysis (a worker killed mid-document)
FaultHook = Callable[[dict[str, Any]], None]

def _load_model(res: Any) -> None:
    """Load the embedding model now, once per process, when it loads at all."""
    try:
        res.embedder()
    except Exception:  # boundary: a model that cannot load (missing, no torch, bad weights: any
        pass  # error) must not stop a worker; the analysis reports it per document (ICC/DCC None with the reason)


def init_worker(embedder: str | None = None, mode: str = "composed", threads: int | None = None,
                backend: str = "auto") -> None:
    """Start a worker (process pool initializer, Ray actor constructor): pin threads, load the models once.

    The embedding model and spaCy's sentence pipeline are loaded for the documents to come."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if threads:
        pin_threads(threads)  # first: the libraries imported below read their thread counts when they start
    from chunkscope.analysis.resources import shared_resources  # the model: loaded only in a worker

    _load_model(shared_resources(embedder, mode, backend))
    from chunkscope.text.sentences import segmenter_name

    segmenter_name()  # loads the spaCy senter pipeline (regex fallback when absent; never raises)


def _fresh_embedding_cache(res) -> None:
    """A document's vectors come from its own texts only. The model's vector for a text depends (~1e-8)
    on the batch it was computed in, so a vector cached while analysing another document would make a
    document's numbers depend on which documents its worker saw before -- on the engine, the number of
    workers and the schedule. In corpus mode each document starts with an empty in-memory vector cache
    and the on-disk cache shared by the workers is not used: every engine gives the same numbers."""
    emb = res.loaded_embedder()
    if emb is not None:
        emb.detach_disk_cache()
        emb.clear_memory_cache()


def _release_document_memory(res) -> None:
    """Drop what one document left in process caches keyed by its text (span embedders, embedding
    vectors, token counts of its chunk texts, sentence units), so a worker's memory is bounded by one
    document and the next document starts clean (see _fresh_embedding_cache)."""
    from chunkscope.text import sentences, tokens

    _fresh_embedding_cache(res)
    res.forget_documents()
    tokens.clear_cache()
    sentences.clear_cache()


def _load_checked(path: str | os.PathLike, settings: Any, max_bytes: int | None,
                  check: DocumentCheck | None) -> Document:
    """The document of ``path``, within the deployment's limits and with mentions that fit it (else ValueError)."""
    from chunkscope.analysis.coreference import check_mentions
    from chunkscope.coref import CorefError
    from chunkscope.ingest import load_document

    doc = load_document(path, max_bytes=max_bytes)
    if check is not None:
        check(doc)  # a shared server's page and token limits, as for one upload
    try:  # a mentions file found beside the document that does not fit it: failed, as analyze refuses it
        check_mentions(doc, settings)
    except CorefError as exc:
        raise ValueError(f"mentions: {exc}") from None
    return doc


def _internal_error(exc: Exception) -> str:
    """One line for an unexpected error, with where it happened."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}{where}"


def analyze_file(path: str | os.PathLike, settings_dict: dict[str, Any], max_bytes: int | None = None,
                 check: DocumentCheck | None = None) -> dict[str, Any]:
    """Analyze one file into plain data; never raise for a bad document.

    Returns ``{"status": "ok", "report": {...}, "winners": [...], ...}`` or ``{"status": "failed", "reason": one
    line}``. ``check``: the deployment's limits on the loaded document (see ``DocumentCheck``)."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.analysis.resources import shared_resources
    from chunkscope.report import chunk_records

    t0 = time.perf_counter()
    out: dict[str, Any] = {"path": str(path), "status": "failed", "reason": "", "pid": os.getpid()}
    try:
        settings = Settings.from_dict(settings_dict)
        doc = _load_checked(path, settings, max_bytes, check)
        parse_s = time.perf_counter() - t0
        res = shared_resources(settings.embedder, settings.embedding_mode, settings.embedding_backend)
        _load_model(res)  # loaded once per process (init_worker); a missing model is reported by analyze
        _fresh_embedding_cache(res)
        try:
            report = analyze(doc, settings, resources=res, cancel=INTERRUPTED.is_set)
        finally:
            _release_document_memory(res)
        report.timings["parse"] = parse_s
        report.timings["total"] = report.timings.get("total", 0.0) + parse_s
        winners = list(chunk_records(report, doc.text, heading_path=doc.chunk_heading_path, pages_of=doc.pages_of,
                                      boxes=doc.boxes if doc.geometry is not None else None))
        out.update(status="ok", report=report.to_dict(), winners=winners, name=doc.name,
                   tokens=report.document.get("tokens", 0), winner=report.winner)
    except (ValueError, OSError) as exc:  # IngestError is a ValueError: the user's input
        out["reason"] = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # boundary: a bug in one document's analysis must not stop the corpus
        out["reason"] = _internal_error(exc)
    if INTERRUPTED.is_set():  # whatever came out after Ctrl-C is not this document's result (catch_interrupts)
        raise KeyboardInterrupt
    out["seconds"] = time.perf_counter() - t0
    return out


def worker_id() -> str:
    """'NODE:PID' of this process (NODE = the Ray node id prefix, else the host name)."""
    node = ""
    ray = sys.modules.get("ray")  # imported in a Ray worker; a local run never imports it
    if ray is not None:
        try:
            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()[:8]
        except (RuntimeError, AttributeError):  # not in a Ray worker after all
            node = ""
    if not node:
        import socket

        node = socket.gethostname()
    return f"{node}:{os.getpid()}"


def failed_marker(base: str) -> str:
    """``failed/STEM-KEY16.json`` for ``reports/STEM-KEY16``: the reason a document failed on its own."""
    return "failed/" + base.split("/", 1)[-1] + ".json"


def write_result(store: ResultStore, base: str, res: dict[str, Any]) -> dict[str, Any]:
    """Write a document's result (the one writer, every engine); return the entry fields of the summary.

    Winners, then the report (the report is the commit mark resume looks for), each written atomically."""
    upd: dict[str, Any] = {"seconds": round(res.get("seconds", 0.0), 3), "worker": res.get("worker", "")}
    if res.get("status") != "ok":
        upd.update(status="failed", reason=res.get("reason") or "unknown error")
        # the document failed on its own (same bytes + settings fail again): remembered, so a rerun skips it
        # (--retry-failed tries again); a dead worker never gets here
        store.write_text(failed_marker(base), json.dumps({"reason": upd["reason"]}, ensure_ascii=False))
        return upd
    rep = res["report"]
    store.write_text(f"{base}.winners.jsonl",
                     "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in res.get("winners", [])))
    store.write_text(f"{base}.json", report_dumps(rep))
    upd.update(status="ok", reason="", report=f"{base}.json", winners=f"{base}.winners.jsonl",
               name=rep["document"].get("name", ""), tokens=rep["document"].get("tokens", 0),
               winner=rep.get("winner"), language=rep["document"].get("language", ""),
               not_run=not_run(rep),
               failed_chunkers={c["id"]: c.get("reason", "") for c in rep.get("chunkings", [])
                                if c.get("status") == "failed"})
    return upd


def process_document(task: dict[str, Any], store: ResultStore | str, check: DocumentCheck | None = None,
                     fault: FaultHook | None = None) -> dict[str, Any]:
    """Analyze one planned document and write its result; return the summary entry's fields.

    The one per-document function every engine calls (in-process, process pool, Ray actor), bound to the
    run's ``check`` and ``fault`` (see ``DocumentCheck``, ``FaultHook``). Idempotent: a retry rewrites the same
    files."""
    store = as_store(store)
    if fault is not None:
        fault(task)
    res = analyze_file(task["path"], task["settings"], task.get("max_bytes"), check)
    res["worker"] = worker_id()
    try:
        return write_result(store, task["base"], res)
    except OSError as exc:  # the results root is not writable from this worker
        return {"status": "failed", "reason": f"cannot write the result to {store.display(task['base'])}: {exc}",
                "seconds": round(res.get("seconds", 0.0), 3), "worker": res["worker"]}

