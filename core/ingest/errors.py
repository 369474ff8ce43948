"""The one error every loader raises for bad input (its message is one specific line)."""

from __future__ import annotations

import json


class IngestError(ValueError):
    """The input cannot be turned into a Document. ``str(err)`` is one user-facing line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def json_error(exc: json.JSONDecodeError) -> str:
    """What is wrong in a JSON text and where, for a one-line message: ``Expecting value: line 5 column 3``
    (``exc.msg`` may end with "at", as in "Unterminated string starting at")."""
    return f"{exc.msg}: line {exc.lineno} column {exc.colno}"
