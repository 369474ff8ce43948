"""Resources: what analyses share and reuse (the embedding model, span embedders, the LLM client).

One per process / app session; it is also the chunkers' ``RunContext`` (``embedder()``, ``llm()``).
"""

from __future__ import annotations

import time
from typing import Any

from chunkscope.caching import BoundedCache
from chunkscope.document import Document

SPAN_EMBEDDERS_MAX = 4  # documents whose span embedders stay in memory


class Resources:
    """Shared, reusable resources for analyses. Acts as the chunkers' RunContext."""

    def __init__(self, embedder_name: str | None = None, mode: str = "composed", llm_settings: Any = None,
                 backend: str = "auto"):
        self.embedder_name = embedder_name
        self.mode = mode
        self.backend = backend
        self._embedder = None
        self._llm_settings = llm_settings
        self._llm = None
        # the latest few documents' span embedders (bounded LRU, shared by every session's thread)
        self._span_embedders: BoundedCache[tuple[str, str], Any] = BoundedCache(SPAN_EMBEDDERS_MAX)
        self.load_seconds = 0.0

    def matches(self, embedder_name: str | None, mode: str, backend: str = "auto") -> bool:
        return self.embedder_name == embedder_name and self.mode == mode and self.backend == backend

    def for_settings(self, embedder_name: str | None, mode: str, backend: str = "auto") -> "Resources":
        """This Resources when it serves that model, mode and backend, else a new one (same LLM settings)."""
        if self.matches(embedder_name, mode, backend):
            return self
        return Resources(embedder_name, mode, self._llm_settings, backend)

    def embedder(self):
        if self._embedder is None:
            from chunkscope.embeddings.embedder import Embedder

            t0 = time.perf_counter()
            self._embedder = Embedder.load(self.embedder_name, backend=self.backend)
            self.load_seconds = time.perf_counter() - t0
        return self._embedder

    def loaded_embedder(self):
        """The embedding model when it is loaded already, else None (never loads it)."""
        return self._embedder

    def embedding_seconds(self) -> float:
        """Seconds spent loading and running the embedding model so far (all analyses)."""
        if self._embedder is None:
            return 0.0
        stats = getattr(self._embedder, "stats", None)
        return self.load_seconds + float(getattr(stats, "seconds", 0.0) or 0.0)

    def llm_settings(self):
        """The LLM settings this run uses: the ones given, else the environment's."""
        from chunkscope.llm import LLMSettings

        return self._llm_settings or LLMSettings.from_env()

    def llm(self):
        if self._llm is None:
            try:
                from chunkscope.llm import LLMClient
            except ImportError:
                return None
            settings = self.llm_settings()
            if not settings.configured:
                return None
            self._llm = LLMClient(settings)
        return self._llm

    def with_llm(self, llm_settings: Any) -> "Resources":
        """This Resources (model, unit embeddings: shared) with its own LLM settings and client.

        For a shared Resources (the app's, one per model for every session): one session's
        endpoint and API key must never be used for another session's requests.
        """
        return _LLMView(self, llm_settings)  # type: ignore[return-value]

    def forget_documents(self) -> None:
        """Drop the span embedders of every document (the model and its vector cache stay)."""
        self._span_embedders.clear()

    def cached_span_embedder(self, doc: Document):
        """The document's span embedder when an earlier analysis made one, else None (never makes one)."""
        return self._span_embedders.get((doc.fingerprint, self.mode))

    def span_embedder(self, doc: Document):
        key = (doc.fingerprint, self.mode)
        se = self._span_embedders.get(key)
        if se is None:
            from chunkscope.embeddings.spans import SpanEmbedder

            se = self._span_embedders.put(key, SpanEmbedder(doc, self.embedder(), mode=self.mode))
        return se


class _LLMView:
    """A Resources that shares everything with ``base`` except the LLM settings and client."""

    def __init__(self, base: Resources, llm_settings: Any):
        self._base = base
        self._llm_settings = llm_settings
        self._llm = None

    llm = Resources.llm
    llm_settings = Resources.llm_settings

    def with_llm(self, llm_settings: Any) -> "_LLMView":
        return _LLMView(self._base, llm_settings)

    def for_settings(self, embedder_name: str | None, mode: str, backend: str = "auto") -> Any:
        if self._base.matches(embedder_name, mode, backend):
            return self
        return Resources(embedder_name, mode, self._llm_settings, backend)

    def __getattr__(self, name: str) -> Any:  # embedder(), span_embedder(), mode, ...: the shared ones
        return getattr(self._base, name)
