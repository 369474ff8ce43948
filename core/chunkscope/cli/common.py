"""Helpers every ``chunkscope`` subcommand shares: reading a document, writing JSON, usage errors."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TextIO

from chunkscope.document import Document
from chunkscope.ingest import FORMATS_IN_BRIEF


class CLIError(Exception):
    """A usage problem the user can fix (one-line message)."""


def one_line(exc: BaseException) -> str:
    """An exception's message on one line."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """FILE, --max-bytes and --language, the same for every subcommand that reads a document."""
    p.add_argument("file", metavar="FILE", help=f"{FORMATS_IN_BRIEF} (reference / document); by its extension")
    p.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse files larger than N bytes (default: $CHUNKSCOPE_MAX_BYTES or 50 MB)",
    )
    p.add_argument("--language", metavar="CODE", default=None,
                   help="override the detected language: an ISO 639-1 code (two letters, e.g. en, de, fr); "
                   "RC is computed for English only, as when the language is set by hand in the app")


def add_embed_text_argument(p: argparse.ArgumentParser) -> None:
    """--embed-text: which text of each exported chunk is meant to be embedded (recorded; the metrics score spans)."""
    p.add_argument("--embed-text", choices=("raw", "clean", "context"), default=None,
                   help="the text of each exported chunk to embed: raw (the span's text as is), clean (layout "
                   "comments, page marks and empty markup removed), context (the heading path, then the clean "
                   "text); default raw; recorded in the export and, when given, the report's provenance; the metrics score "
                   "the spans either way")


def read_input(args: argparse.Namespace, running: str = "mark") -> Document:
    """The document named by ``add_input_arguments``' options (FILE, --max-bytes, --language)."""
    return load_input(args.file, args.max_bytes, running=running, language=check_language(args.language))


def load_input(path: str, max_bytes: int | None = None, running: str = "mark",
               language: str | None = None) -> Document:
    """Read a document as every subcommand does (engine logs on one line)."""
    from chunkscope.ingest import load_document  # lazily: `chunkscope --help` stays instant

    one_line_engine_logs()  # every subcommand that reads a document runs the engine next
    return load_document(path, max_bytes=max_bytes, running=running, language=language)


# ---------------------------------------------------------------- engine log records
def _debug() -> bool:
    return os.environ.get("CHUNKSCOPE_DEBUG", "") not in ("", "0")


class _OneLineHandler(logging.Handler):
    """The engine's warnings ("chunker X failed", with the exception) as one line on stderr: no
    traceback (Python's last-resort handler prints one) unless CHUNKSCOPE_DEBUG=1."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = " ".join(record.getMessage().split())
            exc = record.exc_info[1] if record.exc_info else None
            if exc is not None:
                text += f": {type(exc).__name__}: {one_line(exc)}"
            # not fatal for the command (that is "COMMAND: error:"): a chunker that failed is a row
            sys.stderr.write(f"chunkscope: warning: {text}\n")
            if exc is not None and _debug():
                import traceback

                traceback.print_exception(*record.exc_info, file=sys.stderr)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - logging must never take the command down
            self.handleError(record)


def one_line_engine_logs() -> None:
    """Route the ``chunkscope.*`` loggers' warnings and errors through ``_OneLineHandler`` (once)."""
    log = logging.getLogger("chunkscope")
    if not any(isinstance(h, _OneLineHandler) for h in log.handlers):
        log.addHandler(_OneLineHandler(logging.WARNING))


# ---------------------------------------------------------------- output files
def check_output_path(out: str | None, flag: str = "--json") -> None:
    """Refuse, before any work (not after minutes of it), an output path that cannot be written:
    a directory, a missing folder, a file or folder without write permission. ``-`` (stdout) and
    None pass. Leaves nothing behind: a file created to test the folder is removed again."""
    if not out or out == "-":
        return
    path = Path(out).expanduser()
    if path.is_dir():
        raise CLIError(f"{flag}: {out} is a directory: give a file name")
    if not path.parent.is_dir():
        raise CLIError(f"{flag}: directory {path.parent} does not exist")
    existed = path.exists()
    if existed and not path.is_file():
        return  # /dev/stdout, a named pipe: opening it here could block; the write says what is wrong
    try:
        with open(path, "ab"):  # appends nothing: an existing file is unchanged
            pass
    except OSError as exc:
        raise CLIError(f"{flag}: cannot write {out}: {exc.strerror or one_line(exc)}") from None
    if not existed:
        path.unlink(missing_ok=True)


def check_json_target(out: str | None) -> None:
    """``check_output_path`` for ``--json OUT``."""
    check_output_path(out, "--json")


def write_text_file(text: str, out: str, flag: str = "--json") -> None:
    """Write ``text`` to ``out``; an OSError (disk full, permissions changed meanwhile) is one line."""
    path = Path(out).expanduser()
    if not path.parent.is_dir():
        raise CLIError(f"{flag}: directory {path.parent} does not exist")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"{flag}: cannot write {out}: {exc.strerror or one_line(exc)}") from None


def write_json(obj, out: str, flag: str = "--json") -> None:
    """Write JSON to a path, or to stdout when ``out`` is ``-``."""
    from chunkscope.report import dumps

    text = dumps(obj)
    if out == "-":
        sys.stdout.write(text + "\n")
        return
    write_text_file(text + "\n", out, flag)


def human_stream(json_out: str | None) -> TextIO:
    """Where the human-readable output goes: stderr when ``--json -`` puts the JSON on stdout (so
    stdout is only the JSON and parses), else stdout."""
    return sys.stderr if json_out == "-" else sys.stdout


# ---------------------------------------------------------------- --language
# ISO 639-1: every two-letter language code (py3langid's list mixes in three-letter codes)
ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz
ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik
io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml
mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd
se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi
vo wa wo xh yi yo za zh zu""".split())


def check_language(value: str | None, flag: str = "--language") -> str | None:
    """The ISO 639-1 code of ``value`` (lower case; None/empty: keep the detected language).
    CLIError for anything else ("english", "xx", "en-US"): it would silently switch RC off."""
    code = (value or "").strip().lower()
    if not code:
        return None
    if code in ISO_639_1:
        return code
    from chunkscope.text.language import LANGUAGE_NAMES

    guess = next((c for c, name in LANGUAGE_NAMES.items() if name.lower() == code), None)
    if guess is None and len(code) > 2 and code[2] in "-_" and code[:2] in ISO_639_1:
        guess = code[:2]  # en-US, pt_BR: the language part
    hint = f"; did you mean {guess}?" if guess else ""
    raise CLIError(f"{flag}: {value!r} is not an ISO 639-1 language code (two letters, e.g. en, de, fr){hint}")


# ---------------------------------------------------------------- --embedder
def check_embedder(name: str | None, backend: str | None = "auto", load: bool = True) -> None:
    """Refuse, before any work, an embedding model the user chose (``--embedder``,
    ``--embedding-backend`` or a settings file) that cannot be loaded: one line, in seconds, instead
    of an analysis without ICC and DCC. ``load``: load it (the model stays cached in this process
    for the analysis); False: only check that it can be found (a parent of worker processes)."""
    backend = backend or "auto"
    if name is None and backend == "auto":
        return  # the default (bundled) model: the analysis says when it is missing
    from chunkscope.embeddings.embedder import Embedder, EmbedderUnavailable, locate

    what = f"--embedder {name}" if name is not None else f"--embedding-backend {backend}"
    try:
        locate(name, backend)
        if load:
            Embedder.load(name, backend=backend, cache_dir=None)
    except EmbedderUnavailable as exc:
        raise CLIError(f"{what}: {one_line(exc)}") from None
