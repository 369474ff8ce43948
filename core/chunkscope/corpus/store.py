"""Where a corpus run's results live: a local folder or an fsspec URI (``file://``, ``s3://``, ``gs://``...).

One small interface, used by the runner's one writer path (every engine) and by the readers
(``load_summary``, ``corpus_report.CorpusResults``)::

    store = ResultStore("results/")            # or "file:///data/results", "s3://bucket/run1"
    store.write_text("reports/x.json", text)   # atomic: a temporary name, then a rename
    with store.open_write("winners.jsonl") as fh: ...   # streamed, same atomic rename
    store.is_file(rel), store.read_text(rel), store.read_bytes(rel)

**Atomic writes.** A result is first written under a unique temporary name beside its final
name (``NAME.tmp-<pid>-<random>``), then renamed over it (``os.replace`` for a local folder;
``fs.mv`` for an fsspec filesystem, which is a rename on local and most network filesystems and
a server-side copy on object stores, where a reader never sees a partly written object). A
crash leaves at worst a stray ``.tmp-*`` file, never a half-written report. Two processes writing
the same document (a retry racing a worker thought dead) each use their own temporary name and
the last rename wins with identical content.

fsspec is needed only for URIs (it comes with the Hugging Face stack; ``pip install fsspec``).
"""

from __future__ import annotations

import contextlib
import io
import os
import uuid
from pathlib import Path
from typing import IO, Any, Iterator

TMP_MARK = ".tmp-"

# the files a corpus run writes beside its per-document results (what a shared server may zip)
RUN_FILES = ("summary.json", "metrics.parquet", "metrics.csv", "winners.jsonl", "report.html")


def is_uri(location: str | os.PathLike) -> bool:
    """Whether ``location`` is a URI (``scheme://...``) rather than a local path."""
    return "://" in str(location)


def _tmp_name(name: str) -> str:
    return f"{name}{TMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"


class ResultStore:
    """A results root: a local directory, or any fsspec URI. Paths passed in are relative ('/'-separated)."""

    def __init__(self, location: str | os.PathLike):
        self.location = str(location)
        self._fs: Any = None
        self._root = ""
        if is_uri(self.location):
            try:
                import fsspec
            except ImportError:
                raise ValueError(f"{self.location}: a results URI needs fsspec (pip install fsspec)") from None
            try:
                self._fs, self._root = fsspec.core.url_to_fs(self.location)
            except (ValueError, ImportError) as exc:  # unknown protocol / its package missing
                raise ValueError(f"{self.location}: {' '.join(str(exc).split())}") from None
            self._root = self._root.rstrip("/")
        else:
            self._local = Path(self.location).expanduser()

    def __reduce__(self):  # ship the location only (Ray tasks, process pools)
        return (ResultStore, (self.location,))

    def __repr__(self) -> str:
        return f"ResultStore({self.location!r})"

    @property
    def local_dir(self) -> Path | None:
        """The local folder (None for a URI)."""
        return None if self._fs is not None else self._local

    def _path(self, rel: str) -> Any:
        if self._fs is not None:
            return f"{self._root}/{rel}" if rel else self._root
        return self._local / rel if rel else self._local

    def display(self, rel: str = "") -> str:
        """How ``rel`` (or the root) is named in messages."""
        return f"{self.location.rstrip('/')}/{rel}" if rel else self.location

    def makedirs(self, rel: str = "") -> None:
        """Create the folder ``rel`` (and its parents) when missing."""
        if self._fs is not None:
            self._fs.makedirs(self._path(rel), exist_ok=True)
        else:
            Path(self._path(rel)).mkdir(parents=True, exist_ok=True)

    def is_file(self, rel: str) -> bool:
        """Whether ``rel`` is a file."""
        if self._fs is not None:
            return bool(self._fs.isfile(self._path(rel)))
        return Path(self._path(rel)).is_file()

    def exists(self) -> bool:
        """Whether the root exists."""
        if self._fs is not None:
            return bool(self._fs.exists(self._root))
        return self._local.exists()

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of ``rel``."""
        if self._fs is not None:
            return self._fs.cat_file(self._path(rel))
        return Path(self._path(rel)).read_bytes()

    def read_text(self, rel: str) -> str:
        """The text of ``rel`` (UTF-8)."""
        return self.read_bytes(rel).decode("utf-8")

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Atomic: a unique temporary name, then a rename over ``rel`` (its folder is created if needed)."""
        final = self._path(rel)
        if self._fs is not None:
            tmp = _tmp_name(final)
            self._fs.makedirs(self._fs._parent(final), exist_ok=True)
            self._fs.pipe_file(tmp, data)
            self._fs.mv(tmp, final)
            return
        tmp_p = Path(_tmp_name(str(final)))
        tmp_p.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp_p.write_bytes(data)
            os.replace(tmp_p, final)
        except BaseException:  # whatever stopped the write (Ctrl-C included): no temp file left, then re-raised
            tmp_p.unlink(missing_ok=True)
            raise

    def write_text(self, rel: str, text: str) -> None:
        """Write ``text`` to ``rel`` (UTF-8), atomically."""
        self.write_bytes(rel, text.encode("utf-8"))

    @contextlib.contextmanager
    def open_write(self, rel: str) -> Iterator[IO[str]]:
        """A text file to stream into; renamed over ``rel`` when the block ends without an error."""
        final = self._path(rel)
        tmp = _tmp_name(str(final))
        if self._fs is not None:
            fh = self._fs.open(tmp, "w", encoding="utf-8")
        else:
            fh = open(tmp, "w", encoding="utf-8")
        ok = False
        try:
            yield fh
            ok = True
        finally:
            fh.close()
            if ok:
                if self._fs is not None:
                    self._fs.mv(tmp, final)
                else:
                    os.replace(tmp, final)
            else:
                with contextlib.suppress(OSError):
                    if self._fs is not None:
                        self._fs.rm(tmp)
                    else:
                        os.unlink(tmp)

    def write_parquet(self, rel: str, df: Any) -> None:
        """Write a pandas DataFrame to ``rel`` as Parquet, atomically."""
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        self.write_bytes(rel, buf.getvalue())

    def read_parquet(self, rel: str) -> Any:
        """Read the Parquet file ``rel`` as a pandas DataFrame."""
        import pandas as pd

        return pd.read_parquet(io.BytesIO(self.read_bytes(rel)))


def as_store(location: str | os.PathLike | ResultStore) -> ResultStore:
    """``location`` as a ResultStore (a store is returned as is)."""
    return location if isinstance(location, ResultStore) else ResultStore(location)
