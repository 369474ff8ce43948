"""How well do the offline coreference rules stand in for Maverick's pairs, on documents held out?

Every English document of ``clair-dev`` and ``clair-train`` (12 documents with Maverick pairs) is
held out in turn (leave-one-document-out, LODO): the rules' numbers (``heuristic.Rules``) are
chosen from the grid ``heuristic.GRID`` on the 11 other documents (lowest mean |ΔRC|), and the
pairs they give on the held-out document are compared with Maverick's — side by side with the
first version of the rules ("old": ``heuristic.LEGACY``, the whole text parsed, hand-tuned on
clair-dev, so its clair-dev rows are not held out for it). The shipped ``heuristic.RULES`` are
the grid's choice on all 12 documents. Per held-out document:

* pair precision / recall against Maverick (same pronoun span, entity starts within ``--tol``);
* RC of every chunking with each backend's pairs and with Maverick's: Spearman of the two RC
  series across chunkings ("-" when one series is constant), mean and max |ΔRC|. Chunkings:
  the default chunkers that need neither an embedder nor an LLM, plus recursive 150 and 300;
* the adaptive winner: the document is analysed once (candidates ``page+pp``,
  ``recursive-1100+pp``, ``recursive-600+pp``, default embedder; cached under ``--cache``), then
  RC is recomputed from each set of pairs and the winner re-selected (``analysis.rescore``,
  with the verdict's tie-break); "same" when it is Maverick's winner. Maverick's winning margin
  (point score of the winner minus the runner-up) is shown: the target counts documents whose
  margin exceeds 0.005.

``--ceiling``: per document, the best RC Spearman that any grid setting reaches on it, chosen on that very
document (in-sample, so an upper bound of what choosing the rules' numbers can do there), beside the shipped
setting's.

Non-English documents are listed with the default backend's reason (RC not available).
``--speed``: seconds per 100k tokens (o200k counter) of the old rules, the default backend and the
default backend with thinc's ``blis`` products (the loader's choice before; see ``chunkscope.text.nlp``) on
GDPR, warm (pipeline loaded), no disk cache, best of ``--repeat`` interleaved runs, in the same process.

    .venv/bin/python bench/coref_agreement.py [--speed] [--no-analysis] [--ceiling] [--max-analysis-chars N]
        [--docs SUBSTR ...] [--cache .cache/coref_bench] [--json OUT] [--corpus DIR ...]

The first run parses every document (about a minute on 2 cores) and analyses each one for the
winner (the embedder: minutes for the largest documents; ``--max-analysis-chars`` skips those,
``--no-analysis`` skips all); later runs read the cache.

Targets (issue 18, held-out documents): mean |ΔRC| <= 0.02; Spearman >= 0.85 where RC varies;
same winner on >= 90% of documents whose Maverick margin > 0.005; <= 5 s per 100k tokens.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import math
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chunkscope.chunkers.registry import DEFAULT_IDS, get, run_chunker  # noqa: E402
from chunkscope.coref import Pair, get_pairs  # noqa: E402
from chunkscope.coref import heuristic as H  # noqa: E402
from chunkscope.document import Document, Span  # noqa: E402
from chunkscope.metrics import pair_table, references_completeness  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
EXTRA_SIZES = (150, 300)
MARGIN = 0.005
CANDIDATES = ("page+pp", "recursive-1100+pp", "recursive-600+pp")


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


def _table(pairs: list[Pair]) -> np.ndarray:
    return pair_table([((p.entity.start, p.entity.end), (p.pronoun.start, p.pronoun.end)) for p in pairs])


def rc_series(spans: dict[str, list[tuple[int, int]]], pairs: list[Pair]) -> list[float]:
    """RC of every chunking (1.0 when there are no pairs: nothing can be split)."""
    tab = _table(pairs)
    return [references_completeness(s, tab).value if len(tab) else 1.0 for s in spans.values()]


def rc_stats(rc: list[float], rc_ref: list[float]) -> dict[str, float]:
    d = [abs(x - y) for x, y in zip(rc, rc_ref)]
    return {"spearman": spearman(rc, rc_ref), "mean_abs": sum(d) / len(d), "max_abs": max(d),
            "bias": sum(x - y for x, y in zip(rc, rc_ref)) / len(d)}


def chunk_spans(doc: Document, cache: Path) -> dict[str, list[tuple[int, int]]]:
    """Spans of every chunking that needs neither embedder nor LLM (+ recursive 150/300), cached."""
    f = cache / f"spans-{doc.sha256[:16]}.pkl"
    if f.is_file():
        return pickle.loads(f.read_bytes())
    out: dict[str, list[tuple[int, int]]] = {}
    for cid in DEFAULT_IDS:
        if get(cid).needs == "":
            r = run_chunker(doc, cid)
            if r.status == "ok":
                out[cid] = [(s.start, s.end) for s in r.spans]
    for size in EXTRA_SIZES:
        out[f"recursive-{size}"] = [(s.start, s.end) for s in
                                    run_chunker(doc, "recursive-1100", {"chunk_size": size}).spans]
    f.write_bytes(pickle.dumps(out))
    return out


def parsed(doc: Document, cache: Path, rules: H.Rules) -> tuple[list[Any], list[Any]]:
    """(segments, spaCy docs) of the windows ``rules`` need (``heuristic.parse_windows``), cached as a DocBin
    under a hash of the spaCy pipeline's name, version and components and of the segments themselves (a change to
    the rules that moves a window parses again; a key by ``heuristic.window_key`` and version alone served a stale
    parse of as many segments, at shifted offsets)."""
    from spacy.tokens import DocBin

    from chunkscope.text.nlp import english

    nlp = english(H.EXCLUDE)
    segs = H.parse_windows(doc.text, rules)
    digest = hashlib.sha256(f"{nlp.meta.get('name')}-{nlp.meta.get('version')}-{nlp.pipe_names}".encode())
    for s in segs:
        digest.update(f"{s.offset}:{len(s.text)}:".encode())
        digest.update(s.text.encode("utf-8", "surrogatepass"))
    f = cache / f"parsed-{digest.hexdigest()[:24]}-{doc.sha256[:16]}.spacy"
    if f.is_file():
        docs = list(DocBin().from_bytes(f.read_bytes()).get_docs(nlp.vocab))
        if len(docs) == len(segs):
            return segs, docs
    docs = list(nlp.pipe((s.text for s in segs), batch_size=H.BATCH_SIZE))
    db = DocBin(store_user_data=False)
    for d in docs:
        db.add(d)
    f.write_bytes(db.to_bytes())
    return segs, docs


def old_pairs(doc: Document, cache: Path) -> list[Pair]:
    """The first version's pairs (LEGACY numbers, every block parsed), cached."""
    f = cache / f"old-{doc.sha256[:16]}.json"
    if f.is_file():
        return [Pair.from_dict(d) for d in json.loads(f.read_text())]
    pairs = H.resolve(doc.text, windows=False, rules=H.LEGACY)
    f.write_text(json.dumps([p.to_dict() for p in pairs]))
    return pairs


