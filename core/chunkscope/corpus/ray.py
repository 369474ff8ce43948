"""The Ray engine of corpus mode (``chunkscope corpus --engine ray``; needs ``pip install 'chunkscope[ray]'``).

``run_ray`` is called by :func:`chunkscope.corpus.run.run_corpus` with the planned tasks (discovery and
resume are done: no model loaded, no Ray started when nothing is left to do). It starts
``jobs`` actors (:class:`CorpusWorker`): each pins its thread counts and loads the embedding model
and spaCy once (``init_worker``, as the local process pool does), then analyses many documents
with the same :func:`chunkscope.corpus.run.process_document` as the local engine, which writes each
result atomically into the results root (a folder every node can reach, or an fsspec URI).

**Scheduling.** Each actor holds one document at a time; the driver hands the next document to
whichever actor finishes first (``ray.wait``), so a slow document never holds others back.
Actors are spread over the cluster's nodes (``SPREAD``). A worker no node can hold (``--gpus-per-worker`` on a
cluster without GPUs) is refused before any actor starts (``check_room``): it would wait forever.

**Failures.** A document that fails on its own (corrupt PDF) comes back as ``failed`` with its reason
(``analyze_file`` never raises). A worker process that dies mid-document (killed, out of memory,
a crash in native code) is restarted by Ray (``max_restarts``) and its document goes back to the
front of the queue, for the next free worker, up to ``max_retries`` more tries; after that it is
recorded as failed ("worker died N times"). Writes are atomic and idempotent (the same file name
for the same document and settings), and the driver keeps one entry per document, so every
document appears exactly once in the results however many times it was tried.
"""

from __future__ import annotations

import collections
import os
from typing import Any, Callable

from chunkscope.corpus.store import ResultStore

ACTOR_RESTARTS = 4  # per actor; a worker that keeps dying (e.g. the model does not load) is dropped after


def _ray():
    try:
        import ray
    except ImportError:
        raise ValueError("--engine ray needs Ray: pip install 'chunkscope[ray]'") from None
    return ray


