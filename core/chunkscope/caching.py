"""The one process-wide cache: bounded, thread-safe, least recently used evicted first.

Every process cache of the engine (token counts, sentence units, embedding vectors, span
embedders, tune results) is a ``BoundedCache``: a ``cachetools.LRUCache`` behind a lock. At its
cap it evicts one old entry per new one (never a clear-all), and callers take what they just
computed from their own hands, never by re-reading the cache (an entry may be evicted by another
thread between the write and the read).

The disk caches (below ``cache_root``) are bounded on a shared server only: ``DiskKV`` (SQLite
rows that record their last use) and JSON files, least recently used evicted first (``trim_disk_cache``).
cachetools keeps nothing on disk, so the eviction there is this module's own.

Where each disk cache lives, and whether it is on, is one table (``cache_root``): with
``CHUNKSCOPE_CACHE_DIR`` set, every one of them is below it; without it,

* LLM answers (llm-regex patterns, generated questions) go to the user's cache directory
  (``platformdirs.user_cache_dir("chunkscope")``: ``$XDG_CACHE_HOME/chunkscope`` or ``~/.cache/chunkscope``,
  ``~/Library/Caches/chunkscope``, ``chunkscope`` in ``%LOCALAPPDATA%``): they cost a paid request each;
* coreference pairs and embedding vectors are not cached on disk (in memory only): they are recomputed
  locally;
* the app's scratch files (corpus uploads and results, uploaded mention files) go to the temp directory.
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import sqlite3
import tempfile
import threading
import time
from contextlib import closing, suppress
from pathlib import Path
from typing import Any, Callable, Generic, Hashable, Iterable, Literal, TypeVar, overload

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
        """The cap: entries, or total weight with ``getsizeof``."""
        return self._data.maxsize

    def get(self, key: K, default: Any = None) -> Any:
        """The cached value of ``key``, else ``default``."""
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
        """Store every item (one lock round)."""
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
        """Remove ``key``; its value, else ``default``."""
        with self._lock:
            return self._data.pop(key, default)

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            self._data.clear()

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


# ---------------------------------------------------------------- on-disk caches
#
# Under ``CHUNKSCOPE_CACHE_DIR``: embedding vectors in SQLite files (``DiskKV``, one per model) and
# JSON answers (coreference pairs, llm-regex, generated questions), one file each. Unbounded on a
# machine of one's own; on a shared server at most the policy's ``max_cache_mb`` in all, least
# recently used evicted first: a SQLite row by its ``used`` time, a file by its modification time
# (a reader touches what it uses, ``file_used``).

log = logging.getLogger(__name__)
CACHE_DIR_ENV = "CHUNKSCOPE_CACHE_DIR"
CacheKind = Literal["llm", "coref", "embeddings", "scratch"]
_WITHOUT_ENV = {"llm": "user", "coref": "off", "embeddings": "off", "scratch": "temp"}  # the module docstring's table


@overload
def cache_root(kind: Literal["llm", "scratch"]) -> Path: ...


@overload
def cache_root(kind: Literal["coref", "embeddings"]) -> Path | None: ...


def cache_root(kind: CacheKind) -> Path | None:
    """The folder the disk cache of ``kind`` lives below, or None when that cache is off (module docstring)."""
    root = _env_root()
    if root is not None:
        return root
    where = _WITHOUT_ENV[kind]
    if where == "user":
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("chunkscope", appauthor=False, opinion=False))
    return Path(tempfile.gettempdir()) if where == "temp" else None


def _env_root() -> Path | None:
    """``CACHE_DIR_ENV``'s folder; None when it is unset or blank."""
    env = os.environ.get(CACHE_DIR_ENV, "").strip()
    return Path(env).expanduser() if env else None


SQLITE_SUFFIX = ".sqlite"
TRIM_TO = 0.8  # over the bound, evict down to this share of it (not one entry per write)
_trim_lock = threading.Lock()


class DiskKV:
    """One SQLite file of ``key -> bytes`` with the time each row was last used (for LRU eviction)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._lock, self._connect() as con:
            _ensure_table(con)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored values among ``keys`` (their rows marked used now)."""
        out: dict[str, bytes] = {}
        if not keys:
            return out
        now = time.time()
        with self._lock, self._connect() as con:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                marks = ",".join("?" * len(part))
                rows = con.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", part).fetchall()
                if rows:
                    hits = [k for k, _ in rows]
                    con.execute(f"UPDATE emb SET used = ? WHERE key IN ({','.join('?' * len(hits))})", [now, *hits])
                out.update(rows)
        return out

    def put_many(self, items: dict[str, bytes]) -> None:
        """Store the items (keys already present keep their value), then bound the disk caches."""
        if not items:
            return
        now = time.time()
        with self._lock, self._connect() as con:
            con.executemany("INSERT OR IGNORE INTO emb (key, vec, used) VALUES (?, ?, ?)",
                            [(k, v, now) for k, v in items.items()])
        disk_cache_written()


