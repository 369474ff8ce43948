"""How well do offline coreference pairs stand in for Maverick's? Rules (``heuristic``) vs ``learned``.

Every English document of ``clair-dev`` and ``clair-train`` (12 documents with Maverick pairs) is
**held out**: the learned pair scorer is retrained without it (``--folds folder``, the default:
trained on the other corpus folder, two models; ``--folds lodo``: on the 11 other documents,
``chunkscope.coref.train``) and its pairs on the held-out document are
compared with Maverick's, side by side with the rules of backend ``heuristic`` ("old"; tuned by hand on
the clair-dev documents, so its clair-dev rows are not held out for it). Per document:

* pair precision / recall against Maverick (a pair matches when the pronoun spans are equal
  and the entity starts agree within ``--tol`` characters);
* RC of every chunking with each backend's pairs and with Maverick's: Spearman of the two RC
  series ("nan" when one series is constant), mean and max |ΔRC|. The chunkings are the
  default chunkers of an analysis (those that run without an LLM) plus recursive chunkings of
  150 and 300 tokens;
* the adaptive winner: the document is analysed once with Maverick's pairs
  (``chunkscope.analysis.analyze``, default settings and embedder; the report is cached under
  ``--cache``), then RC is recomputed with each backend's pairs
  (``metrics.references_completeness``) and the winner re-selected (``analysis.rescore``); it
  agrees when it is the same chunking. The Maverick margin (winner minus runner-up) is shown:
  the target counts documents whose margin exceeds 0.005.

The French document is listed to show the language guard (no pairs, RC not available).
Speed (``--speed``): seconds per 100k tokens of each backend on GDPR, warm (models loaded,
no disk cache), measured in the same run.

    .venv/bin/python bench/coref_agreement.py [--corpus DIR ...] [--tol 20] [--json OUT] [--speed]
        [--no-analysis] [--cache .cache/coref_bench]

Targets (issue 18, held-out documents): mean |ΔRC| <= 0.02; Spearman >= 0.85 where RC varies;
same winner on >= 90% of documents whose Maverick margin > 0.005; <= 5 s per 100k tokens.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chunkscope.chunkers.registry import run_chunker  # noqa: E402
from chunkscope.coref import Pair, get_pairs  # noqa: E402
from chunkscope.coref.train import OBJECTIVE  # noqa: E402
from chunkscope.document import Document, Span  # noqa: E402
from chunkscope.metrics import pair_table, references_completeness  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
EXTRA_SIZES = (150, 300)
MARGIN = 0.005


def spearman(x: list[float], y: list[float]) -> float:
    if len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")  # a constant series has no ranking
    return float(spearmanr(x, y).statistic)


def pair_match(mine: list[Pair], ref: list[Pair], tol: int) -> tuple[float, float]:
    """(precision, recall): pronoun span equal, entity starts within tol."""
    by_pro: dict[tuple[int, int], list[int]] = {}
    for p in ref:
        by_pro.setdefault((p.pronoun.start, p.pronoun.end), []).append(p.entity.start)
    hit = sum(any(abs(p.entity.start - e) <= tol for e in by_pro.get((p.pronoun.start, p.pronoun.end), []))
              for p in mine)
    return (hit / len(mine) if mine else float("nan")), (hit / len(ref) if ref else float("nan"))


def maverick_report(doc: Document, mentions: Path, cache: Path, cached_only: bool = False):
    """The document analysed with Maverick's pairs (default settings), cached as JSON."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.report import Report

    f = cache / "reports" / f"{doc.sha256[:16]}.json"
    if f.is_file():
        return Report.load(f)
    if cached_only:
        return None
    rep = analyze(doc, Settings(coref="precomputed", mentions=str(mentions)))
    f.parent.mkdir(parents=True, exist_ok=True)
    rep.save(f)
    return rep


def winner_with(report, pairs: list[Pair] | None) -> tuple[str | None, float | None]:
    """(winner, margin) of the report with RC recomputed from ``pairs`` (None: no RC)."""
    from chunkscope.analysis import rescore
    from chunkscope.report import Report

    rep = Report.from_dict(report.to_dict())  # a copy
    tab = _table(pairs or [])
    for c in rep.chunkings:
        if c.ok:
            c.metrics["RC"] = references_completeness([Span(x.start, x.end) for x in c.chunks], tab).value \
                if len(tab) else None
    rescore(rep, rep.settings.get("weights"), rep.settings.get("candidates"))
    ranked = [c for c in rep.ranked if c.candidate]
    margin = (ranked[0].score - ranked[1].score) if len(ranked) > 1 else None
    return rep.winner, margin


