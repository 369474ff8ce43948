"""Helpers every ``chunkscope`` subcommand shares: reading a document, writing JSON, usage errors."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunkscope.document import Document


class CLIError(Exception):
    """A usage problem the user can fix (one-line message)."""


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """FILE and --max-bytes, the same for every subcommand that reads a document."""
    p.add_argument("file", metavar="FILE", help="PDF, Markdown (.md), text (.txt) or JSON (reference / document)")
    p.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse files larger than N bytes (default: $CHUNKSCOPE_MAX_BYTES or 50 MB)",
    )


def load_input(path: str, max_bytes: int | None = None, running: str = "mark",
               language: str | None = None) -> Document:
    from chunkscope.ingest import load_document  # lazily: `chunkscope --help` stays instant

    return load_document(path, max_bytes=max_bytes, running=running, language=language)


def check_json_target(out: str | None) -> None:
    """Refuse an output path whose directory is missing before any work (not after minutes of it)."""
    if out and out != "-" and not Path(out).parent.is_dir():
        raise CLIError(f"--json: directory {Path(out).parent} does not exist")


def write_json(obj, out: str) -> None:
    """Write JSON to a path, or to stdout when ``out`` is ``-``."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    if out == "-":
        sys.stdout.write(text + "\n")
        return
    path = Path(out)
    if path.parent and not path.parent.exists():
        raise CLIError(f"--json: directory {path.parent} does not exist")
    path.write_text(text + "\n", encoding="utf-8")


