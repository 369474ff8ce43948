"""The one process-wide cache: bounded, thread-safe, least recently used evicted first.

Every process cache of the engine (token counts, sentence units, embedding vectors, span
embedders, tune results) is a ``BoundedCache``: a ``cachetools.LRUCache`` behind a lock. At its
cap it evicts one old entry per new one (never a clear-all), and callers take what they just
computed from their own hands, never by re-reading the cache (an entry may be evicted by another
thread between the write and the read).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Generic, Hashable, Iterable, TypeVar

from cachetools import LRUCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MISSING = object()


class BoundedCache(Generic[K, V]):
    """An LRU cache of at most ``maxsize`` entries (or total ``getsizeof`` weight), safe across threads."""

    def __init__(self, maxsize: int, getsizeof: Callable[[V], float] | None = None):
        if maxsize < 1:
            raise ValueError("maxsize must be >= 1")
        self._data: LRUCache = LRUCache(maxsize=maxsize, getsizeof=getsizeof)
        self._lock = threading.RLock()

    @property
    def maxsize(self) -> float:
        return self._data.maxsize

    def get(self, key: K, default: Any = None) -> Any:
        with self._lock:
            return self._data.get(key, default)

    def put(self, key: K, value: V) -> V:
        """Store ``value`` (evicting the least recently used entries if needed); return it."""
        with self._lock:
            try:
                self._data[key] = value
            except ValueError:  # a single value heavier than the whole cache: not cached
                pass
        return value

    def get_many(self, keys: Iterable[K]) -> dict[K, V]:
        """The cached values among ``keys`` (one lock round)."""
        out: dict[K, V] = {}
        with self._lock:
            for k in keys:
                v = self._data.get(k, _MISSING)
                if v is not _MISSING:
                    out[k] = v
        return out

    def put_many(self, items: dict[K, V]) -> None:
        with self._lock:
            for k, v in items.items():
                self.put(k, v)

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The cached value, else ``compute()`` (outside the lock) stored and returned."""
        v = self.get(key, _MISSING)
        if v is not _MISSING:
            return v
        return self.put(key, compute())

    def pop(self, key: K, default: Any = None) -> Any:
        with self._lock:
            return self._data.pop(key, default)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)
