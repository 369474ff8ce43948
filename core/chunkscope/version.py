"""The engine's version and build (both in every report's provenance)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__version__ = "0.2.0"


def digest(root: Path) -> str:
    """A digest of the files below ``root`` (names and bytes: code, the coreference model, the LLM prompts),
    compiled bytecode left out."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".pyc", ".pyo")
                    and "__pycache__" not in p.parts):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


@lru_cache(maxsize=1)
def build() -> str:
    """The digest of the engine's own files (its code and the data it ships, such as the coreference model):
    it changes with any change to the engine, where ``__version__`` waits for a release, so results made by
    other code are never taken for this code's (the corpus resume key, the app's caches)."""
    return digest(Path(__file__).resolve().parent)
