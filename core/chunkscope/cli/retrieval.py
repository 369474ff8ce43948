"""``chunkscope retrieval``: does each chunking let a retriever find the evidence? (DESIGN section 11)

Questions from a file (``--questions``), the LLM endpoint (``--generate N``) or the offline
self-test (``--self-test N``, a proxy); BM25 / dense / hybrid retrieval; Chroma's token-level
recall, precision, IoU and precision Ω at top-k and at a token budget. ``--json`` writes
``chunkscope.retrieval/1``. ``chunkscope analyze --questions`` adds the same block to a report.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from chunkscope.cli.common import CLIError
from chunkscope.cli.questions import add_question_options, config_from_args, questions_from_args, table_lines


def add_retrieval(sub) -> None:
    """Declare ``chunkscope retrieval``: a document, question options and the settings it uses."""
    p = sub.add_parser(
        "retrieval",
        help="retrieval check: how much of the questions' evidence each chunking lets a retriever find",
        description="Chunk the document with every chunker, retrieve chunks for each question (BM25, dense or "
        "hybrid) and score, per chunking, Chroma's token-level recall, precision, IoU and precision Ω at top-k "
        "and at a matched token budget.",
    )
    from chunkscope.cli.common import add_input_arguments
    from chunkscope.cli.settings import add_setting_options

    add_input_arguments(p)
    add_question_options(p)
    add_setting_options(p, ("chunkers", "params", "embedder", "embedding_mode", "embedding_backend"))
    p.add_argument("--json", metavar="OUT", help="write chunkscope.retrieval/1 JSON to OUT ('-': stdout, which "
                   "then holds only the JSON; the table goes to stderr)")
    p.set_defaults(func=cmd_retrieval)


def retrieval_settings(args: argparse.Namespace) -> Any:
    """The chunkings and embedder asked for (every --chunkers id scored, none of them a candidate); CLIError."""
    from chunkscope.cli.settings import SettingsError, settings_from_table, settings_table

    base = settings_table(args)
    if args.chunkers:
        base["candidates"] = []
    try:
        return settings_from_table(base, args.params)
    except SettingsError as exc:
        raise CLIError(str(exc)) from None


def _scored(args: argparse.Namespace, doc: Any, settings: Any, cfg: Any) -> tuple[dict[str, Any], Any, float]:
    """(chunkscope.retrieval/1 table, question set, seconds spent chunking) of the check on ``doc``."""
    from chunkscope.analysis import Resources, chunk_one, chunking_plan
    from chunkscope.retrieval.run import chunkings_from_report, evaluate

    resources = Resources(settings.embedder, settings.embedding_mode, backend=settings.embedding_backend)
    qs = questions_from_args(args, doc, args.file, resources)
    t0 = time.perf_counter()
    results = [chunk_one(doc, cid, base_id, ov, resources) for cid, base_id, ov in chunking_plan(settings)]
    chunk_s = time.perf_counter() - t0
    dense = None
    if cfg.retriever in ("dense", "hybrid"):
        from chunkscope.retrieval.retrievers import dense_from_resources

        dense = dense_from_resources(resources, doc)
    out = evaluate(doc.text, chunkings_from_report(results), qs, cfg, dense, doc.language).to_dict()
    out["document"] = {"name": doc.name, "sha256": doc.sha256, "chars": len(doc.text)}
    out["not_scored"] = [{"id": r.id, "status": r.status, "reason": r.reason} for r in results if not r.ok or not r.chunks]
    out["timings"]["chunk"] = round(chunk_s, 4)
    return out, qs, chunk_s


def cmd_retrieval(args: argparse.Namespace) -> int:
    """Run the check: the table (recall, precision, IoU per chunking), notes, and the JSON when asked."""
    from chunkscope.cli.common import (
        check_embedder,
        check_json_target,
        check_language,
        human_stream,
        read_input,
        write_json,
    )
    from chunkscope.retrieval.run import note_lines

    if all(getattr(args, x) is None for x in ("questions", "generate", "self_test")):
        raise CLIError("give a question source: --questions FILE, --generate N or --self-test N")
    check_language(args.language)  # cheap: before the embedding model is checked and loaded
    cfg = config_from_args(args)
    settings = retrieval_settings(args)
    check_json_target(args.json)
    check_embedder(settings.embedder, settings.embedding_backend)  # a model that cannot be loaded: now, in one line
    doc = read_input(args)
    out, qs, chunk_s = _scored(args, doc, settings, cfg)
    stream = human_stream(args.json)  # with --json -, stdout is the JSON only

    def say(line: str = "") -> None:
        print(line, file=stream)

    say(f"{doc.name}: {qs.summary()} · retriever {cfg.retriever} · k {cfg.k} · budget {cfg.budget} tokens")
    if qs.source == "self-test":
        say("note: SELF-TEST (proxy questions made from the document, not real questions)")
    for p in qs.problems:
        print(f"problem: {p}", file=sys.stderr)
    say()
    say("\n".join(table_lines(out)))
    for n in note_lines(out):
        say(f"note: {n}")
    for r in out["not_scored"]:
        say(f"not scored: {r['id']} ({r['status']}: {r['reason'] or 'no chunks'})")
    say(f"time: chunk {chunk_s:.2f}s, retrieval {out['timings']['total']:.2f}s")
    if args.json:
        write_json(out, args.json)
        if args.json != "-":
            say(f"wrote {args.json}")
    return 0
