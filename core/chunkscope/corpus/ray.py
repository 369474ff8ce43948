"""The Ray engine of corpus mode (``chunkscope corpus --engine ray``; needs ``pip install 'chunkscope[ray]'``).

``run_ray`` is called by :func:`chunkscope.corpus.run.run_corpus` with the planned tasks (discovery and
resume are done: no model loaded, no Ray started when nothing is left to do). It starts
``jobs`` actors (:class:`CorpusWorker`): each pins its thread counts and loads the embedding model
and spaCy once (``init_worker``, as the local process pool does), then analyses many documents
with the same :func:`chunkscope.corpus.worker.process_document` as the local engine, which writes each
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
Started = Callable[[dict[str, Any]], None]
Finished = Callable[[dict[str, Any], dict[str, Any]], None]
Retried = Callable[[dict[str, Any], str], None]


def _ray():
    try:
        import ray
    except ImportError:
        raise ValueError("--engine ray needs Ray: pip install 'chunkscope[ray]'") from None
    return ray


class CorpusWorker:
    """One Ray actor: ``init(embedder, mode, threads, backend)`` once, then ``work(task, store)`` per document.

    ``init`` loads the model and spaCy; ``init``/``work`` are chunkscope.corpus.worker's ``init_worker`` and
    ``process_document`` (bound to the run's hooks), handed in by the runner."""

    def __init__(self, init: Callable[..., None], work: Callable[..., dict[str, Any]], embedder: str | None,
                 mode: str, threads: int, backend: str = "auto"):
        self._work = work
        init(embedder, mode, threads, backend)

    def run(self, task: dict[str, Any], store: ResultStore) -> dict[str, Any]:
        """Analyze and write one document; return its summary entry's fields."""
        return self._work(task, store)

    def ready(self) -> int:
        """This actor's process id (answers once it has started)."""
        return os.getpid()


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to ``address`` or start a local Ray instance; return whether this call did (and should shut it down).

    ``address``: ``auto``, ``ray://HOST:PORT``, ``HOST:PORT``; a local instance gets ``num_cpus`` logical CPUs.
    Returns True when this call started/connected Ray (so it should shut it
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
    """Refuse (``ValueError``, one line) a worker that no node of the cluster can ever hold.

    It needs ``threads`` CPUs and ``gpus`` GPUs on one node (the totals; CPUs or GPUs busy now only make workers wait). Its actor
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


class _Schedule:
    """The driver's bookkeeping: documents queued, actor slots idle or dead, calls in flight, tries and deaths."""

    def __init__(self, ray: Any, actors: list[Any], tasks: list[dict[str, Any]], store_ref: Any, max_retries: int,
                 started: Started, finished: Finished, retried: Retried | None):
        self.ray, self.actors, self.store_ref, self.max_retries = ray, actors, store_ref, max_retries
        self.started, self.finished, self.retried = started, finished, retried
        self.queue = collections.deque(tasks)
        self.tries: dict[int, int] = collections.defaultdict(int)
        self.deaths: dict[int, int] = collections.defaultdict(int)  # actor slot -> deaths seen
        self.idle = collections.deque(range(len(actors)))  # slots ready for a document
        self.dead: set[int] = set()  # slots whose restarts are used up
        self.inflight: dict[Any, tuple[int, dict[str, Any] | None]] = {}  # None: a readiness probe after a restart

    def dispatch(self) -> None:
        """Hand queued documents to idle actors."""
        while self.queue and self.idle:
            slot, t = self.idle.popleft(), self.queue.popleft()
            self.tries[t["index"]] += 1
            self.inflight[self.actors[slot].run.remote(t, self.store_ref)] = (slot, t)
            self.started(t)

    def busy(self) -> bool:
        """Whether documents are left (queued, or in an actor's hands; not for readiness probes alone)."""
        return bool(self.inflight) and (bool(self.queue) or any(t is not None for _, t in self.inflight.values()))

    def died(self, slot: int, t: dict[str, Any] | None, exc: Exception) -> None:
        """An actor died (with document ``t`` in hand when not None): retry it elsewhere or record it failed."""
        self.deaths[slot] += 1
        if t is not None:
            if self.tries[t["index"]] <= self.max_retries:
                self.queue.appendleft(t)  # the next free worker takes it
                if self.retried:
                    self.retried(t, f"worker died ({type(exc).__name__})")
            else:
                self.finished(t, {"status": "failed", "attempts": self.tries[t["index"]],
                                  "reason": f"the worker process died {self.tries[t['index']]} times while analyzing "
                                            "this document (killed or out of memory?)"})
        if self.deaths[slot] > ACTOR_RESTARTS:  # restarts used up: that worker is gone
            self.dead.add(slot)
            if len(self.dead) == len(self.actors):
                for left in list(self.queue):
                    self.finished(left, {"status": "failed", "reason": "every Ray worker died; no worker left"})
                self.queue.clear()
        else:  # Ray restarts it (model loaded again): wait until it answers before giving it work
            self.inflight[self.actors[slot].ready.remote()] = (slot, None)

    def done(self, slot: int, t: dict[str, Any] | None, upd: dict[str, Any] | None) -> None:
        """An actor answered: a document's result (``upd``), or a probe; the actor is idle again."""
        if t is not None and upd is not None:
            if self.tries[t["index"]] > 1:
                upd["attempts"] = self.tries[t["index"]]
            self.finished(t, upd)
        self.idle.append(slot)

    def step(self) -> None:
        """Wait for the next answer (a minute at most) and act on it."""
        from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

        ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=60.0)
        if not ready:
            return  # still working (a long document, or actors waiting for resources)
        slot, t = self.inflight.pop(ready[0])
        try:
            upd = self.ray.get(ready[0], timeout=60.0)
        except RayActorError as exc:  # the worker process died (with this document in hand when t is set)
            self.died(slot, t, exc)
            return
        except (RayTaskError, GetTimeoutError) as exc:  # process_document raised (it should not)
            upd = None if t is None else {
                "status": "failed", "reason": f"internal error: {' '.join(str(exc).split())[:300]}"}
        self.done(slot, t, upd)


def _start_actors(ray: Any, n: int, threads: int, opts: Any, s_dict: dict[str, Any], init: Callable[..., None],
                  work: Callable[..., dict[str, Any]]) -> list[Any]:
    """``n`` CorpusWorker actors, spread over the cluster, each pinned to ``threads`` CPUs."""
    remote_cls = ray.remote(CorpusWorker).options(
        num_cpus=threads, num_gpus=opts.gpus_per_worker or 0, max_restarts=ACTOR_RESTARTS, max_task_retries=0,
        scheduling_strategy="SPREAD")
    return [remote_cls.remote(init, work, s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"), threads,
                              s_dict.get("embedding_backend", "auto"))
            for _ in range(n)]


def run_ray(tasks: list[dict[str, Any]], store: ResultStore, opts: Any, s_dict: dict[str, Any], threads: int,
            init: Callable[..., None], work: Callable[..., dict[str, Any]],
            started: Started, finished: Finished, retried: Retried | None = None) -> None:
    """Analyse ``tasks`` on ``opts.jobs`` actors (``opts``: chunkscope.corpus.run.RunOptions).

    ``work(task, store)`` analyses and writes one document, ``started``/``finished``/``retried`` report to the
    runner."""
    ray = _ray()
    n = min(opts.jobs, len(tasks))
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    owns = ensure_ray(opts.address, num_cpus=max(os.cpu_count() or 1, n * threads))
    actors: list[Any] = []
    try:
        check_room(threads, opts.gpus_per_worker or 0, threads_given=opts.threads is not None)
        actors += _start_actors(ray, n, threads, opts, s_dict, init, work)
        sched = _Schedule(ray, actors, tasks, ray.put(store), opts.max_retries, started, finished, retried)
        sched.dispatch()
        while sched.busy():
            sched.step()
            sched.dispatch()
    finally:
        for a in actors:  # free their CPUs/GPUs now (a cluster is shared)
            try:
                ray.kill(a)
            except Exception:  # boundary: cleanup in a finally (an actor already gone, a lost connection) must
                pass  # never hide how the run itself ended
        if owns:
            ray.shutdown()