def grid_points() -> list[H.Rules]:
    keys = list(H.GRID)
    return [dataclasses.replace(H.LEGACY, **dict(zip(keys, vals))) for vals in itertools.product(*H.GRID.values())]


def objective(rows: list[dict[str, float]]) -> float:
    """What the grid minimises over the training documents: mean |ΔRC|."""
    return float(np.mean([r["mean_abs"] for r in rows]))


# --------------------------------------------------------------------------- winner

def analysis(doc: Document, mentions: Path, cache: Path) -> Any:
    """The document analysed with Maverick's pairs (candidate chunkings only), cached as JSON."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.report import Report

    f = cache / "reports" / f"cand-{doc.sha256[:16]}.json"
    if f.is_file():
        return Report.load(f)
    rep = analyze(doc, Settings(coref="precomputed", mentions=str(mentions), chunkers=CANDIDATES))
    f.parent.mkdir(parents=True, exist_ok=True)
    rep.save(f)
    return rep


def winner_with(report: Any, pairs: list[Pair]) -> tuple[str | None, float | None]:
    """(winner, point-score margin over the runner-up) with RC recomputed from ``pairs``."""
    from chunkscope.analysis import rescore
    from chunkscope.analysis.uncertainty import uncertainty_facts
    from chunkscope.report import Report

    rep = Report.from_dict(report.to_dict())  # a copy
    tab = _table(pairs)
    for c in rep.chunkings:
        if c.ok:
            r = references_completeness([Span(x.start, x.end) for x in c.chunks], tab) if len(tab) else None
            c.metrics["RC"] = r.value if r is not None else None
            if r is not None:
                c.diagnostics["RC"] = r.details
            else:
                c.diagnostics.pop("RC", None)
    if rep.uncertainty:
        rep.uncertainty = {**rep.uncertainty, **{"pair_positions": uncertainty_facts(tab)["pair_positions"]}}
    rescore(rep, rep.settings.get("weights"), rep.settings.get("candidates"))
    ranked = [c for c in rep.ranked if c.candidate and c.score is not None]
    margin = (ranked[0].score - ranked[1].score) if len(ranked) > 1 else None
    return rep.winner, margin


# --------------------------------------------------------------------------- speed

def speed(doc: Document, repeat: int) -> dict[str, float]:
    """Seconds per 100k tokens of the old rules, the default backend and the default backend with thinc's
    ``blis`` products (what :func:`chunkscope.text.nlp.english` used before), warm, no disk cache."""
    from chunkscope.text.nlp import english, set_matmul
    from chunkscope.text.tokens import count_tokens

    old_nlp = english(("ner", "lemmatizer"))  # the first version's pipeline (attribute ruler included)
    new_nlp = english(H.EXCLUDE)
    blis_nlp = english.__wrapped__(H.EXCLUDE)  # a copy of its own, not the cached one
    set_matmul(blis_nlp, use_blis=True)
    for nlp in (old_nlp, new_nlp, blis_nlp):
        nlp("Warm up the parser. It works.")
    n = count_tokens(doc.text)
    runs = {"old": lambda: H.resolve(doc.text, old_nlp, windows=False, rules=H.LEGACY),
            "new": lambda: H.resolve(doc.text, new_nlp),
            "blis": lambda: H.resolve(doc.text, blis_nlp)}
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeat):  # interleaved: a busy moment of the machine falls on every backend alike
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return {"tokens": n, **{name: b / n * 100_000 for name, b in best.items()}}


def fmt(x: float | None, spec: str = ".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    from chunkscope.coref.train import corpus

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", nargs="+", default=[str(SHARED / "clair-dev"), str(SHARED / "clair-train")])
    ap.add_argument("--docs", nargs="+", help="only the held-out documents whose name contains one of these")
    ap.add_argument("--tol", type=int, default=20, help="entity start tolerance in characters")
    ap.add_argument("--cache", default=str(ROOT / ".cache" / "coref_bench"),
                    help="parses, old pairs, chunk spans and the winner analyses are cached here")
    ap.add_argument("--no-analysis", action="store_true", help="skip the winner comparison (no embedder)")
    ap.add_argument("--max-analysis-chars", type=int, default=0,
                    help="compare winners only on documents up to this many characters (unless cached)")
    ap.add_argument("--speed", action="store_true", help="time the old rules and the default backend on GDPR")
    ap.add_argument("--repeat", type=int, default=2, help="speed: best of this many runs")
    ap.add_argument("--learned", action="store_true",
                    help="also the opt-in learned pair scorer, retrained without each held-out document (summary line)")
    ap.add_argument("--ceiling", action="store_true",
                    help="per document, the best RC Spearman any grid setting reaches on it (in-sample: a ceiling)")
    ap.add_argument("--check-rules", action="store_true",
                    help="exit 1 when the grid's choice on all documents is not heuristic.RULES (after the table)")
    ap.add_argument("--json", help="write the per-document results here")
    args = ap.parse_args(argv)
    os.environ.pop("CHUNKSCOPE_CACHE_DIR", None)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    docs = corpus(args.corpus)
    if not docs:
        print(f"no corpus at {', '.join(args.corpus)}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    points = grid_points()
    windows = {H.window_key(r): r for r in points}  # one parse per set of windows
    # every grid point on every document (the LODO choice then only averages these)
    per_doc: list[dict[str, Any]] = []
    for name, doc, ref in docs:
        spans = chunk_spans(doc, cache)
        rc_ref = rc_series(spans, ref)
        parses = {k: parsed(doc, cache, r) for k, r in windows.items()}
        evals = []
        for rules in points:
            segs, pdocs = parses[H.window_key(rules)]
            pairs = H.resolve_parsed(doc.text, segs, iter(pdocs), rules)
            evals.append((pairs, rc_stats(rc_series(spans, pairs), rc_ref)))
        per_doc.append({"spans": spans, "rc_ref": rc_ref, "evals": evals})
        print(f"  {name[:60]}: {len(points)} rule settings scored", file=sys.stderr, flush=True)
    shipped = min(range(len(points)), key=lambda k: objective([d["evals"][k][1] for d in per_doc]))
    print(f"grid of {len(points)} rule settings scored on {len(docs)} documents in "
          f"{time.perf_counter() - t0:.0f} s; choice on all documents: {points[shipped]}"
          f"{' (= heuristic.RULES)' if points[shipped] == H.RULES else ' (heuristic.RULES differs!)'}")

    if args.ceiling:  # what the grid could do for each document at best, were it chosen on that document
        for (name, _, _), d in zip(docs, per_doc):
            rho = [s["spearman"] for _, s in d["evals"]]
            best = max((k for k in range(len(points)) if not math.isnan(rho[k])), key=rho.__getitem__, default=None)
            line = ("RC constant: no ranking" if best is None else
                    f"best Spearman {rho[best]:.3f} (setting {best}, mean |dRC| {d['evals'][best][1]['mean_abs']:.4f})")
            print(f"  ceiling {name[:50]:50} {line}; shipped {fmt(rho[shipped])}")

    learned: list[list[Pair]] = []
    if args.learned:  # the learned scorer, one model per held-out document (chunkscope.coref.train)
        from chunkscope.coref.learned import decode
        from chunkscope.coref.train import doc_examples, parsed_docs, train_examples

        lparsed = parsed_docs(docs, cache)
        exs = [doc_examples(p, r) for p, r in lparsed]
        for i in range(len(docs)):
            model = train_examples([exs[j] for j in range(len(docs)) if j != i], f"heldout-{i}")
            learned.append(decode(lparsed[i][0], model))
    keys = ("old", "new", "learned") if learned else ("old", "new")

    head = (f"{'held-out document':34} {'pairs M/old/new':>15} {'P old/new':>10} {'R old/new':>10} "
            f"{'rho old/new':>12} {'mean|dRC| old/new':>17} {'max|dRC| old/new':>16} "
            f"{'winner M':>18} {'margin':>6} {'old':>3} {'new':>3}")
    print(head)
    rows = []
    for i, (name, doc, ref) in enumerate(docs):
        if args.docs and not any(s.lower() in name.lower() for s in args.docs):
            continue
        others = [j for j in range(len(docs)) if j != i]
        k = min(range(len(points)), key=lambda k: objective([per_doc[j]["evals"][k][1] for j in others]))
        new, sn = per_doc[i]["evals"][k]
        old = old_pairs(doc, cache)
        so = rc_stats(rc_series(per_doc[i]["spans"], old), per_doc[i]["rc_ref"])
        po, ro = pair_match(old, ref, args.tol)
        pn, rn = pair_match(new, ref, args.tol)
        row: dict[str, Any] = {
            "document": name, "pairs": {"maverick": len(ref), "old": len(old), "new": len(new)},
            "rules": dataclasses.asdict(points[k]),
            "precision": {"old": po, "new": pn}, "recall": {"old": ro, "new": rn},
            "chunkings": list(per_doc[i]["spans"]),
            "rc": {"maverick": per_doc[i]["rc_ref"], "old": rc_series(per_doc[i]["spans"], old),
                   "new": rc_series(per_doc[i]["spans"], new)},
            **{key: {"old": so[key], "new": sn[key]} for key in ("spearman", "mean_abs", "max_abs", "bias")},
        }
        if learned:
            sl = rc_stats(rc_series(per_doc[i]["spans"], learned[i]), per_doc[i]["rc_ref"])
            for key in ("spearman", "mean_abs", "max_abs", "bias"):
                row[key]["learned"] = sl[key]
            row["pairs"]["learned"] = len(learned[i])
            row["precision"]["learned"], row["recall"]["learned"] = pair_match(learned[i], ref, args.tol)
        win = ""
        mentions = next(Path(c) / "mentions" / f"{name}.parquet" for c in args.corpus
                        if (Path(c) / "mentions" / f"{name}.parquet").is_file())
        cached = (cache / "reports" / f"cand-{doc.sha256[:16]}.json").is_file()
        if not args.no_analysis and (cached or not args.max_analysis_chars or len(doc.text) <= args.max_analysis_chars):
            report = analysis(doc, mentions, cache)
            wm, margin = winner_with(report, ref)
            wo, wn = winner_with(report, old)[0], winner_with(report, new)[0]
            row["winner"] = {"maverick": wm, "margin": margin, "old": wo, "new": wn}
            if learned:
                row["winner"]["learned"] = winner_with(report, learned[i])[0]
            win = f"{str(wm)[:18]:>18} {fmt(margin):>6} {'yes' if wo == wm else 'NO':>3} {'yes' if wn == wm else 'NO':>3}"
        elif not args.no_analysis:
            win = f"{'(not analysed)':>18}"
        rows.append(row)
        print(f"{name[:34]:34} {len(ref):>5}/{len(old):>4}/{len(new):<4} {fmt(po, '.2f')}/{fmt(pn, '.2f'):4} "
              f"{fmt(ro, '.2f')}/{fmt(rn, '.2f'):4} {fmt(so['spearman']):>5}/{fmt(sn['spearman']):6} "
              f"{so['mean_abs']:8.4f}/{sn['mean_abs']:<8.4f} {so['max_abs']:7.3f}/{sn['max_abs']:<8.3f} {win}",
              flush=True)
    print()
    for key in keys:
        rhos = [r["spearman"][key] for r in rows if not math.isnan(r["spearman"][key])]
        mad = [r["mean_abs"][key] for r in rows]
        line = (f"{key:>7}: mean |dRC| {sum(mad) / len(mad):.4f} (worst doc {max(mad):.4f}, mean signed "
                f"{np.mean([r['bias'][key] for r in rows]):+.4f}); max |dRC| {max(r['max_abs'][key] for r in rows):.3f}; "
                f"Spearman mean {sum(rhos) / max(1, len(rhos)):.3f} min {min(rhos, default=float('nan')):.3f} "
                f"over {len(rhos)} docs where RC varies, >= 0.85 on {sum(x >= 0.85 for x in rhos)}")
        won = [r for r in rows if "winner" in r]
        if won:
            same = [r for r in won if r["winner"][key] == r["winner"]["maverick"]]
            wide = [r for r in won if (r["winner"]["margin"] or 0) > MARGIN]
            line += (f"; same winner {len(same)}/{len(won)} docs, {sum(r in same for r in wide)}/{len(wide)} "
                     f"with Maverick margin > {MARGIN}")
        print(line)
    from chunkscope.ingest.reference import load_reference

    names = {n for n, _, _ in docs}
    for f in sorted(Path(c) for c in args.corpus):  # the language guard
        for p in sorted((f / "parsed").glob("*.json")):
            if p.stem not in names:
                res = get_pairs(load_reference(p))
                print(f"{p.stem[:34]:34} {res.backend}: {len(res.pairs)} pairs; {res.reason}")
    if args.speed:
        gdpr = next((d for n, d, _ in docs if "GDPR" in n), None)
        if gdpr is not None:
            sp = speed(gdpr, args.repeat)
            print(f"speed on GDPR ({sp['tokens']:,} tokens, {len(gdpr.text):,} characters), warm, no cache, best of "
                  f"{args.repeat}: old rules {sp['old']:.2f} s/100k tokens, default backend {sp['new']:.2f} s/100k "
                  f"tokens (ratio {sp['new'] / sp['old']:.2f}); the default backend with blis products "
                  f"{sp['blis']:.2f} s/100k tokens (ratio of numpy's to blis's {sp['new'] / sp['blis']:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if args.check_rules and points[shipped] != H.RULES else 0


if __name__ == "__main__":
    raise SystemExit(main())