class CorpusWorker:
    """One Ray actor: ``init(embedder, mode, threads, backend)`` once (the model and spaCy), then ``work(task, store)``
    for document after document. ``init``/``work`` are chunkscope.corpus.run's ``init_worker`` and
    ``process_document``, handed in by the runner (so this module does not import the runner)."""

    def __init__(self, init: Callable[..., None], work: Callable[..., dict[str, Any]], embedder: str | None,
                 mode: str, threads: int, backend: str = "auto"):
        self._work = work
        init(embedder, mode, threads, backend)

    def run(self, task: dict[str, Any], store: ResultStore) -> dict[str, Any]:
        return self._work(task, store)

    def ready(self) -> int:
        return os.getpid()


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to ``address`` (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``) or start a local Ray instance
    (``num_cpus`` logical CPUs). Returns True when this call started/connected Ray (so it should shut it
    down), False when Ray was already initialised by the caller (a test fixture, a notebook).

    Without an address the instance is always a new one of this run's own (``address="local"``), even when
    another is running on the machine (``ray start``) or ``RAY_ADDRESS`` is set: plain ``ray.init()`` would
    join that one, which refuses ``num_cpus``. Joining a running instance is ``--address auto``."""
    ray = _ray()
    if ray.is_initialized():
        return False
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning"}
    # workers must import chunkscope and the same libraries: ship nothing, they run in this environment
    # locally; on a cluster every node installs chunkscope[ray] (docs/corpus.md).
    if address:
        ray.init(address=address, **kw)
    else:
        # Ray starts workers at nice 15 by default (its own daemons first); on a shared machine that would
        # starve them. A local instance runs them at the caller's priority, as the local engine does.
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(address="local", num_cpus=num_cpus, **kw)
    return True


def check_room(threads: int, gpus: float, threads_given: bool = True) -> None:
    """Refuse (``ValueError``, one line) a worker that no node of the cluster can ever hold: ``threads`` CPUs
    and ``gpus`` GPUs on one node (the totals; CPUs or GPUs busy now only make workers wait). Its actor
    would wait forever for them, with no word."""
    ray = _ray()
    nodes = [n.get("Resources") or {} for n in ray.nodes() if n.get("Alive")]
    if any(r.get("CPU", 0) >= threads and r.get("GPU", 0) >= gpus for r in nodes):
        return
    most_gpus = max((r.get("GPU", 0) for r in nodes), default=0)
    most_cpus = max((r.get("CPU", 0) for r in nodes), default=0)
    flag = (f"--gpus-per-worker {gpus:g}" if gpus > most_gpus else
            f"--threads-per-worker {threads}" + ("" if threads_given else " (the default: this machine's cores / --jobs)"))
    raise ValueError(f"{flag}: a worker needs {threads} CPU(s)" + (f" and {gpus:g} GPU(s)" if gpus else "")
                     + f" on one node, and no node of the Ray cluster has them (at most {most_cpus:g} CPU(s) and "
                       f"{most_gpus:g} GPU(s) on a node)")


def run_ray(tasks: list[dict[str, Any]], store: ResultStore, opts: Any, s_dict: dict[str, Any], threads: int,
            init: Callable[..., None], work: Callable[..., dict[str, Any]],
            started: Callable[[dict[str, Any]], None], finished: Callable[[dict[str, Any], dict[str, Any]], None],
            retried: Callable[[dict[str, Any], str], None] | None = None) -> None:
    """Analyse ``tasks`` on ``opts.jobs`` actors (``opts``: chunkscope.corpus.run.RunOptions); ``work(task, store)``
    analyses and writes one document, ``started``/``finished``/``retried`` report to the runner."""
    ray = _ray()
    from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

    n = min(opts.jobs, len(tasks))
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    owns = ensure_ray(opts.address, num_cpus=max(os.cpu_count() or 1, n * threads))
    actors: list[Any] = []
    try:
        check_room(threads, opts.gpus_per_worker or 0, threads_given=opts.threads is not None)
        remote_cls = ray.remote(CorpusWorker).options(
            num_cpus=threads, num_gpus=opts.gpus_per_worker or 0, max_restarts=ACTOR_RESTARTS, max_task_retries=0,
            scheduling_strategy="SPREAD")
        actors += [remote_cls.remote(init, work, s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"), threads,
                                     s_dict.get("embedding_backend", "auto"))
                  for _ in range(n)]
        store_ref = ray.put(store)
        queue = collections.deque(tasks)
        tries: dict[int, int] = collections.defaultdict(int)
        deaths: dict[int, int] = collections.defaultdict(int)  # actor slot -> deaths seen
        idle = collections.deque(range(n))  # slots ready for a document
        dead: set[int] = set()  # slots whose restarts are used up
        inflight: dict[Any, tuple[int, dict[str, Any] | None]] = {}  # None: a readiness probe after a restart

        def dispatch() -> None:
            while queue and idle:
                slot, t = idle.popleft(), queue.popleft()
                tries[t["index"]] += 1
                inflight[actors[slot].run.remote(t, store_ref)] = (slot, t)
                started(t)

        dispatch()
        while inflight and (queue or any(t is not None for _, t in inflight.values())):  # not for probes only
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=60.0)
            if not ready:
                continue  # still working (a long document, or actors waiting for resources)
            ref = ready[0]
            slot, t = inflight.pop(ref)
            try:
                upd = ray.get(ref, timeout=60.0)
            except RayActorError as exc:  # the worker process died (with this document in hand when t is set)
                deaths[slot] += 1
                if t is not None:
                    if tries[t["index"]] <= opts.max_retries:
                        queue.appendleft(t)  # the next free worker takes it
                        if retried:
                            retried(t, f"worker died ({type(exc).__name__})")
                    else:
                        finished(t, {"status": "failed", "attempts": tries[t["index"]],
                                     "reason": f"the worker process died {tries[t['index']]} times while analyzing "
                                               "this document (killed or out of memory?)"})
                if deaths[slot] > ACTOR_RESTARTS:  # restarts used up: that worker is gone
                    dead.add(slot)
                    if len(dead) == n:
                        for left in list(queue):
                            finished(left, {"status": "failed", "reason": "every Ray worker died; no worker left"})
                        queue.clear()
                else:  # Ray restarts it (model loaded again): wait until it answers before giving it work
                    inflight[actors[slot].ready.remote()] = (slot, None)
                dispatch()
                continue
            except (RayTaskError, GetTimeoutError) as exc:  # process_document raised (it should not)
                if t is None:
                    idle.append(slot)
                    dispatch()
                    continue
                upd = {"status": "failed", "reason": f"internal error: {' '.join(str(exc).split())[:300]}"}
            if t is not None:
                if tries[t["index"]] > 1:
                    upd["attempts"] = tries[t["index"]]
                finished(t, upd)
            idle.append(slot)
            dispatch()
    finally:
        for a in actors:  # free their CPUs/GPUs now (a cluster is shared)
            try:
                ray.kill(a)
            except Exception:  # already gone
                pass
        if owns:
            ray.shutdown()
