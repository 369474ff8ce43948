"""The one error every loader raises for bad input (its message is one specific line)."""

from __future__ import annotations


class IngestError(ValueError):
    """The input cannot be turned into a Document. ``str(err)`` is one user-facing line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
