"""``chunkscope corpus`` and ``chunkscope corpus-report``: adaptive chunking over many documents."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from chunkscope.cli.settings import add_analysis_options, settings_from_args
from chunkscope.ingest import FORMATS_IN_BRIEF


class CorpusProgress:
    """A progress bar (rewritten line on a terminal) plus one status line per finished document."""

    def __init__(self, stream=None, quiet: bool = False):
        self.stream, self.quiet = stream if stream is not None else sys.stderr, quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self._bar_shown = False
        self.stats: dict[str, Any] = {}
        # documents a resume finds done are announced before the run's "start": their lines wait for its header
        self._before_start: list[tuple[int, int, dict[str, Any]]] | None = []

    def _bar(self, done: int, total: int, current: str = "") -> str:
        from chunkscope.corpus.run import format_stats

        width = 24
        filled = int(width * done / total) if total else width
        stats = f"· {format_stats(self.stats)} " if self.stats else ""
        return (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                f"{time.perf_counter() - self.t0:7.1f}s {stats}{current}")[:150]

    def clear(self) -> None:
        """Erase the progress bar, so that what is written next has a line of its own."""
        if self._bar_shown:
            self.stream.write("\r" + " " * 150 + "\r")
            self.stream.flush()
            self._bar_shown = False

    def __call__(self, done: int, total: int, entry: dict[str, Any]) -> None:
        """Show one document's progress entry (start, running, retry, ok, skipped, failed)."""
        if self.quiet:
            return
        status = entry.get("status", "")
        if self._before_start is not None and status not in ("start", "running", "retry"):
            self._before_start.append((done, total, entry))
            return
        if status == "start" and self._before_start is not None:
            early, self._before_start = self._before_start, None
            if not self.tty:
                self.stream.write(f"corpus: {total} documents, {entry.get('todo', 0)} to analyze "
                                  f"(engine {entry.get('engine', 'local')})\n")
            for args in early:
                self(*args)
        self.stats = entry.get("stats") or self.stats
        if status == "retry":
            self.clear()
            self.stream.write(f"retry   {entry.get('rel') or entry.get('name', '')}  ({entry.get('reason', '')}; "
                              "sent to the next free worker)\n")
            self.stream.flush()
            return
        if status in ("start", "running"):
            if self.tty:
                self.stream.write("\r" + self._bar(done, total, entry.get("name", "")).ljust(150))
                self._bar_shown = True
            self.stream.flush()
            return
        self.clear()
        name = entry.get("rel") or entry.get("name", "")
        if status == "ok":
            line = (f"ok      {name}  ({entry.get('tokens', 0)} tokens, {entry.get('seconds', 0):.1f}s, "
                    f"winner {entry.get('winner') or 'none'})")
        elif status == "skipped":
            line = f"skipped {name}  ({entry.get('reason', '')})"
        else:
            line = f"FAILED  {name}  ({entry.get('reason', '')})"
        self.stream.write(line + "\n")
        if self.tty and done < total:
            self.stream.write(self._bar(done, total))
            self._bar_shown = True
        elif not self.tty:
            self.stream.write(self._bar(done, total) + "\n")
        self.stream.flush()


def add_corpus(sub) -> None:
    """Declare ``chunkscope corpus``."""
    p = sub.add_parser(
        "corpus",
        help="analyze every document in a folder (or glob): per-document reports, tidy tables, winners",
        description=f"Run the analysis on every supported file ({FORMATS_IN_BRIEF}) found "
        "recursively in DIR (or matching GLOB), picking up precomputed mentions (sibling mentions/ folder or "
        "STEM.mentions.parquet|json). Resumable: documents already analyzed with the same settings are "
        "skipped. A failing document is reported and skipped.",
    )
    p.add_argument("inputs", nargs="+", metavar="DIR_OR_GLOB", help="folder(s), glob pattern(s) or file(s)")
    p.add_argument("--out", required=True, metavar="RESULTS",
                   help="results directory (created if needed) or an fsspec URI (file://..., s3://...); on a cluster "
                        "a place every node can reach")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="workers (processes locally, actors on Ray), each analyzing one document at a time")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this machine (default); ray: a Ray instance or cluster (pip install 'chunkscope[ray]')")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="with --engine ray: the cluster to join (auto, HOST:PORT or ray://HOST:PORT); "
                        "default: start a local Ray instance for the run, even if one is running")
    p.add_argument("--gpus-per-worker", type=float, default=0.0, metavar="F",
                   help="with --engine ray: GPUs per worker (e.g. 0.5: two workers share one); the embedder runs there")
    p.add_argument("--threads-per-worker", type=int, default=None, metavar="T",
                   help="math threads per worker, pinned the same way for both engines (default: cores / jobs)")
    p.add_argument("--retry-failed", action="store_true",
                   help="analyze again the documents that failed in an earlier run (default: a rerun skips them)")
    p.add_argument("--max-bytes", type=int, default=None, metavar="N", help="refuse files larger than N bytes")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    from chunkscope.cli.common import add_embed_text_argument

    add_embed_text_argument(p)
    add_analysis_options(p, one_document=False)
    p.set_defaults(func=cmd_corpus)


