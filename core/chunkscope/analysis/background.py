"""Work the analysis runs beside its stages, each as a ``concurrent.futures.Future`` with one owner.

Coreference and the embedding of the document's units need nothing but the text: they start in
threads of their own right after the first structure snapshot and run while the rest of the
structure stage runs (ONNX Runtime and tokenizers release the GIL); the stage that needs each
result waits for its future, looking at ``cancel`` meanwhile. An exception raised in a thread
(a bug, a Ctrl-C handed over by the int8 helper) is re-raised by ``.result()`` in the caller's.
"""

from __future__ import annotations

import threading
import time
from concurrent import futures
from typing import TYPE_CHECKING, Callable, TypeVar

from chunkscope.analysis.embedding import EmbeddingOutcome, span_embedding
from chunkscope.document import Document, Span

if TYPE_CHECKING:
    from chunkscope.analysis.resources import ResourcesProtocol
    from chunkscope.embeddings.spans import SpanEmbedder

T = TypeVar("T")
Check = Callable[[], None]  # raises AnalysisCancelled when the run was cancelled
Progress = Callable[[str, float, str], None]
# a test's hold on the unit pass: ``hold(stop)`` returns when the pass may start (soon after ``stop()`` is True)
Hold = Callable[[Callable[[], bool]], None]
HELP_TEXTS = 64  # texts of the unit pass the waiting thread runs between two looks at the clock (progress, cancel)


def in_thread(fn: Callable[[], T], name: str) -> futures.Future[T]:
    """Start ``fn()`` in a daemon thread (a cancelled run never waits for it); the future of its result."""
    future: futures.Future[T] = futures.Future()
    future.set_running_or_notify_cancel()

    def _target() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed over: .result() re-raises it in the waiting thread
            future.set_exception(exc)

    threading.Thread(target=_target, name=name, daemon=True).start()
    return future


def wait_for(future: futures.Future[T], check: Check, poll: float = 0.1) -> T:
    """The future's result (or its exception), calling ``check()`` every ``poll`` seconds while it runs."""
    while not future.done():
        futures.wait([future], timeout=poll)
        check()
    return future.result()


class UnitPass:
    """The one embedding pass over the document's units, in a thread it owns.

    The edge fragments of every structural chunking (``embed_ahead``) are embedded in one
    deduplicated model call by whichever thread is free first: the pass's after the units, or the
    analysis's after coreference (``prefetch``). The same call either way, so the same vectors.
    """

    def __init__(self, doc: Document, resources: ResourcesProtocol, stop: Callable[[], bool],
                 hold: Hold | None = None):
        self._doc, self._resources, self._hold = doc, resources, hold
        self._abandoned = threading.Event()  # the run stopped (or needs no embeddings): the pass need not start
        self._stop = lambda: stop() or self._abandoned.is_set()
        self._units_known = threading.Event()  # set when the pass knows the units (or gave up)
        self._span_embedder: SpanEmbedder | None = None
        self._ahead: list[Span] = []
        self._ahead_lock = threading.Lock()
        self._future: futures.Future[EmbeddingOutcome | None] | None = None

    def start(self) -> None:
        """Start the pass in its thread."""
        self._future = in_thread(self._run, "chunkscope-unit-pass")

    def abandon(self) -> None:
        """Tell the pass it is not needed (a pass not yet started never starts)."""
        self._abandoned.set()

    def embed_ahead(self, spans: list[Span]) -> None:
        """Spans whose edge fragments are embedded by ``prefetch`` (the metrics then find them in the cache)."""
        with self._ahead_lock:
            self._ahead = spans

    def _run(self) -> EmbeddingOutcome | None:
        try:
            if self._hold is not None:
                self._hold(self._stop)
            if self._abandoned.is_set():
                return None
            outcome = span_embedding(self._doc, self._resources, on_units=self._units_ready)
            if not self._abandoned.is_set():
                self.prefetch()
            return outcome
        finally:
            self._units_known.set()

    def _units_ready(self, se: SpanEmbedder) -> None:
        self._span_embedder = se
        self._units_known.set()

    def prefetch(self) -> float:
        """Embed the spans given to ``embed_ahead`` unless the other thread took them; the seconds it took."""
        with self._ahead_lock:
            spans, self._ahead = self._ahead, []
        se = self._span_embedder
        if not spans or se is None:
            return 0.0
        t0 = time.perf_counter()
        try:
            se.prefetch(spans)
        except Exception:  # noqa: BLE001 - boundary: a cache warm-up; the metrics embed what is missing and report any error themselves
            pass
        return time.perf_counter() - t0

    def join(self, check: Check, progress: Progress) -> tuple[EmbeddingOutcome, float, float]:
        """Wait for the pass, helping it: (its outcome, seconds prefetching here, other seconds waiting here)."""
        assert self._future is not None, "the unit pass was never started"
        future = self._future
        progress("embeddings", 0.0, "embedding the document's units")
        t_wait = time.perf_counter()
        while not self._units_known.wait(0.1):
            check()
        prefetch_s = self.prefetch()  # unless the pass's thread took them already
        self._help(future, check, progress)
        waited = time.perf_counter() - t_wait - prefetch_s
        outcome = future.result()  # the pass's error, if it failed (or was interrupted)
        if outcome is None:
            raise RuntimeError("the embedding pass ended without a result")
        return outcome, prefetch_s, waited

    def _help(self, future: futures.Future[EmbeddingOutcome | None], check: Check, progress: Progress) -> None:
        """Run a share of the pass's texts in this thread until it ends; say how far it is every second.

        int8: one text per model call, so the vectors are the same whichever thread runs a text.
        """
        emb = self._resources.loaded_embedder()
        told = time.perf_counter()
        while not future.done():
            if emb is None or not emb.help_encode(HELP_TEXTS):
                futures.wait([future], timeout=0.05)
            check()
            if time.perf_counter() - told >= 1.0:  # a long document's pass takes minutes: say how far it is
                told = time.perf_counter()
                far = emb.encode_progress() if emb is not None else None
                if far and far[1]:
                    progress("embeddings", 0.8 * far[0] / far[1],
                             f"embedding the document's units: {far[0]:,} of {far[1]:,} texts")
