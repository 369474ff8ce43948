"""The ``chunkscope`` command.

One module per subcommand (``chunkscope.cli.<name>``): ``add_<name>(subparsers)`` declares
its arguments and sets ``func=cmd_<name>``; ``cmd_<name>(args) -> int`` runs it; append
``add_<name>`` to ``SUBCOMMANDS`` below. Shared helpers live in ``chunkscope.cli.common``. Errors a user can fix are raised as
``IngestError`` / ``ValueError`` / ``CLIError`` / ``OSError``: ``main`` prints them as one
line on stderr and exits with code 2 (never a traceback; ``CHUNKSCOPE_DEBUG=1`` shows one).
Use ``load_input(args.file, args.max_bytes)`` to read a document the same way everywhere.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

from chunkscope.cli.analyze import add_analyze
from chunkscope.cli.app import add_app
from chunkscope.cli.chunk import add_chunk, add_chunkers
from chunkscope.cli.common import CLIError, one_line
from chunkscope.cli.corpus import add_corpus, add_corpus_report
from chunkscope.cli.ingest import add_ingest
from chunkscope.cli.retrieval import add_retrieval
from chunkscope.cli.sweep import add_sweep
from chunkscope.version import __version__

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_ingest, add_analyze, add_chunkers, add_chunk, add_sweep, add_corpus, add_corpus_report, add_app,
    add_retrieval,
]


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