def chunk_spans(doc: Document, report) -> dict[str, list[Span]]:
    out: dict[str, list[Span]] = {}
    if report is not None:
        out = {c.id: [Span(x.start, x.end) for x in c.chunks] for c in report.chunkings if c.ok}
    else:
        for cid in ("page", "page+pp", "recursive-1100", "recursive-1100+pp", "recursive-600", "recursive-600+pp"):
            r = run_chunker(doc, cid)
            if r.status == "ok":
                out[cid] = r.spans
    for size in EXTRA_SIZES:
        out[f"recursive-{size}"] = run_chunker(doc, "recursive-1100", {"chunk_size": size}).spans
    return out


def _table(pairs: list[Pair]):
    return pair_table([((p.entity.start, p.entity.end), (p.pronoun.start, p.pronoun.end)) for p in pairs])


def rc_stats(spans: dict[str, list[Span]], mine: list[Pair], ref: list[Pair]) -> dict[str, Any]:
    a, b = [], []
    tm, tr = _table(mine), _table(ref)
    for s in spans.values():
        x = references_completeness(s, tm).value if len(tm) else None
        y = references_completeness(s, tr).value
        a.append(1.0 if x is None else x)
        b.append(y)
    d = [abs(x - y) for x, y in zip(a, b)]
    return {"rc": a, "spearman": spearman(a, b), "mean_abs": sum(d) / len(d), "max_abs": max(d)}


def speed(doc: Document) -> dict[str, float]:
    """Seconds per 100k tokens of each backend, warm, no disk cache, same run."""
    from chunkscope.coref.heuristic import resolve as rules_resolve
    from chunkscope.coref.learned import load_model
    from chunkscope.coref.learned import resolve as learned_resolve
    from chunkscope.nlp import english
    from chunkscope.tokens import count_tokens

    english(("ner", "lemmatizer"))("Warm up the parser. It works.")
    load_model()
    n = count_tokens(doc.text)
    out = {}
    for name, fn in (("rules", rules_resolve), ("learned", learned_resolve)):
        t0 = time.perf_counter()
        fn(doc.text)
        out[name] = (time.perf_counter() - t0) / n * 100_000
    out["tokens"] = n
    return out


