"""Optional dependencies: which extra of the ``chunkscope`` distribution brings each one, and the one
message that says how to install it.

The engine installs with what every analysis needs (PDF reading, tokens, the bundled embedding model,
spaCy, the metrics). What only some users need is an extra (``pyproject.toml``
``[project.optional-dependencies]``): the Streamlit app, Word and PowerPoint files, the retrieval
check's BM25, LLM endpoints, the LangChain chunkers and adapter, Ray, Maverick. ``make setup``
installs them all (``.[all,test]``). Code that needs one imports it through :func:`require`, so a
missing package is one line naming the extra (``pip install 'chunkscope[office]'``), never a bare
``ModuleNotFoundError``. ``tests/test_layout.py`` checks this table against ``pyproject.toml``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable

# import name -> (extra, distribution name in that extra)
EXTRAS: dict[str, tuple[str, str]] = {
    "streamlit": ("app", "streamlit"),
    "mammoth": ("office", "mammoth"),
    "pptx": ("office", "python-pptx"),
    "bm25s": ("retrieval", "bm25s"),
    "openai": ("llm", "openai"),
    "langchain_text_splitters": ("langchain", "langchain-text-splitters"),
    "ray": ("ray", "ray"),
    "maverick": ("maverick", "maverick-coref"),
}


class MissingExtra(ValueError):
    """An optional package is not installed; the message names the extra that brings it."""


def install_hint(module: str) -> str:
    """The pip command that installs the extra holding ``module`` (its top-level import name)."""
    extra = EXTRAS[module.split(".")[0]][0]
    return f"pip install 'chunkscope[{extra}]'"


def require(module: str, purpose: str, error: Callable[[str], Exception] = MissingExtra) -> ModuleType:
    """Import ``module`` (a name in :data:`EXTRAS`, or a sub-module of one); when its package is missing
    raise ``error(message)`` (an exception class or a factory) with one line: ``"{purpose} needs {package}: pip install 'chunkscope[extra]'"``.

    An ImportError raised *inside* an installed package (a broken install) is not hidden: it propagates."""
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        raise error(f"{purpose} needs {EXTRAS[top][1]}: {install_hint(top)}") from None
