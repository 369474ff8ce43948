"""ChunkScope: inspect RAG chunk quality.

Documents are text plus spans; chunkers return spans; five metrics score each chunking; the
adaptive winner is the best candidate.

The public API (also documented in the README)::

    import chunkscope
    doc = chunkscope.load("report.pdf")                       # or bytes, with name="report.pdf"
    chunks = chunkscope.chunk(doc, "recursive-1100+pp", chunk_size=800)
    report = chunkscope.analyze(doc, chunkscope.Settings.from_file("winner.toml"))

Names resolve lazily, so ``import chunkscope`` (and ``chunkscope --help``) stays instant.
Nothing in this package imports Streamlit; plotly only in ``chunkscope.present``.
"""

from typing import Any

from chunkscope.version import __version__

_API = {
    "load": "chunkscope.api",
    "chunk": "chunkscope.api",
    "analyze": "chunkscope.api",
    "Chunk": "chunkscope.api",
    "Settings": "chunkscope.analysis.settings",
    "Document": "chunkscope.document",
    "Report": "chunkscope.report",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    mod = _API.get(name)
    if mod is None:
        raise AttributeError(f"module 'chunkscope' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)
