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
    p = sub.add_parser(
        "retrieval",
        help="retrieval check: how much of the questions' evidence each chunking lets a retriever find",
        description="Chunk the document with every chunker, retrieve chunks for each question (BM25, dense or "
        "hybrid) and score, per chunking, Chroma's token-level recall, precision, IoU and precision Ω at top-k "
        "and at a matched token budget.",
    )
    from chunkscope.cli.common import add_input_arguments

    add_input_arguments(p)
    add_question_options(p)
    p.add_argument("--chunkers", metavar="ID,...", help="chunkings to score (default: every default chunker)")
    p.add_argument("--param", action="append", metavar="ID.NAME=VALUE", help="override a chunker parameter (repeatable)")
    p.add_argument("--embedder", metavar="NAME_OR_PATH", help="model for dense/hybrid (default: bundled all-MiniLM-L6-v2)")
    p.add_argument("--embedding-mode", dest="embedding_mode", choices=["composed", "exact"], default="composed")
    p.add_argument("--json", metavar="OUT", help="write chunkscope.retrieval/1 JSON to OUT ('-': stdout, which "
                   "then holds only the JSON; the table goes to stderr)")
    p.set_defaults(func=cmd_retrieval)


def cmd_retrieval(args: argparse.Namespace) -> int:
    from chunkscope.analysis import Resources, Settings, chunk_one, chunking_plan
    from chunkscope.cli.analyze import SettingsError, check_chunkings, parse_params
    from chunkscope.cli.common import (
        check_embedder,
        check_json_target,
        check_language,
        human_stream,
        read_input,
        write_json,
    )
    from chunkscope.retrieval.run import chunkings_from_report, evaluate, note_lines

    if all(getattr(args, x) is None for x in ("questions", "generate", "self_test")):
        raise CLIError("give a question source: --questions FILE, --generate N or --self-test N")
    check_language(args.language)  # cheap: before the embedding model is checked and loaded
    cfg = config_from_args(args)
    base: dict[str, Any] = {"embedding_mode": args.embedding_mode, "embedder": args.embedder}
    if args.chunkers:
        base["chunkers"] = [c.strip() for c in args.chunkers.split(",") if c.strip()]
        base["candidates"] = []
    if args.param:
        base["params"] = parse_params(args.param)
    try:
        settings = Settings.from_dict(base)
        check_chunkings(settings, explicit_params=base.get("params") or {})
    except (TypeError, SettingsError) as exc:
        raise CLIError(str(exc)) from None
    check_json_target(args.json)
    check_embedder(settings.embedder)  # a model asked for that cannot be loaded: now, in one line
    doc = read_input(args)
    resources = Resources(settings.embedder, settings.embedding_mode)
    qs = questions_from_args(args, doc, args.file, resources)
    t0 = time.perf_counter()
    results = [chunk_one(doc, cid, base_id, ov, resources) for cid, base_id, ov in chunking_plan(settings)]
    chunk_s = time.perf_counter() - t0
    dense = None
    if cfg.retriever in ("dense", "hybrid"):
        from chunkscope.retrieval.retrievers import dense_from_resources

        dense = dense_from_resources(resources, doc)
    res = evaluate(doc.text, chunkings_from_report(results), qs, cfg, dense, doc.language)
    out = res.to_dict()
    out["document"] = {"name": doc.name, "sha256": doc.sha256, "chars": len(doc.text)}
    out["not_scored"] = [{"id": r.id, "status": r.status, "reason": r.reason} for r in results if not r.ok or not r.chunks]
    out["timings"]["chunk"] = round(chunk_s, 4)
    label = "SELF-TEST (proxy questions made from the document, not real questions)" if qs.source == "self-test" else qs.source
    stream = human_stream(args.json)  # with --json -, stdout is the JSON only

    def say(line: str = "") -> None:
        print(line, file=stream)

    say(f"{doc.name}: {qs.summary()} · retriever {cfg.retriever} · k {cfg.k} · budget {cfg.budget} tokens")
    if qs.source == "self-test":
        say(f"note: {label}")
    for p in qs.problems:
        print(f"problem: {p}", file=sys.stderr)
    say()
    say("\n".join(table_lines(out)))
    for n in note_lines(out):
        say(f"note: {n}")
    for r in out["not_scored"]:
        say(f"not scored: {r['id']} ({r['status']}: {r['reason'] or 'no chunks'})")
    t = out["timings"]
    say(f"time: chunk {chunk_s:.2f}s, retrieval {t['total']:.2f}s")
    if args.json:
        write_json(out, args.json)
        if args.json != "-":
            say(f"wrote {args.json}")
    return 0
