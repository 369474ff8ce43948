"""The largest document ingest reads: a ``Limits`` value the caller passes to ``load_bytes`` / ``load_document``.

The edges (the CLI, the app, a corpus run) fill it with ``Limits.from_env``: an explicit size, else
``$CHUNKSCOPE_MAX_BYTES``, else 50 MB; ``$CHUNKSCOPE_MAX_PAGES``, else 10,000 pages. How a refusal is worded is
the caller's hint too: ``shared`` (a shared server's limits, which its users cannot change) names no setting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from chunkscope.ingest.errors import IngestError, human_bytes

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_BYTES_ENV = "CHUNKSCOPE_MAX_BYTES"
DEFAULT_MAX_PAGES = 10_000
MAX_PAGES_ENV = "CHUNKSCOPE_MAX_PAGES"  # also the shared-mode page limit (chunkscope.sharing)


def resolve_max_bytes(max_bytes: int | None = None, env: Mapping[str, str] | None = None) -> int:
    """The size limit in bytes: the argument, else ``$CHUNKSCOPE_MAX_BYTES``, else 50 MB."""
    if max_bytes is not None:
        if int(max_bytes) <= 0:
            raise IngestError(f"the size limit must be a positive number of bytes (got {max_bytes})")
        return int(max_bytes)
    value = (os.environ if env is None else env).get(MAX_BYTES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        limit = int(float(value))
    except ValueError:
        raise IngestError(f"{MAX_BYTES_ENV} must be a number of bytes (got {value!r})") from None
    if limit <= 0:
        raise IngestError(f"{MAX_BYTES_ENV} must be a positive number of bytes (got {value!r})")
    return limit


def resolve_max_pages(env: Mapping[str, str] | None = None) -> int:
    """The page limit of a PDF: ``$CHUNKSCOPE_MAX_PAGES``, else (unset or not a number) 10,000."""
    try:
        return int((os.environ if env is None else env).get(MAX_PAGES_ENV, "").strip() or DEFAULT_MAX_PAGES)
    except ValueError:
        return DEFAULT_MAX_PAGES


@dataclass(frozen=True)
class Limits:
    """The largest document to read: ``max_bytes`` (its file), ``max_pages`` (a PDF's pages, checked before any
    is parsed). ``shared``: these are a shared server's limits, which its users cannot change, so a refusal says
    "this server's" and names no setting."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_pages: int = DEFAULT_MAX_PAGES
    shared: bool = False

    @classmethod
    def from_env(cls, max_bytes: int | None = None, *, shared: bool = False,
                 env: Mapping[str, str] | None = None) -> Limits:
        """The limits of the environment (see the module doc); ``max_bytes``, when given, wins."""
        return cls(resolve_max_bytes(max_bytes, env), resolve_max_pages(env), shared)

    def check_size(self, size: int, filename: str) -> None:
        """Refuse a file of more than ``max_bytes``."""
        if size > self.max_bytes:
            raise IngestError(
                f"{filename} is {human_bytes(size)}, over "
                + (f"this server's {human_bytes(self.max_bytes)} size limit" if self.shared else
                   f"the {human_bytes(self.max_bytes)} size limit (raise it with {MAX_BYTES_ENV} or --max-bytes)"))

    def check_pages(self, pages: int, filename: str) -> None:
        """Refuse a PDF of more than ``max_pages``."""
        if pages > self.max_pages:
            raise IngestError(f"{filename} has {pages:,} pages; "
                              + (f"this server takes at most {self.max_pages:,}" if self.shared else
                                 f"the limit is {self.max_pages:,} ({MAX_PAGES_ENV})"))
