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


def add_question_options(p: argparse.ArgumentParser, analyze: bool = False) -> None:
    """Question source and retriever options (shared by ``retrieval`` and ``analyze``)."""
    g = p.add_argument_group("retrieval check" + (" (optional: adds a 'retrieval' block to the report)" if analyze else ""))
    g.add_argument("--questions", metavar="FILE",
                   help="CSV or JSONL of questions with evidence (spans or quotes; Chroma's questions_df.csv as is)")
    g.add_argument("--generate", type=int, metavar="N", help="generate N questions with the configured LLM endpoint")
    g.add_argument("--self-test", dest="self_test", type=int, metavar="N",
                   help="N offline proxy questions made from the document (no LLM; a proxy, see docs/retrieval.md)")
    g.add_argument("--retriever", choices=["bm25", "dense", "hybrid"], default="bm25", help="default bm25")
    g.add_argument("--k" if not analyze else "--retrieval-k", dest="k", type=int, default=5, metavar="K",
                   help="chunks retrieved per question for the top-k scores (default 5)")
    g.add_argument("--budget" if not analyze else "--retrieval-budget", dest="budget", type=int, default=1000,
                   metavar="TOKENS", help="token budget for the budgeted scores (default 1000)")
    if analyze:
        g.add_argument("--retrieval-weight", dest="retrieval_weight", type=float, default=None, metavar="W",
                       help="weight of budgeted retrieval recall in the adaptive score (default 0: off)")


def questions_from_args(args: argparse.Namespace, doc: Any, path: str, resources: Any = None) -> Any:
    """The QuestionSet the arguments ask for (None when none is asked); CLIError on bad input."""
    from chunkscope.llm import LLMError
    from chunkscope.retrieval.questions import QuestionsError, raw_text_of, read_questions_file

    chosen = [x for x in ("questions", "generate", "self_test") if getattr(args, x, None) is not None]
    if len(chosen) > 1:
        raise CLIError("give one question source: --questions, --generate or --self-test")
    if not chosen:
        return None
    if args.questions is not None:
        try:
            return read_questions_file(args.questions, doc.text, doc.name, raw_text_of(path))
        except QuestionsError as exc:
            raise CLIError(f"--questions: {exc}") from None
    if args.self_test is not None:
        from chunkscope.retrieval.selftest import self_test

        if args.self_test < 1:
            raise CLIError("--self-test: N must be >= 1")
        qs = self_test(doc, args.self_test)
        if not qs.questions:
            raise CLIError(f"--self-test: {'; '.join(qs.problems) or 'no question could be made'}")
        return qs
    from chunkscope.retrieval.generate import generate

    if args.generate < 1:
        raise CLIError("--generate: N must be >= 1")
    client = resources.llm() if resources is not None else None
    if client is None:
        from chunkscope.llm import LLMClient

        try:
            client = LLMClient.from_env()
        except LLMError as exc:
            raise CLIError(f"--generate: {exc}") from None
    try:
        qs = generate(doc.text, doc.sha256, args.generate, client)
    except LLMError as exc:
        raise CLIError(f"--generate: {exc}") from None
    if not qs.questions:
        raise CLIError(f"--generate: no generated question could be verified ({'; '.join(qs.problems[:2])})")
    return qs


def config_from_args(args: argparse.Namespace) -> Any:
    from chunkscope.retrieval.run import Config

    cfg = Config(retriever=args.retriever, k=args.k, budget=args.budget)
    try:
        cfg.validate()
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return cfg


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
    p.add_argument("--json", metavar="OUT", help="write chunkscope.retrieval/1 JSON to OUT ('-' for stdout)")
    p.set_defaults(func=cmd_retrieval)


def _f(v: float | None) -> str:
    return "  -  " if v is None else f"{v:.3f}"


def table_lines(d: dict[str, Any]) -> list[str]:
    k, b = d["k"], d["budget"]
    head = (f"{'chunking':<20} {'chunks':>6} {'tok':>5}  {'R@' + str(b):>7} {'±':>5} {'full':>5} {'P@' + str(b):>7} "
            f"{'IoU@' + str(b):>8}  {'R@' + str(k):>5} {'P@' + str(k):>5} {'IoU@' + str(k):>6} {'PΩ':>5}")
    lines = [head, "-" * len(head)]
    rows = sorted(d["chunkings"], key=lambda c: (-(c["at_budget"]["recall"] or 0), c["id"]))
    for c in rows:
        a, bb = c["at_k"], c["at_budget"]
        lines.append(f"{c['id']:<20} {c['chunks']:>6} {c['mean_tokens']:>5.0f}  {_f(bb['recall']):>7} "
                     f"{_f(bb['recall_std']):>5} {_f(bb['full_recall_share']):>5} {_f(bb['precision']):>7} "
                     f"{_f(bb['iou']):>8}  {_f(a['recall']):>5} {_f(a['precision']):>5} {_f(a['iou']):>6} "
                     f"{_f(a['precision_omega']):>5}")
    return lines


def cmd_retrieval(args: argparse.Namespace) -> int:
    from chunkscope.analysis import Resources, Settings, chunk_one, chunking_plan
    from chunkscope.cli.analyze import SettingsError, check_chunkings, parse_params
    from chunkscope.cli.common import check_json_target, load_input, write_json
    from chunkscope.retrieval.run import chunkings_from_report, evaluate

    if all(getattr(args, x) is None for x in ("questions", "generate", "self_test")):
        raise CLIError("give a question source: --questions FILE, --generate N or --self-test N")
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
    doc = load_input(args.file, args.max_bytes)
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
    print(f"{doc.name}: {qs.summary()} · retriever {cfg.retriever} · k {cfg.k} · budget {cfg.budget} tokens")
    if qs.source == "self-test":
        print(f"note: {label}")
    for p in qs.problems:
        print(f"problem: {p}", file=sys.stderr)
    print()
    print("\n".join(table_lines(out)))
    for c in res.chunkings:
        for n in c.notes:
            print(f"note: {c.id}: {n}")
    for r in out["not_scored"]:
        print(f"not scored: {r['id']} ({r['status']}: {r['reason'] or 'no chunks'})")
    t = out["timings"]
    print(f"time: chunk {chunk_s:.2f}s, retrieval {t['total']:.2f}s")
    if args.json:
        write_json(out, args.json)
        print(f"wrote {args.json}")
    return 0
