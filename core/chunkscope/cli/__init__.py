"""The ``chunkscope`` command.

One module per subcommand (``chunkscope.cli.<name>``): ``add_<name>(subparsers)`` declares
its arguments and sets ``func=cmd_<name>``; ``cmd_<name>(args) -> int`` runs it; append
``add_<name>`` to ``SUBCOMMANDS`` below. Shared helpers live in ``chunkscope.cli.common``. Errors a user can fix are raised as
``IngestError`` / ``ValueError`` / ``CLIError`` / ``OSError``: ``main`` prints them as one
line on stderr and exits with code 2 (never a traceback; ``CHUNKSCOPE_DEBUG=1`` shows one).
Use ``read_input(args)`` (FILE, --max-bytes, --language of ``add_input_arguments``) to read a document the same way everywhere.
Ctrl-C: ``main`` prints ``chunkscope <command>: interrupted`` and exits with code 130 (see ``_interrupted``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Any, Callable, NoReturn

from chunkscope.cli.analyze import add_analyze
from chunkscope.cli.app import add_app
from chunkscope.cli.chunk import add_chunk, add_chunkers
from chunkscope.cli.common import CLIError, one_line
from chunkscope.cli.corpus import add_corpus, add_corpus_report
from chunkscope.cli.ingest import add_ingest
from chunkscope.cli.retrieval import add_retrieval
from chunkscope.cli.sweep import add_sweep
from chunkscope.interrupts import INTERRUPTED, catch_interrupts
from chunkscope.version import __version__

SUBCOMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_ingest, add_analyze, add_chunkers, add_chunk, add_sweep, add_corpus, add_corpus_report, add_app,
    add_retrieval,
]


class _Parser(argparse.ArgumentParser):
    """No abbreviated options, in the command and every subcommand: "analyze --chunker page" (the chunk
    command's option) must not run as --chunkers."""

    commands: dict[str, argparse.ArgumentParser]  # the top level's: each command's parser

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A usage error is one line and exit code 2, like every other bad input (argparse printed the whole
        usage first: about 20 lines for ``analyze``)."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> _Parser:
    """The ``chunkscope`` parser with every subcommand of ``SUBCOMMANDS``."""
    parser = _Parser(
        prog="chunkscope",
        description="Inspect RAG chunk quality: load a document, run chunkers, score them.",
    )
    parser.add_argument("--version", action="version", version=f"chunkscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for add in SUBCOMMANDS:
        add(sub)
    parser.commands = dict(sub.choices)  # each command's parser, to report its own usage errors
    return parser


def _interrupted(command: str, exit_now: bool) -> int:
    """Ctrl-C: one line, code 130. As the program (``exit_now``), leave with ``os._exit`` once the line and
    stdout are flushed: the model libraries' native threads (BLAS, torch, ONNX Runtime) may still be
    running, and a normal interpreter shutdown under them aborts (``terminate called without an active
    exception``, ``libblis: Aborting``, a segfault). Nothing is left half-written: the interrupt unwound
    through every atomic write (``chunkscope.corpus.store``) before it got here."""
    if exit_now:
        with contextlib.suppress(ValueError):  # a second Ctrl-C does not cut this short (main thread only)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(f"chunkscope {command}: interrupted", file=sys.stderr)
    if exit_now:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(130)
    return 130


def main(argv: list[str] | None = None) -> int:
    """The command (``argv`` None: ``sys.argv``, run as the program: an interrupt ends the process, see
    ``_interrupted``); with ``argv`` given (tests, scripts) it returns the exit code instead."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the command they were given to ("chunkscope analyze: error: ..."), not the top level
        given = list(sys.argv[1:] if argv is None else argv)
        command = getattr(args, "command", None) or ""
        before = given[:given.index(command)] if command in given else given
        owner = parser if any(x in before for x in extra) else parser.commands.get(command, parser)
        owner.error(f"unrecognized arguments: {' '.join(extra)}")
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    debug = os.environ.get("CHUNKSCOPE_DEBUG", "") not in ("", "0")
    exit_now = argv is None
    restore = catch_interrupts()  # a Ctrl-C a library thread swallows still counts (INTERRUPTED)
    try:
        rc = int(func(args) or 0)
        # an interrupt swallowed on the way (a thread caught it) leaves a result that may be incomplete
        return _interrupted(args.command, exit_now) if INTERRUPTED.is_set() and rc != 130 else rc
    except KeyboardInterrupt:
        return _interrupted(args.command, exit_now)
    except BrokenPipeError:
        return 0
    except (CLIError, ValueError, OSError) as exc:  # IngestError is a ValueError
        if INTERRUPTED.is_set():  # what a swallowed interrupt turned into
            return _interrupted(args.command, exit_now)
        if debug:
            raise
        print(f"chunkscope {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, with a hint
        if INTERRUPTED.is_set():
            return _interrupted(args.command, exit_now)
        if debug:
            raise
        print(
            f"chunkscope {args.command}: internal error: {type(exc).__name__}: {one_line(exc)} "
            "(set CHUNKSCOPE_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1
    finally:
        restore()


if __name__ == "__main__":
    sys.exit(main())
