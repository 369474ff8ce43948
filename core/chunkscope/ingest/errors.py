"""The one error every loader raises for bad input (its message is one specific line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager


class IngestError(ValueError):
    """The input cannot be turned into a Document. ``str(err)`` is one user-facing line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


@contextmanager
def read_as(filename: str, what: str, too_deep: str) -> Iterator[None]:
    """Run a parser so that whatever it raises is one line: its own ``IngestError`` as is, a ``RecursionError`` as
    ``"{filename}: {too_deep}"``, anything else as ``x.docx: could not be read as a Word document (KeyError: ...)``."""
    try:
        yield
    except IngestError:
        raise
    except RecursionError:
        raise IngestError(f"{filename}: {too_deep}") from None
    except Exception as exc:  # a parser that gives up on a broken file: one line, never a traceback
        raise IngestError(f"{filename}: could not be read as {what} ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:160]})") from None


def json_error(exc: json.JSONDecodeError) -> str:
    """What is wrong in a JSON text and where, for a one-line message: ``Expecting value: line 5 column 3``
    (``exc.msg`` may end with "at", as in "Unterminated string starting at")."""
    return f"{exc.msg}: line {exc.lineno} column {exc.colno}"


def human_bytes(n: int) -> str:
    """A size as a message says it: ``812 bytes``, ``3.4 KB``, ``52.0 MB`` (binary units)."""
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n} bytes"


def first_line(exc: BaseException) -> str:
    """An exception's message as a warning quotes it: its first line, at most 120 characters (else its type)."""
    s = str(exc).strip().splitlines()
    return s[0][:120] if s else type(exc).__name__
