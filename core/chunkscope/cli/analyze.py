"""``chunkscope analyze``: every chunker, five metrics, leaderboard and adaptive winner."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from chunkscope.analysis import Settings
from chunkscope.cli.settings import SettingsError, add_analysis_options, settings_from_args
from chunkscope.report import METRICS, Report, record_embed_text


class StderrProgress:
    """Stage and per-chunker progress on stderr (a single rewritten line on a terminal)."""

    def __init__(self, stream=None, quiet: bool = False):
        stream = sys.stderr if stream is None else stream  # the stderr of now, not of when this module was imported
        self.stream, self.quiet = stream, quiet
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.perf_counter()
        self._last = ""
        self._printed = self.t0  # not a terminal: when the last line was written

    def __call__(self, stage: str, fraction: float, message: str) -> None:
        """Show one progress update (stage, fraction done, message)."""
        if self.quiet:
            return
        now = time.perf_counter()
        line = f"[{now - self.t0:6.1f}s] {stage:<12} {fraction * 100:5.1f}%  {message}"
        if self.tty:
            self.stream.write("\r" + line[:110].ljust(110))
            if stage == "selection":
                self.stream.write("\n")
        elif fraction in (0.0, 1.0) or stage == "structure" or now - self._printed >= self.QUIET_SECONDS:
            self.stream.write(line + "\n")  # a log gets each stage's start and end, and a line in a long stage
            self._printed = now
        self.stream.flush()

    QUIET_SECONDS = 10.0


def _size(path: str) -> str:
    try:
        n = Path(path).expanduser().stat().st_size
    except OSError:
        return "size unknown"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,} bytes"


def _fmt(v: float | None, digits: int = 3) -> str:
    return "  -  " if v is None else f"{v:.{digits}f}"


def _ci(lo_hi: list[float] | None) -> str:
    return "  -  " if not lo_hi else f"{lo_hi[0]:.3f}-{lo_hi[1]:.3f}"


def leaderboard_lines(report: Report) -> list[str]:
    """The leaderboard as text lines: one row per chunking, the winner and candidates marked."""
    head = f"{'chunking':<20} {'st':<4} {'chunks':>6} {'mean':>6} {'min':>5} {'max':>5}  " + "  ".join(
        f"{m:>5}" for m in METRICS) + f"  {'score':>6} {'95% interval':>13} {'sec':>6}"
    lines = [head, "-" * len(head)]
    order = report.leaderboard
    for c in order:
        st = c.token_stats()
        mark = "*" if c.id == report.winner else ("c" if c.candidate else " ")
        if c.ok:
            lines.append(
                f"{mark} {c.id:<18} {'ok':<4} {st['chunks']:>6} {st['mean']:>6.0f} {st['min']:>5} {st['max']:>5}  "
                + "  ".join(f"{_fmt(c.metrics[m]):>5}" for m in METRICS)
                + f"  {_fmt(c.score):>6} {_ci(c.score_interval):>13} {c.seconds:>6.2f}"
            )
        else:
            lines.append(f"{mark} {c.id:<18} {c.status[:4]:<4} {c.reason}")
    lines.append("(* winner, c candidate)")
    lines += [f"{a}: the same chunks as {b}" for a, b in report.same_chunks().items()]
    return lines


def winner_line(report: Report) -> str:
    """"winner: X (clear winner)", "... (clear winner by a narrow margin)" (as the app's card says)
    or "... (tie, broken by RULE)"."""
    v = report.verdict
    narrow = " by a narrow margin" if "narrow-win" in (report.flags or []) else ""
    return f"winner: {report.winner or 'none'}" + ("" if not v else f" (clear winner{narrow})" if v["kind"] == "clear"
                                                   else f" (tie, broken by {v['tie_break']['rule']})")


def partial_printer(stream=None):
    """``on_partial`` for ``--progress``: the provisional leaderboard and winner after each stage."""
    from chunkscope.analysis.wording import provisional_note

    def show(report: Report, stage: str) -> None:
        out = stream or sys.stderr
        out.write(f"\n== after {stage}: {provisional_note(report)}\n")
        out.write("\n".join(leaderboard_lines(report)) + "\n")
        out.write(f"provisional winner: {report.winner or 'none'}\n\n")
        out.flush()

    return show


def add_analyze(sub) -> None:
    """Declare ``chunkscope analyze``."""
    p = sub.add_parser(
        "analyze",
        help="run every chunker, score with RC/ICC/DCC/BI/SC, pick the adaptive winner",
        description="Run the chunkers on one document, score each chunking with the five intrinsic metrics, "
        "print a leaderboard and the adaptive winner with the reason it won.",
    )
    from chunkscope.cli.common import add_embed_text_argument, add_input_arguments

    add_input_arguments(p)
    p.add_argument("--json", metavar="OUT", help="write the report (schema chunkscope.report/1) to OUT "
                   "('-': stdout, which then holds only the JSON; the table goes to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--progress", action="store_true",
                   help="after each stage, print the provisional leaderboard on stderr (SC/BI first, then RC, "
                        "then ICC/DCC); stdout and --json are unchanged")
    p.add_argument("--chunks-table", metavar="OUT", help="write every chunk of every chunking that ran (id, "
                   "chunking, chunk index, span, tokens, pages, SC/BI/RC flags, cohesion) to OUT.csv or OUT.parquet")
    add_embed_text_argument(p)
    add_analysis_options(p)
    from chunkscope.cli.questions import add_question_options

    add_question_options(p, analyze=True)
    p.set_defaults(func=cmd_analyze)


def _retrieval_request(args: argparse.Namespace, doc: Any, settings: Settings) -> Any:
    """The retrieval check asked for by --questions/--generate/--self-test (None: not asked)."""
    from chunkscope.analysis.retrieval import RetrievalRequest
    from chunkscope.cli.questions import config_from_args, questions_from_args

    if all(getattr(args, x, None) is None for x in ("questions", "generate", "self_test")):
        return None
    from chunkscope.analysis import Resources

    qs = questions_from_args(args, doc, args.file, Resources(settings.embedder, settings.embedding_mode))
    return RetrievalRequest(qs, config_from_args(args))


def read_document(args: argparse.Namespace, settings: Settings, progress: StderrProgress) -> Any:
    """The document, read with progress (a long PDF takes minutes).

    An unusable explicit mentions file is a usage error, not a silently missing RC.
    """
    from chunkscope.analysis.coreference import check_mentions
    from chunkscope.cli.common import read_input
    from chunkscope.coref import CorefError

    progress("reading", 0.0, f"{Path(args.file).name} ({_size(args.file)})")
    doc = read_input(args)
    progress("reading", 1.0, (f"{len(doc.pages):,} pages, " if doc.pages else "") + f"{len(doc.text):,} characters")
    try:
        check_mentions(doc, settings)
    except CorefError as exc:
        raise SettingsError(f"--mentions: {exc}") from None
    return doc


def retrieval_lines(retrieval: dict[str, Any]) -> list[str]:
    """The retrieval check's part of the summary: its source, table and notes."""
    from chunkscope.cli.questions import table_lines
    from chunkscope.retrieval.run import note_lines

    qs = retrieval["question_source"]
    return [f"retrieval check ({retrieval['retriever']}, {qs['used']} questions from {qs['source']}"
            + (", a proxy" if qs["source"] == "self-test" else "") + "):",
            "\n".join(table_lines(retrieval)), *(f"note: {n}" for n in note_lines(retrieval))]


def summary_lines(report: Report) -> list[str]:
    """What ``analyze`` prints first: the document, coreference, the leaderboard, the winner and why."""
    d, rc = report.document, report.coref
    return [
        f"{d['name']}: {d['chars']} chars, {d['tokens']} tokens, {len(d['pages'])} pages, "
        f"{len(d['blocks'])} blocks, language {d['language']}",
        f"coreference: {rc.get('backend')} — " + (f"{rc['pairs']} pairs" if rc.get("pairs") else
                                                (rc.get("reason") or rc.get("error") or "no pairs")),
        "",
        "\n".join(leaderboard_lines(report)),
        "",
        winner_line(report),
        report.explanation,
    ]


def footer_lines(report: Report) -> list[str]:
    """What ``analyze`` prints last: the warnings and the time of each stage."""
    t = report.timings
    return [*(f"warning: {w}" for w in report.warnings),
            "time: " + ", ".join(f"{k} {t[k]:.2f}s" for k in ("parse", "chunk", "coref", "embed", "metrics", "other",
                                                              "total") if k in t)]


def cmd_analyze(args: argparse.Namespace) -> int:
    """Analyze one document: the summary on stdout (stderr with ``--json -``), the report as JSON when asked."""
    from chunkscope.analysis import analyze
    from chunkscope.chunk_table import check_table_path
    from chunkscope.cli.common import CLIError, check_json_target, check_language, human_stream, write_json

    check_language(args.language)  # cheap: before settings_from_args loads an embedding model asked for
    check_json_target(args.json)
    if args.chunks_table and (problem := check_table_path(args.chunks_table)):
        raise CLIError(f"--chunks-table: {problem}")
    settings = settings_from_args(args)
    progress = StderrProgress(quiet=args.quiet)
    t0 = time.perf_counter()
    doc = read_document(args, settings, progress)
    parse_s = time.perf_counter() - t0
    on_partial = partial_printer() if getattr(args, "progress", False) else None
    request = _retrieval_request(args, doc, settings)
    report = analyze(doc, settings, progress=progress, on_partial=on_partial, retrieval=request)
    if args.coref and report.coref.get("error"):  # the backend asked for could not run after all (e.g. its model)
        raise SettingsError(f"--coref {args.coref}: {report.coref['error']}")
    report.timings["parse"] = parse_s
    report.timings["total"] += parse_s
    if args.embed_text:  # the report of a plain run stays as it was
        record_embed_text(report, args.embed_text)
    out = human_stream(args.json)  # with --json -, stdout is the JSON only
    print("\n".join(summary_lines(report)), file=out)
    if report.retrieval:
        print("\n".join(retrieval_lines(report.retrieval)), file=out)
        for p in report.retrieval["question_source"]["problems"]:
            print(f"problem: {p}", file=sys.stderr)
        print(file=out)
    print("\n".join(footer_lines(report)), file=out)
    if args.chunks_table:
        from chunkscope.chunk_table import write_chunk_table

        print(f"wrote {args.chunks_table} ({write_chunk_table(report, doc, args.chunks_table)} chunks)", file=out)
    if args.json:
        write_json(report.to_dict(), args.json)
        if args.json != "-":
            print(f"wrote {args.json}", file=out)
    return 0