def cmd_corpus(args: argparse.Namespace) -> int:
    """Analyze every document of a corpus and print the counts and where the results are."""
    from functools import partial

    from chunkscope.corpus.run import RunOptions, run_corpus
    from chunkscope.sharing import check_document, policy

    opts = RunOptions(engine=args.engine, jobs=args.jobs, threads=args.threads_per_worker, address=args.address,
                      gpus_per_worker=args.gpus_per_worker, retry_failed=args.retry_failed,
                      embed_text=args.embed_text or "raw")
    opts.validate()
    if args.mentions:
        raise ValueError("--mentions names one document's file; in corpus mode put mentions beside the documents "
                         "(mentions/STEM.parquet or STEM.mentions.json)")
    settings = settings_from_args(args)
    pol = policy()
    if pol.shared:  # a shared server's page and token limits, as for one upload
        opts.document_check = partial(check_document, pol)
    progress = CorpusProgress(quiet=args.quiet)
    try:
        summary = run_corpus(args.inputs, args.out, settings, progress=progress, max_bytes=args.max_bytes,
                             options=opts)
    except KeyboardInterrupt:  # "chunkscope corpus: interrupted" (chunkscope.cli.main) on a line of its own
        progress.clear()
        raise
    c, t = summary["counts"], summary["timings"]
    print(f"{c['documents']} documents: {c['ok']} analyzed, {c['skipped']} skipped, {c['failed']} failed "
          f"in {t['total']:.1f}s" + (f" ({t['documents_per_minute']:.2f} documents/min, "
                                     f"{t['tokens_per_second']:.0f} tokens/s)" if t.get("documents_per_minute") else ""))
    for e in summary["documents"]:
        if e.get("status") == "failed":
            print(f"failed: {e.get('rel')}: {e.get('reason')}")
    from chunkscope.corpus.tables import not_run_lines

    for line in not_run_lines(summary["documents"]):  # said here, not only by corpus-report
        print(line)
    print(f"wrote {args.out.rstrip('/')}/summary.json, metrics.parquet, metrics.csv, winners.jsonl, reports/")
    print(f"next: chunkscope corpus-report {args.out}")
    return 0 if c["with_report"] > 0 or c["documents"] == 0 else 1


def add_corpus_report(sub) -> None:
    """Declare ``chunkscope corpus-report``."""
    p = sub.add_parser(
        "corpus-report",
        help="print the paper's Tables 2, 3 and 4 for a corpus results directory; write an HTML report",
        description="Read a results directory written by `chunkscope corpus` and print chunk-size/runtime "
        "statistics (Table 2), mean ± std of each metric x100 with the Adaptive row (Table 3), how often each "
        "chunker is selected (Table 4), metric correlations (Spearman), a per-domain breakdown and the documents "
        "where the adaptive choice differs most from the global best chunker.",
    )
    p.add_argument("results", metavar="RESULTS_DIR")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report (default RESULTS_DIR/report.html)")
    p.add_argument("--no-html", action="store_true", help="do not write the HTML report")
    p.set_defaults(func=cmd_corpus_report)


def cmd_corpus_report(args: argparse.Namespace) -> int:
    """Print the corpus tables and write the HTML report."""
    from pathlib import Path

    from chunkscope.cli.common import CLIError, check_output_path, write_text_file
    from chunkscope.corpus.report import CorpusResults, text_report
    from chunkscope.present.html_report import corpus_html_report as html_report

    if args.no_html and args.html:
        raise CLIError("--html and --no-html: choose one")
    if args.html:
        check_output_path(args.html, "--html")  # before the tables, not after them
    res = CorpusResults.load(args.results)
    print(text_report(res))
    if not args.no_html:
        out = Path(args.html) if args.html else Path(args.results) / "report.html"
        write_text_file(html_report(res), str(out), "--html")
        print(f"\nwrote {out}")
    return 0
