"""Question sources and retrieval options shared by ``chunkscope retrieval`` and ``chunkscope analyze``."""

from __future__ import annotations

import argparse
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
    if analyze:  # the settings of the retrieval check (--retrieval-weight)
        from chunkscope.analysis.settings import SETTING_SPECS
        from chunkscope.cli.settings import add_setting_options

        add_setting_options(g, [s.name for s in SETTING_SPECS if s.cli_group == "retrieval"])


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
    """The retrieval configuration of the flags (retriever, k, budget); CLIError when invalid."""
    from chunkscope.retrieval.run import Config

    cfg = Config(retriever=args.retriever, k=args.k, budget=args.budget)
    try:
        cfg.validate()
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return cfg


def _f(v: float | None) -> str:
    return "  -  " if v is None else f"{v:.3f}"


def table_lines(d: dict[str, Any]) -> list[str]:
    """The retrieval table, best recall within the budget first, and its legend."""
    k, b = d["k"], d["budget"]
    head = (f"{'chunking':<20} {'chunks':>6} {'tok':>5}  {'R@' + str(b):>7} {'±':>5} {'full':>5} {'P@' + str(b):>7} "
            f"{'IoU@' + str(b):>8}  {'R@' + str(k):>5} {'P@' + str(k):>5} {'IoU@' + str(k):>6} {'PΩ@' + str(k):>6}")
    lines = [head, "-" * len(head)]
    rows = sorted(d["chunkings"], key=lambda c: (-(c["at_budget"]["recall"] or 0), c["id"]))
    for c in rows:
        a, bb = c["at_k"], c["at_budget"]
        lines.append(f"{c['id']:<20} {c['chunks']:>6} {c['mean_tokens']:>5.0f}  {_f(bb['recall']):>7} "
                     f"{_f(bb['recall_std']):>5} {_f(bb['full_recall_share']):>5} {_f(bb['precision']):>7} "
                     f"{_f(bb['iou']):>8}  {_f(a['recall']):>5} {_f(a['precision']):>5} {_f(a['iou']):>6} "
                     f"{_f(a['precision_omega']):>6}")
    lines += [
        f"sorted by R@{b}, best first · R recall, P precision, IoU: Chroma's token-level scores · tok: mean tokens "
        "per chunk",
        f"@{b}: chunks in rank order up to {b} tokens (the last one cut) · @{k}: the top {k} chunks",
        f"±: std of R@{b} over questions · full: share of questions with all their evidence within {b} tokens",
        f"PΩ@{k}: precision Ω (precision_omega), precision when retrieving as many chunks as hold evidence; it depends on",
        "  the retriever (the study's retriever-independent one, ideal precision Ω: precision_omega_ideal in the JSON)",
    ]
    return lines
