"""The ``chunkscope`` command.

Adding a subcommand is a small, local edit: write ``add_<name>(subparsers)`` that
declares its arguments and sets ``func=cmd_<name>``, write ``cmd_<name>(args) -> int``,
and append ``add_<name>`` to ``SUBCOMMANDS``. Errors a user can fix are raised as
``IngestError`` / ``ValueError`` / ``CLIError`` / ``OSError``: ``main`` prints them as one
line on stderr and exits with code 2 (never a traceback; ``CHUNKSCOPE_DEBUG=1`` shows one).
Use ``load_input(args.file, args.max_bytes)`` to read a document the same way everywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable

from core import __version__
from core.document import Document


class CLIError(Exception):
    """A usage problem the user can fix (one-line message)."""


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


# --- shared helpers for subcommands ----------------------------------------------------------
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


def load_input(path: str, max_bytes: int | None = None) -> Document:
    from core.ingest import load_document

    return load_document(path, max_bytes=max_bytes)


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


# --- ingest ----------------------------------------------------------------------------------
def add_ingest(sub) -> None:
    p = sub.add_parser(
        "ingest",
        help="load a document and show what was found",
        description="Load a document and print its name, format, language, characters, o200k tokens, "
        "pages, blocks by kind and headings.",
    )
    add_input_arguments(p)
    p.add_argument("--json", metavar="OUT", help="also write the Document as JSON to OUT ('-' = stdout only)")
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    from core.ingest.summary import format_summary

    doc = load_input(args.file, args.max_bytes)
    if args.json == "-":
        write_json(doc.to_dict(), "-")
        return 0
    print(format_summary(doc))
    if "parse_seconds" in doc.meta:
        print(f"parsed in   {doc.meta['parse_seconds']:.2f} s")
    if args.json:
        write_json(doc.to_dict(), args.json)
        print(f"wrote       {args.json}")
    return 0


# Other engineers: append add_chunk, add_chunkers, add_analyze here.
from core.cli_analyze import add_analyze  # noqa: E402

from core.cli_chunk import add_chunk, add_chunkers  # noqa: E402

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_ingest, add_analyze]
SUBCOMMANDS += [add_chunkers, add_chunk]
from core.cli_sweep import add_sweep  # noqa: E402

SUBCOMMANDS += [add_sweep]
from core.cli_corpus import add_corpus, add_corpus_report  # noqa: E402
SUBCOMMANDS += [add_corpus, add_corpus_report]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chunkscope",
        description="Inspect RAG chunk quality: load a document, run chunkers, score them.",
    )
    parser.add_argument("--version", action="version", version=f"chunkscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    debug = os.environ.get("CHUNKSCOPE_DEBUG", "") not in ("", "0")
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print(f"chunkscope {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (CLIError, ValueError, OSError) as exc:  # IngestError is a ValueError
        if debug:
            raise
        print(f"chunkscope {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, with a hint
        if debug:
            raise
        print(
            f"chunkscope {args.command}: internal error: {type(exc).__name__}: {one_line(exc)} "
            "(set CHUNKSCOPE_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