def fmt(x: float | None, spec: str = ".3f") -> str:
    return "  -  " if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", nargs="+", default=[str(SHARED / "clair-dev"), str(SHARED / "clair-train")])
    ap.add_argument("--tol", type=int, default=20, help="entity start tolerance in characters")
    ap.add_argument("--cache", default=str(ROOT / ".cache" / "coref_bench"),
                    help="parses, old-rules pairs and Maverick-pairs analyses are cached here")
    ap.add_argument("--no-analysis", action="store_true", help="skip the winner comparison (no embedder)")
    ap.add_argument("--folds", choices=("folder", "lodo"), default="folder",
                    help="folder: train on one corpus folder, test on the other (2 models); lodo: leave one "
                         "document out (one model per document)")
    ap.add_argument("--objective", choices=("f1", "count"), default=OBJECTIVE,
                    help="how the held-out models pick their pairing threshold (default: as shipped)")
    ap.add_argument("--no-rules", action="store_true", help="skip the old rules (they parse every document fully)")
    ap.add_argument("--cached-only", action="store_true",
                    help="compare winners only where the Maverick-pairs analysis is already cached")
    ap.add_argument("--speed", action="store_true", help="time both backends on GDPR (warm, no cache)")
    ap.add_argument("--json", help="write the per-document results here")
    args = ap.parse_args(argv)
    os.environ.pop("CHUNKSCOPE_CACHE_DIR", None)
    from chunkscope.coref.heuristic import resolve as rules_resolve
    from chunkscope.coref.learned import decode
    from chunkscope.coref.train import corpus, doc_examples, parsed_docs, train_examples

    cache = Path(args.cache)
    docs = corpus(args.corpus)
    if not docs:
        print(f"no corpus at {', '.join(args.corpus)}", file=sys.stderr)
        return 1
    parsed = parsed_docs(docs, cache)
    rows = []
    head = (f"{'held-out document':34} {'pairs M/old/new':>15} {'P old/new':>10} {'R old/new':>10} "
            f"{'rho old/new':>12} {'mean|dRC| old/new':>17} {'max|dRC| old/new':>16} "
            f"{'winner M':>18} {'margin':>6} {'old':>3} {'new':>3}")
    print(head)
    folder_of = [next(k for k, c in enumerate(args.corpus) if (Path(c) / "parsed" / f"{name}.json").is_file())
                 for name, _, _ in docs]
    exs = [doc_examples(p, r) for p, r in parsed]
    models: dict[Any, Any] = {}
    for i, (name, doc, ref) in enumerate(docs):
        fold = i if args.folds == "lodo" else folder_of[i]
        if fold not in models:  # trained without the held-out document (lodo) or its whole folder
            keep = [j for j in range(len(docs)) if (j != i if args.folds == "lodo" else folder_of[j] != fold)]
            models[fold] = train_examples([exs[j] for j in keep], f"heldout-{fold}", objective=args.objective)
        model = models[fold]
        new = decode(parsed[i][0], model)
        rfile = cache / f"rules-{doc.sha256[:16]}.json"
        if args.no_rules:
            old = []
        elif rfile.is_file():
            old = [Pair.from_dict(d) for d in json.loads(rfile.read_text())]
        else:
            old = rules_resolve(doc.text)
            rfile.parent.mkdir(parents=True, exist_ok=True)
            rfile.write_text(json.dumps([p.to_dict() for p in old]))
        report = None
        mentions = next(Path(c) / "mentions" / f"{name}.parquet" for c in args.corpus
                        if (Path(c) / "mentions" / f"{name}.parquet").is_file())
        if not args.no_analysis:
            report = maverick_report(doc, mentions, cache, args.cached_only)
        spans = chunk_spans(doc, report)
        so, sn = rc_stats(spans, old, ref), rc_stats(spans, new, ref)
        po, ro = pair_match(old, ref, args.tol)
        pn, rn = pair_match(new, ref, args.tol)
        row: dict[str, Any] = {
            "document": name, "pairs": {"maverick": len(ref), "old": len(old), "new": len(new)},
            "precision": {"old": po, "new": pn}, "recall": {"old": ro, "new": rn}, "chunkings": list(spans),
            "rc": {"maverick": rc_stats(spans, ref, ref)["rc"], "old": so["rc"], "new": sn["rc"]},
            "spearman": {"old": so["spearman"], "new": sn["spearman"]},
            "mean_abs": {"old": so["mean_abs"], "new": sn["mean_abs"]},
            "max_abs": {"old": so["max_abs"], "new": sn["max_abs"]}, "threshold": model.threshold,
        }
        win = ""
        if report is None and not args.no_analysis:
            win = "(not analysed)"
        if report is not None:
            wm, margin = winner_with(report, ref)
            wo = winner_with(report, old)[0] if not args.no_rules else None
            wn, _ = winner_with(report, new)
            row["winner"] = {"maverick": wm, "margin": margin, "old": wo, "new": wn}
            win = f"{str(wm)[:18]:>18} {fmt(margin):>6} {'yes' if wo == wm else 'NO':>3} {'yes' if wn == wm else 'NO':>3}"
        rows.append(row)
        print(f"{name[:34]:34} {len(ref):>5}/{len(old):>4}/{len(new):<4} {fmt(po, '.2f')}/{fmt(pn, '.2f'):4} "
              f"{fmt(ro, '.2f')}/{fmt(rn, '.2f'):4} {fmt(so['spearman']):>5}/{fmt(sn['spearman']):6} "
              f"{so['mean_abs']:8.4f}/{sn['mean_abs']:<8.4f} {so['max_abs']:7.3f}/{sn['max_abs']:<8.3f} {win}",
              flush=True)
    print()
    for key in ("old", "new"):
        rhos = [r["spearman"][key] for r in rows if not math.isnan(r["spearman"][key])]
        mad = [r["mean_abs"][key] for r in rows]
        line = (f"{key:>3}: mean |dRC| {sum(mad) / len(mad):.4f} (worst doc {max(mad):.4f}); max |dRC| "
                f"{max(r['max_abs'][key] for r in rows):.3f}; Spearman mean {sum(rhos) / max(1, len(rhos)):.3f} "
                f"min {min(rhos, default=float('nan')):.3f} over {len(rhos)} docs where RC varies, "
                f">= 0.85 on {sum(x >= 0.85 for x in rhos)}")
        won = [r for r in rows if "winner" in r]
        if won:
            same = [r for r in won if r["winner"][key] == r["winner"]["maverick"]]
            wide = [r for r in won if (r["winner"]["margin"] or 0) > MARGIN]
            line += (f"; same winner {len(same)}/{len(won)} docs, {sum(r in same for r in wide)}/{len(wide)} "
                     f"with Maverick margin > {MARGIN}")
        print(line)
    for f in sorted(Path(c) for c in args.corpus):  # the language guard
        for p in sorted((f / "parsed").glob("*.json")):
            if p.stem in {r["document"] for r in rows}:
                continue
            from chunkscope.ingest.reference import load_reference

            res = get_pairs(load_reference(p))
            print(f"{p.stem[:34]:34} {res.backend}: {len(res.pairs)} pairs; {res.reason}")
    if args.speed:
        gdpr = next((d for n, d, _ in docs if "GDPR" in n), None)
        if gdpr is not None:
            sp = speed(gdpr)
            print(f"speed on GDPR ({sp['tokens']:,} tokens), warm, no cache: rules {sp['rules']:.2f} s/100k tokens, "
                  f"learned {sp['learned']:.2f} s/100k tokens (ratio {sp['learned'] / sp['rules']:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