def _ensure_table(con: sqlite3.Connection) -> None:
    """The table (named for its first use, embedding vectors; a file from before ``used`` gets the column)."""
    con.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL, used REAL NOT NULL DEFAULT 0)")
    if "used" not in [r[1] for r in con.execute("PRAGMA table_info(emb)")]:
        con.execute("ALTER TABLE emb ADD COLUMN used REAL NOT NULL DEFAULT 0")


def store_json(path: Path, entry: dict[str, Any]) -> None:
    """Write one JSON cache entry atomically (a temporary file renamed), then bound the disk caches.

    A cache that cannot be written (read-only, full) is left as it is: it must not fail the run.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entry, f, ensure_ascii=False, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass
    disk_cache_written()


def file_used(path: str | os.PathLike) -> None:
    """A cached file was read: it becomes the most recently used (its modification time is now)."""
    try:
        os.utime(path)
    except OSError:
        pass


_disk_budget: int | None = None  # bytes; set from the process's sharing policy (``set_disk_budget``)


def set_disk_budget(max_bytes: int | None) -> None:
    """Bytes the on-disk caches may take in all (None: no bound). ``chunkscope.sharing`` sets it from the
    policy (``max_cache_mb`` on a shared server) whenever the process's policy is read or replaced."""
    global _disk_budget
    _disk_budget = max_bytes


def disk_cache_written() -> None:
    """Called after a write to a disk cache: on a shared server, trim the caches to the bound."""
    budget = _disk_budget
    root = _env_root()  # bounded on a shared server, which always sets it
    if budget is not None and root is not None:
        trim_disk_cache(root, budget)


def _sqlite_bytes(con: sqlite3.Connection) -> int:
    (size,), (free,), (page,) = (con.execute(f"PRAGMA {p}").fetchall()[0] for p in
                                 ("page_count", "freelist_count", "page_size"))
    return (size - free) * page  # pages in use: freed ones are reused before the file grows


def _cache_files(root: Path) -> tuple[list[Path], list[tuple[float, int, str]]]:
    """The SQLite files under ``root``, and every other cache file as ``(mtime, size, path)`` (SQLite's
    journal files are neither: they belong to their database)."""
    dbs, files = [], []
    for p in root.rglob("*"):
        try:
            if p.is_symlink() or not p.is_file():
                continue
            if p.suffix == SQLITE_SUFFIX:
                dbs.append(p)
            elif not p.name.endswith((SQLITE_SUFFIX + "-journal", SQLITE_SUFFIX + "-wal", SQLITE_SUFFIX + "-shm")):
                st = p.stat()
                files.append((st.st_mtime, st.st_size, str(p)))
        except OSError:
            continue
    return dbs, files


def disk_cache_bytes(root: str | os.PathLike) -> int:
    """What the disk caches under ``root`` hold: files' sizes, and the pages in use of SQLite files."""
    dbs, files = _cache_files(Path(root))
    total = sum(size for _, size, _ in files)
    for db in dbs:
        try:
            with closing(sqlite3.connect(db, timeout=30)) as con:
                total += _sqlite_bytes(con)
        except sqlite3.Error:
            continue
    return total


def trim_disk_cache(root: str | os.PathLike, max_bytes: int) -> int:
    """Over ``max_bytes``: evict the least recently used entries under ``root`` (files and SQLite rows, in
    one order) until ``TRIM_TO`` of it is left. Returns the bytes freed (estimated for rows)."""
    root = Path(root)
    with _trim_lock:
        total = disk_cache_bytes(root)
        if total <= max_bytes:
            return 0
        need = total - int(TRIM_TO * max_bytes)
        dbs, found = _cache_files(root)
        files = [(mtime, size, "", path) for mtime, size, path in found]
        files.sort()
        streams: list[list[tuple[float, int, str, str]]] = [files]
        for i, db in enumerate(dbs):  # each file's rows read whole and the file closed before any delete
            try:
                with closing(sqlite3.connect(db, timeout=30)) as con:
                    _ensure_table(con)
                    streams.append([(used, size, str(i), key) for used, size, key in con.execute(
                        "SELECT used, length(vec) + length(key) + 16, key FROM emb ORDER BY used")])
            except sqlite3.Error as exc:
                log.warning("disk cache %s not trimmed: %s", db, exc)
        freed, doomed_files, doomed_rows = 0, [], {}  # type: ignore[var-annotated]
        for _used, size, db_i, ref in heapq.merge(*streams):
            if freed >= need:
                break
            freed += size
            if db_i:
                doomed_rows.setdefault(int(db_i), []).append(ref)
            else:
                doomed_files.append(ref)
        for ref in doomed_files:
            with suppress(OSError):
                os.unlink(ref)
        for i, keys in doomed_rows.items():
            try:
                with closing(sqlite3.connect(dbs[i], timeout=30)) as con, con:
                    for j in range(0, len(keys), 500):
                        part = keys[j:j + 500]
                        con.execute(f"DELETE FROM emb WHERE key IN ({','.join('?' * len(part))})", part)
            except sqlite3.Error as exc:
                log.warning("disk cache %s not trimmed: %s", dbs[i], exc)
        return freed
