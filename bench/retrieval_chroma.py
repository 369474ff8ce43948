"""Retrieval check benchmark (issue 14): Chroma's protocol on its general evaluation set, the
speed target, the self-test's agreement with real questions, and whether the intrinsic metrics
predict budgeted recall.

Data: ../shared/corpus/chroma-general (Chroma's "Evaluating Chunking Strategies for Retrieval",
Smith & Troynikov 2024, github.com/brandonstarxel/chunking_evaluation, MIT licence).

Parts (``--parts``, default all):
* ``chroma``: all five corpora in ONE index (chunks never cross corpora), 472 questions, top 5
  (and Chroma's precision Ω), per chunking: BM25, MiniLM exact (each chunk's text embedded, as
  Chroma does) and MiniLM composed; also recall at a 1000-token budget. Prints the table and
  the BM25 speed ratio (472 questions × 10 chunkings < 10 s after chunking).
* ``selftest``: the self-test's proxy questions on the same index (as many per corpus as the
  real set has); Spearman/Kendall between the chunking rankings by real and by proxy questions.
* ``corr``: intrinsic metrics (analyze per corpus) vs budgeted recall across chunkings.
* ``dev``: three dev documents: budgeted-recall leaderboard with the self-test (and with
  tests/fixtures/retrieval/hamburg_questions.jsonl for the Hamburg paper); correlations.

Usage: python bench/retrieval_chroma.py [--parts chroma,selftest,corr,dev] [--exact-chunkers ...] [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHARED = ROOT.parent / "shared" / "corpus"
CHROMA = Path(os.environ.get("CHUNKSCOPE_CHROMA_CORPUS", SHARED / "chroma-general"))
DEV = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", SHARED / "clair-dev"))
CORPORA = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
FIXED = {f"fixed-{s}-{o}": {"chunker": "fixed-512", "params": {"size": s, "overlap": o}}
         for s, o in ((800, 400), (400, 200), (400, 0), (200, 0), (250, 125))}
OURS = ["recursive-1100+pp", "recursive-600+pp", "recursive-1100", "recursive-600", "langchain-1100",
        "langchain-default", "sentence-5", "structure", "fixed-512", "page+pp"]
METRICS = ("RC", "ICC", "DCC", "BI", "SC")
DEV_DOCS = ("Discussion Paper Hamburg", "Standards - Security", "Council of Europe")


def spearman(a: list[float], b: list[float]) -> float | None:
    from scipy.stats import spearmanr

    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 3:
        return None
    r = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return None if r != r else float(r)


def kendall(a: list[float], b: list[float]) -> float | None:
    from scipy.stats import kendalltau

    r = kendalltau(a, b).statistic
    return None if r != r else float(r)


def load_chroma():
    import chunkscope
    from chunkscope.retrieval.questions import read_questions_file

    docs, texts, offs, pos = {}, [], {}, 0
    for name in CORPORA:
        d = chunkscope.load(str(CHROMA / "corpora" / f"{name}.md"))
        docs[name] = d
        offs[name] = pos
        texts.append(d.text)
        pos += len(d.text) + 2
    combined = "\n\n".join(texts)
    qsets = {n: read_questions_file(CHROMA / "questions_df.csv", docs[n].text, n) for n in CORPORA}
    return docs, combined, offs, qsets


def merge_questions(qsets: dict, offs: dict, source: str):
    from chunkscope.retrieval.questions import Question, QuestionSet

    out = QuestionSet([], source)
    for name, qs in qsets.items():
        for q in qs.questions:
            out.questions.append(Question(q.text, [(a + offs[name], b + offs[name]) for a, b in q.evidence],
                                          q.source, f"{name}:{q.id}"))
        out.problems.extend(f"{name}: {p}" for p in qs.problems)
    out.rows = len(out.questions)
    return out


def analyze_corpora(docs: dict, ids: list[str], resources, with_metrics: bool, coref: str = "heuristic") -> dict[str, Any]:
    """Per corpus: the chunkings (analyze when metrics are wanted, else chunk_one only)."""
    from chunkscope.analysis import Settings, analyze, chunk_one, chunking_plan

    s = Settings(chunkers=tuple(ids), candidates=(), variants=dict(FIXED), coref=coref)
    out = {}
    for name, d in docs.items():
        t0 = time.perf_counter()
        if with_metrics == "structure":  # SC and BI only (no model): what a loaded machine affords
            from chunkscope.analysis.structure import structure_metrics

            rows = [chunk_one(d, cid, base, ov, resources) for cid, base, ov in chunking_plan(s)]
            for r in rows:
                if r.ok:
                    r.metrics.update({m: v.value for m, v in structure_metrics(d, r, s).items()})
            out[name] = rows
        elif with_metrics:
            out[name] = analyze(d, s, resources).chunkings
        else:
            out[name] = [chunk_one(d, cid, base, ov, resources) for cid, base, ov in chunking_plan(s)]
        print(f"  {name}: {len(out[name])} chunkings in {time.perf_counter() - t0:.1f}s", flush=True)
    return out


def combined_chunkings(per: dict, offs: dict, ids: list[str]):
    from chunkscope.retrieval.run import Chunking

    out = []
    for cid in ids:
        spans, toks = [], []
        for name, rows in per.items():
            c = next((r for r in rows if r.id == cid), None)
            if c is None or not c.ok:
                break
            spans += [(r.start + offs[name], r.end + offs[name]) for r in c.chunks]
            toks += [r.tokens for r in c.chunks]
        else:
            out.append(Chunking(cid, spans, toks))
    return out


def composed_dense(docs, offs, resources):
    import numpy as np

    from chunkscope.retrieval.retrievers import Dense

    ses = {n: resources.span_embedder(d) for n, d in docs.items()}
    order = sorted(offs, key=offs.get)

    def embed(spans):
        out = np.zeros((len(spans), resources.embedder().dim), dtype=np.float32)
        for n in order:
            idx = [i for i, (a, b) in enumerate(spans) if offs[n] <= a < offs[n] + len(docs[n].text) + 2]
            if idx:
                out[idx] = ses[n].embed([(spans[i][0] - offs[n], spans[i][1] - offs[n]) for i in idx])
        return out

    return Dense(embed, resources.embedder().encode, "all-MiniLM-L6-v2 composed")


def exact_dense(combined: str, resources):
    from chunkscope.embeddings.spans import SpanEmbedder
    from chunkscope.retrieval.retrievers import Dense

    se = SpanEmbedder(combined, resources.embedder(), mode="exact")
    return Dense(se.embed, resources.embedder().encode, "all-MiniLM-L6-v2 exact")


def row(c) -> dict[str, Any]:
    a, b = c.at_k, c.at_budget
    return {"recall": a["recall"], "recall_std": a["recall_std"], "precision": a["precision"], "iou": a["iou"],
            "omega": c.precision_omega_ideal, "recall_budget": b["recall"], "recall_budget_std": b["recall_std"],
            "chunks": c.chunks, "mean_tokens": c.mean_tokens}


def p(v, d=1):
    return "  -  " if v is None else f"{100 * v:.{d}f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="chroma,selftest,corr,dev")
    ap.add_argument("--exact-chunkers", default=",".join([*FIXED, "recursive-1100+pp", "recursive-600+pp"]))
    ap.add_argument("--no-dense", action="store_true")
    ap.add_argument("--structure-only", action="store_true",
                    help="corr part: SC and BI only (no embedding model, no coreference)")
    ap.add_argument("--coref", default="heuristic", help="coreference backend for RC in the corr part (none: faster)")
    ap.add_argument("--selftest-n", type=int, default=30, help="self-test questions per dev document")
    ap.add_argument("--out", default=str(ROOT / "bench" / "retrieval_results.json"))
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if not CHROMA.is_dir() and parts & {"chroma", "selftest", "corr"}:
        print(f"no Chroma corpus at {CHROMA}: skipping chroma/selftest/corr")
        parts -= {"chroma", "selftest", "corr"}
    from chunkscope.analysis import Resources
    from chunkscope.retrieval.run import Config, evaluate

    results: dict[str, Any] = json.loads(Path(args.out).read_text()) if Path(args.out).is_file() else {}
    resources = Resources(None, "composed")
    ids = [*OURS, *FIXED]
    if parts & {"chroma", "selftest", "corr"}:
        docs, combined, offs, qsets = load_chroma()
        real = merge_questions(qsets, offs, "file")
        print(f"Chroma general set: {len(real.questions)} questions, {len(combined)} characters, "
              f"{len(real.problems)} problems", flush=True)
        with_metrics: Any = ("structure" if args.structure_only else True) if "corr" in parts else False
        print(("analyze" if with_metrics else "chunk") + " per corpus:", flush=True)
        t1 = time.perf_counter()
        per = analyze_corpora(docs, ids, resources, with_metrics, args.coref)
        chunk_s = time.perf_counter() - t1
        chs = combined_chunkings(per, offs, ids)
        cfg = Config(k=5, budget=1000, per_question=False)
        # --- speed: BM25, 472 questions x 10 chunkings, after chunking
        ten = [c for c in chs if c.id in [*FIXED, *OURS[:5]]][:10]
        t2, c2 = time.perf_counter(), time.process_time()
        evaluate(combined, ten, real, cfg)
        bm25_10, cpu_10 = time.perf_counter() - t2, time.process_time() - c2
        print(f"speed: BM25 {len(real.questions)} questions x {len(ten)} chunkings: {bm25_10:.2f}s wall, "
              f"{cpu_10:.2f}s CPU (target < 10 s; load average {os.getloadavg()[0]:.1f}; chunking them took "
              f"{chunk_s:.1f}s{' incl. metrics' if with_metrics else ''})")
        results["speed"] = {"questions": len(real.questions), "chunkings": len(ten), "bm25_s": bm25_10,
                            "bm25_cpu_s": cpu_10, "load": os.getloadavg()[0], "chunk_s": chunk_s}
        table: dict[str, dict[str, Any]] = {}
        bm = evaluate(combined, chs, real, cfg)
        table["bm25"] = {c.id: row(c) for c in bm.chunkings}
        results["chroma"] = table
        if "corr" in parts:  # early, before the slow dense runs
            results["chroma_corr"] = correlations(per, {c.id: c.at_budget["recall"] for c in bm.chunkings},
                                                  "Chroma corpora (BM25 recall@1000)")
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
        if "chroma" in parts and not args.no_dense:
            t3 = time.perf_counter()
            comp = evaluate(combined, chs, real, Config(retriever="dense", k=5, budget=1000, per_question=False),
                            composed_dense(docs, offs, resources))
            table["minilm_composed"] = {c.id: row(c) for c in comp.chunkings}
            print(f"dense composed: {time.perf_counter() - t3:.1f}s", flush=True)
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
            ex_ids = [x.strip() for x in args.exact_chunkers.split(",") if x.strip()]
            t4 = time.perf_counter()
            ex = evaluate(combined, [c for c in chs if c.id in ex_ids], real,
                          Config(retriever="dense", k=5, budget=1000, per_question=False), exact_dense(combined, resources))
            table["minilm_exact"] = {c.id: row(c) for c in ex.chunkings}
            print(f"dense exact ({len(ex.chunkings)} chunkings): {time.perf_counter() - t4:.1f}s", flush=True)
        results["chroma"] = table
        print("\nChroma protocol (top 5; x100): recall ± std, precision, IoU, ideal precision Ω (retriever-independent); "
              "recall@1000 tokens")
        print(f"{'chunking':<20} {'chunks':>6} {'tok':>5} | " + " | ".join(f"{r:<38}" for r in table))
        for c in chs:
            cells = []
            for r in table:
                x = table[r].get(c.id)
                cells.append("" if x is None else f"R {p(x['recall'])}±{p(x['recall_std'])} P {p(x['precision'])} "
                             f"IoU {p(x['iou'])} Ω {p(x['omega'])} B {p(x['recall_budget'])}")
            x0 = table["bm25"][c.id]
            print(f"{c.id:<20} {x0['chunks']:>6} {x0['mean_tokens']:>5.0f} | " + " | ".join(f"{x:<38}" for x in cells))
        if "selftest" in parts:
            from chunkscope.retrieval.selftest import self_test

            proxy = merge_questions({n: self_test(docs[n], len(qsets[n].questions)) for n in CORPORA}, offs,
                                    "self-test")
            st = evaluate(combined, chs, proxy, cfg)
            agree = {}
            for key, get in (("recall@budget", lambda c: c.at_budget["recall"]), ("recall@5", lambda c: c.at_k["recall"]),
                             ("iou@5", lambda c: c.at_k["iou"])):
                a = [get(bm.get(c.id)) for c in chs]
                b = [get(st.get(c.id)) for c in chs]
                agree[key] = {"spearman": spearman(a, b), "kendall": kendall(a, b)}
            # dense too (composed), when run
            if "minilm_composed" in table:
                comp_st = evaluate(combined, chs, proxy, Config(retriever="dense", k=5, budget=1000, per_question=False),
                                   composed_dense(docs, offs, resources))
                a = [table["minilm_composed"][c.id]["recall_budget"] for c in chs]
                b = [comp_st.get(c.id).at_budget["recall"] for c in chs]
                agree["recall@budget (dense composed)"] = {"spearman": spearman(a, b), "kendall": kendall(a, b)}
            results["selftest_agreement"] = {"questions": len(proxy.questions), **agree,
                                             "proxy_recall_budget": {c.id: st.get(c.id).at_budget["recall"] for c in chs}}
            print(f"\nself-test ({len(proxy.questions)} proxy questions) vs the 472 real ones, ranking of "
                  f"{len(chs)} chunkings (BM25):")
            for k2, v in agree.items():
                print(f"  {k2:<32} Spearman {v['spearman']:+.2f}  Kendall {v['kendall']:+.2f}")
        if "corr" in parts:
            results["chroma_corr"] = correlations(per, {c.id: c.at_budget["recall"] for c in bm.chunkings},
                                                  "Chroma corpora (BM25 recall@1000)")
            results["chroma_corr_250"] = correlations(
                per, {c.id: next(p["recall"] for p in c.curve if p["budget"] == 250) for c in bm.chunkings},
                "Chroma corpora (BM25 recall@250)")
            results["chroma_corr_k5"] = correlations(per, {c.id: c.at_k["recall"] for c in bm.chunkings},
                                                     "Chroma corpora (BM25 recall@5)")
            Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    if "dev" in parts and (DEV / "parsed").is_dir():
        results["dev"] = dev_part(resources, args.selftest_n)
    Path(args.out).write_text(json.dumps(results, indent=1, default=str))
    print(f"\nwrote {args.out}")
    return 0


def correlations(per: dict, recall: dict[str, float], what: str) -> dict[str, Any]:
    """Spearman across chunkings between each metric / the adaptive score (means over the
    documents) and budgeted recall."""
    from chunkscope.metrics import score

    ids = sorted(recall)
    means: dict[str, dict[str, float | None]] = {}
    for cid in ids:
        vals: dict[str, list[float]] = {m: [] for m in (*METRICS, "score")}
        for rows in per.values():
            c = next((r for r in rows if r.id == cid and r.ok), None)
            if c is None:
                continue
            for m in METRICS:
                if c.metrics.get(m) is not None:
                    vals[m].append(c.metrics[m])
            sc = score(c.metrics)
            if sc is not None:
                vals["score"].append(sc)
        means[cid] = {m: (sum(v) / len(v) if v else None) for m, v in vals.items()}
    out = {}
    print(f"\nSpearman across {len(ids)} chunkings, {what}:")
    for m in (*METRICS, "score"):
        r = spearman([means[c][m] for c in ids], [recall[c] for c in ids])
        out[m] = r
        print(f"  {m:<6} {'  -  ' if r is None else f'{r:+.2f}'}")
    return {"spearman": out, "means": means, "recall": recall}


def dev_part(resources, n: int) -> dict[str, Any]:
    import chunkscope
    from chunkscope.analysis import Settings, analyze
    from chunkscope.retrieval.questions import read_questions_file
    from chunkscope.retrieval.run import Config, chunkings_from_report, evaluate, leaderboard
    from chunkscope.retrieval.selftest import self_test

    out: dict[str, Any] = {}
    per_all: dict[str, Any] = {}
    pooled_metric: dict[str, list] = {m: [] for m in (*METRICS, "score")}
    pooled_recall: list[float] = []
    qfile = ROOT / "tests" / "fixtures" / "retrieval" / "hamburg_questions.jsonl"
    for part in DEV_DOCS:
        path = sorted((DEV / "parsed").glob(f"*{part}*.json"))[0]
        d = chunkscope.load(str(path))
        t0 = time.perf_counter()
        rep = analyze(d, Settings(chunkers=tuple([*OURS, "semantic+pp"]), variants={}), resources)
        chs = chunkings_from_report(rep)
        sets = {"self-test": self_test(d, n)}
        if part.startswith("Discussion") and qfile.is_file():
            sets["questions file"] = read_questions_file(qfile, d.text, d.name)
        doc_out = {}
        for label, qs in sets.items():
            res = evaluate(d.text, chs, qs, Config(per_question=False), None, d.language)
            lb = leaderboard(res)
            doc_out[label] = {"questions": len(qs.questions), "problems": qs.problems, "leaderboard": lb,
                              "curve": {c.id: c.curve for c in res.chunkings}}
            print(f"\n{d.name} — {label} ({len(qs.questions)} questions), BM25, budget 1000 tokens:")
            for r in lb:
                print(f"  {r['chunking']:<20} chunks {r['chunks']:>4} tok {r['mean tokens']:>6.0f}  "
                      f"R@1000 {r['recall@budget']:.3f} ± {r['± std']:.3f}  full {r['full@budget']:.2f}  "
                      f"R@5 {r['recall@5']:.3f}  IoU@5 {r['IoU@5']:.3f}")
            if label == "self-test":
                rec = {c.id: {p["budget"]: p["recall"] for p in c.curve} for c in res.chunkings}
                per_all[d.name] = rec
                for c in rep.chunkings:
                    if c.ok and c.id in rec:
                        for m in METRICS:
                            pooled_metric[m].append(c.metrics.get(m))
                        pooled_metric["score"].append(c.score)
                        pooled_recall.append(rec[c.id])
        out[d.name] = doc_out
        print(f"  ({time.perf_counter() - t0:.1f}s)", flush=True)
    corr = {}
    for b in (250, 1000):
        rb = [r[b] for r in pooled_recall]
        corr[b] = {m: spearman(v, rb) for m, v in pooled_metric.items()}
        print(f"\nSpearman, dev documents pooled ({len(rb)} document × chunking pairs), self-test recall@{b}:")
        for m, r in corr[b].items():
            print(f"  {m:<6} {'  -  ' if r is None else f'{r:+.2f}'}")
    out["_correlations"] = corr
    return out


if __name__ == "__main__":
    sys.exit(main())
