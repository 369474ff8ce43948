"""Resources: what analyses share and reuse (the embedding model, span embedders, the LLM client).

One per process / app session; it is also the chunkers' ``RunContext`` (``embedder()``, ``llm()``).
The analysis types what it uses of one with ``ResourcesProtocol``; ``shared_resources`` is the
process's one when the caller gives none (the public API, the CLI).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from chunkscope.caching import BoundedCache
from chunkscope.document import Document

if TYPE_CHECKING:
    from chunkscope.embeddings.embedder import Embedder
    from chunkscope.embeddings.spans import SpanEmbedder
    from chunkscope.llm import LLMClient, LLMSettings

SPAN_EMBEDDERS_MAX = 4  # documents whose span embedders stay in memory


class ResourcesProtocol(Protocol):
    """What an analysis uses of its resources: the model, the span embedders and the LLM client."""

    @property
    def mode(self) -> str:
        """The embedding mode the span embedders use ("composed" or "exact")."""

    def serves(self, embedder_name: str | None, mode: str, backend: str = "auto") -> bool:
        """Whether these resources run that model, mode and backend."""

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""

    def loaded_embedder(self) -> Embedder | None:
        """The embedding model when it is loaded already, else None (never loads it)."""

    def embedding_seconds(self) -> float:
        """Seconds spent loading and running the embedding model so far (all analyses)."""

    def span_embedder(self, doc: Document) -> SpanEmbedder:
        """The document's span embedder (made on first use)."""

    def cached_span_embedder(self, doc: Document) -> SpanEmbedder | None:
        """The document's span embedder when an earlier analysis made one, else None."""

    def llm_settings(self) -> LLMSettings:
        """The LLM settings this run uses."""

    def llm(self) -> LLMClient | None:
        """The LLM client, or None without an endpoint."""


class Resources:
    """Shared, reusable resources for analyses. Acts as the chunkers' RunContext."""

    def __init__(self, embedder_name: str | None = None, mode: str = "composed", llm_settings: Any = None,
                 backend: str = "auto"):
        self.embedder_name = embedder_name
        self.mode = mode
        self.backend = backend
        self._embedder: Embedder | None = None
        self._llm_settings = llm_settings
        self._llm: LLMClient | None = None
        # the latest few documents' span embedders (bounded LRU, shared by every session's thread)
        self._span_embedders: BoundedCache[tuple[str, str], SpanEmbedder] = BoundedCache(SPAN_EMBEDDERS_MAX)
        self.load_seconds = 0.0

    def serves(self, embedder_name: str | None, mode: str, backend: str = "auto") -> bool:
        """Whether these resources run that model, mode and backend."""
        return self.embedder_name == embedder_name and self.mode == mode and self.backend == backend

    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use."""
        if self._embedder is None:
            from chunkscope.embeddings.embedder import Embedder

            t0 = time.perf_counter()
            self._embedder = Embedder.load(self.embedder_name, backend=self.backend)
            self.load_seconds = time.perf_counter() - t0
        return self._embedder

    def loaded_embedder(self) -> Embedder | None:
        """The embedding model when it is loaded already, else None (never loads it)."""
        return self._embedder

    def embedding_seconds(self) -> float:
        """Seconds spent loading and running the embedding model so far (all analyses)."""
        if self._embedder is None:
            return 0.0
        stats = getattr(self._embedder, "stats", None)
        return self.load_seconds + float(getattr(stats, "seconds", 0.0) or 0.0)

    def llm_settings(self) -> LLMSettings:
        """The LLM settings this run uses: the ones given, else the environment's."""
        from chunkscope.llm import LLMSettings

        return self._llm_settings or LLMSettings.from_env()

    def llm(self) -> LLMClient | None:
        """The LLM client (made on first use), or None without an endpoint."""
        if self._llm is None:
            self._llm = _llm_client(self.llm_settings())
        return self._llm

    def with_llm(self, llm_settings: Any) -> ResourcesProtocol:
        """The same model and unit embeddings (shared) with their own LLM settings and client.

        For a shared Resources (the app's, one per model for every session): one session's
        endpoint and API key must never be used for another session's requests.
        """
        return _LLMView(self, llm_settings)

    def forget_documents(self) -> None:
        """Drop the span embedders of every document (the model and its vector cache stay)."""
        self._span_embedders.clear()

    def cached_span_embedder(self, doc: Document) -> SpanEmbedder | None:
        """The document's span embedder when an earlier analysis made one, else None (never makes one)."""
        return self._span_embedders.get((doc.fingerprint, self.mode))

    def span_embedder(self, doc: Document) -> SpanEmbedder:
        """The document's span embedder (made on first use, kept for the latest few documents)."""
        key = (doc.fingerprint, self.mode)
        se = self._span_embedders.get(key)
        if se is None:
            from chunkscope.embeddings.spans import SpanEmbedder

            se = self._span_embedders.put(key, SpanEmbedder(doc, self.embedder(), mode=self.mode))
        return se


def _llm_client(settings: LLMSettings) -> LLMClient | None:
    """A client for ``settings``' endpoint; None when none is configured (or the client cannot be imported)."""
    try:
        from chunkscope.llm import LLMClient
    except ImportError:
        return None
    return LLMClient(settings) if settings.configured else None


class _LLMView:
    """A Resources that shares everything with ``base`` except the LLM settings and client."""

    def __init__(self, base: Resources, llm_settings: Any):
        self._base = base
        self._llm_settings = llm_settings
        self._llm: LLMClient | None = None

    llm = Resources.llm
    llm_settings = Resources.llm_settings

    def with_llm(self, llm_settings: Any) -> _LLMView:
        """The same shared resources with other LLM settings."""
        return _LLMView(self._base, llm_settings)

    @property
    def mode(self) -> str:
        """The shared resources' embedding mode."""
        return self._base.mode

    def serves(self, embedder_name: str | None, mode: str, backend: str = "auto") -> bool:
        """Whether the shared resources run that model, mode and backend."""
        return self._base.serves(embedder_name, mode, backend)

    def embedder(self) -> Embedder:
        """The shared embedding model."""
        return self._base.embedder()

    def loaded_embedder(self) -> Embedder | None:
        """The shared embedding model when loaded, else None."""
        return self._base.loaded_embedder()

    def embedding_seconds(self) -> float:
        """The shared model's seconds so far."""
        return self._base.embedding_seconds()

    def forget_documents(self) -> None:
        """Drop the shared span embedders of every document."""
        self._base.forget_documents()

    def span_embedder(self, doc: Document) -> SpanEmbedder:
        """The document's shared span embedder."""
        return self._base.span_embedder(doc)

    def cached_span_embedder(self, doc: Document) -> SpanEmbedder | None:
        """The document's shared span embedder when one exists, else None."""
        return self._base.cached_span_embedder(doc)

    def __getattr__(self, name: str) -> Any:  # embedder_name, backend, ...: the shared ones
        return getattr(self._base, name)


_SHARED: BoundedCache[tuple[str | None, str, str], Resources] = BoundedCache(1)  # one model at a time


def shared_resources(embedder_name: str | None, mode: str = "composed", backend: str = "auto") -> Resources:
    """The process's Resources for that model, mode and backend (one at a time: another replaces it)."""
    key = (embedder_name, mode, backend)
    return _SHARED.get_or_compute(key, lambda: Resources(embedder_name, mode, backend=backend))
