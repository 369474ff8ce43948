"""Composed vs exact embedding mode on the dev corpus.

For each dev document, runs a set of chunkers, scores every chunking with ICC and DCC in both
embedding modes (same model), and reports how well ``composed`` ranks the chunkings like
``exact``: Spearman rho and pairwise ranking agreement (share of chunking pairs ordered the
same way; ties in either mode left out) of ICC, DCC and the mean score (RC from the reference
mentions, BI, SC, ICC, DCC), plus whether both modes pick the same best candidate. Timings: the
time to embed the document's units once (cold cache), composed ICC+DCC for all chunkings after
that, and exact ICC+DCC per chunking (cold cache).

Exact mode on the large GDPR document is slow on CPU, so by default it only gets composed
timings (``--exact-max-chars``). Skips cleanly when ../shared/corpus is absent.

    .venv/bin/python bench/embedding_modes.py [--docs SUBSTR] [--exact-max-chars N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from itertools import combinations
from pathlib import Path

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))
CHUNKERS = ["page", "page+pp", "recursive-1100", "recursive-1100+pp", "recursive-600", "recursive-600+pp",
            "langchain-default", "langchain-1100", "fixed-512", "sentence-5", "structure"]
CANDIDATES = ["page+pp", "recursive-1100+pp", "recursive-600+pp"]


def spearman(a, b):
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 3:
        return None
    xs, ys = zip(*pairs)
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None  # a constant series has no ranking
    return float(spearmanr(xs, ys).statistic)


def pairwise_agreement(a, b, eps=1e-9):
    agree = total = 0
    for i, j in combinations(range(len(a)), 2):
        if None in (a[i], a[j], b[i], b[j]):
            continue
        da, db = a[i] - a[j], b[i] - b[j]
        if abs(da) <= eps or abs(db) <= eps:
            continue
        total += 1
        agree += (da > 0) == (db > 0)
    return (agree / total if total else None), total


def reference_pairs(stem):
    import pandas as pd

    path = CORPUS / "mentions" / f"{stem}.parquet"
    if not path.exists():
        return []
    df = pd.read_parquet(path)
    if not len(df):
        return []
    return [((int(e[0]), int(e[1]) + 1), (int(p[0]), int(p[1]) + 1)) for e, p in df["entity_pron_mentions"].iloc[0]]


def fmt(x, nd=3):
    return "-" if x is None else f"{x:.{nd}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", default="", help="only documents whose name contains this")
    ap.add_argument("--exact-max-chars", type=int, default=150_000, help="skip exact mode above this size")
    ap.add_argument("--json", default="", help="write the measurements here")
    ap.add_argument("--truncated", action="store_true",
                    help="also score composed mode on spans cut to the model's maximum length (what exact mode "
                         "sees), to separate composition error from truncation")
    args = ap.parse_args()
    files = sorted((CORPUS / "parsed").glob("*.json")) if (CORPUS / "parsed").is_dir() else []
    files = [f for f in files if args.docs in f.stem]
    if not files:
        print(f"skipped: dev corpus not found at {CORPUS}")
        return 0

    from chunkscope import metrics as M
    from chunkscope.chunkers import registry
    from chunkscope.document import Span
    from chunkscope.embeddings.embedder import Embedder
    from chunkscope.embeddings.spans import SpanEmbedder
    from chunkscope.ingest.reference import load_reference
    from chunkscope.text.tokens import count_many

    emb = Embedder.load(cache_dir=None)
    # one-off loads (sentence segmenter, tokenizers) stay out of the timings
    from chunkscope.embeddings.spans import document_units

    document_units("Warm up. The segmenter loads once.\n\nSecond block.", [33], emb)
    emb.encode(["warm up the model"])
    print(f"model {emb.name} (max {emb.max_tokens} tokens), torch threads: {__import__('torch').get_num_threads()}")
    rows, out = [], []
    for f in files:
        doc = load_reference(f)
        pairs = reference_pairs(f.stem)
        chunkings = {}
        for cid in CHUNKERS:
            try:
                res = registry.run_chunker(doc, cid, {})
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"  {cid}: {type(exc).__name__}: {exc}")
                continue
            if res.status == "ok" and res.spans:
                spans = list(res.spans)
                chunkings[cid] = (spans, count_many([doc.text[s.start:s.end] for s in spans]))
        base = {}
        for cid, (spans, toks) in chunkings.items():
            base[cid] = {
                "SC": M.size_compliance(toks).value,
                "BI": M.block_integrity(spans, doc.split_points, len(doc.text)).value,
                "RC": M.references_completeness(spans, pairs).value,
            }

        def truncating(se):
            limit = emb.content_limit

            def embed(spans):
                cut = []
                offs = emb.token_offsets([doc.text[s.start:s.end] for s in spans])
                for s, o in zip(spans, offs):
                    cut.append(Span(s.start, s.start + o[limit - 1][1]) if len(o) > limit else s)
                return se.embed(cut)

            return embed

        def run(mode, truncate=False):
            emb.clear_memory_cache()
            se = SpanEmbedder(doc, emb, mode=mode)
            t0 = time.perf_counter()
            se.prepare()
            t_units = time.perf_counter() - t0
            fn = truncating(se) if truncate else se.embed
            vals, per = {}, {}
            for cid, (spans, toks) in chunkings.items():
                t1 = time.perf_counter()
                icc = M.intrachunk_cohesion(spans, doc.split_points, fn).value
                dcc = M.document_contextual_coherence(spans, toks, fn, text=doc.text).value
                per[cid] = time.perf_counter() - t1
                m = {**base[cid], "ICC": icc, "DCC": dcc}
                vals[cid] = {**m, "score": M.score(m)}
            return vals, t_units, per, se.stats, se.warnings

        comp, t_units, per_c, st_c, _ = run("composed")
        rec = {"doc": f.stem, "chars": len(doc.text), "chunkings": len(chunkings), "units": st_c.get("units"),
               "t_units": t_units, "t_composed_all": sum(per_c.values()), "composed": comp}
        if len(doc.text) <= args.exact_max_chars:
            exact, _, per_e, st_e, warn = run("exact")
            rec.update(exact=exact, t_exact_all=sum(per_e.values()), t_exact_per_chunking=per_e, exact_warnings=warn)
            ids = list(chunkings)
            for key in ("ICC", "DCC", "score"):
                a = [comp[c][key] for c in ids]
                b = [exact[c][key] for c in ids]
                rec[f"rho_{key}"] = spearman(a, b)
                rec[f"pair_{key}"], rec[f"npairs_{key}"] = pairwise_agreement(a, b)
            cands = [c for c in CANDIDATES if c in ids]

            def best(v):
                sc = [(v[c]["score"] or -1, -len(chunkings[c][0]), c) for c in cands]
                return max(sc)[2] if sc else None

            rec["winner_composed"], rec["winner_exact"] = best(comp), best(exact)
            if args.truncated:
                trunc = run("composed", truncate=True)[0]
                rec["composed_truncated"] = trunc
                for key in ("ICC", "DCC", "score"):
                    a = [trunc[c][key] for c in ids]
                    b = [exact[c][key] for c in ids]
                    rec[f"trunc_rho_{key}"] = spearman(a, b)
                    rec[f"trunc_pair_{key}"] = pairwise_agreement(a, b)[0]
                print("  composed-truncated vs exact: " + ", ".join(
                    f"{k} rho {fmt(rec[f'trunc_rho_{k}'], 2)} p {fmt(rec[f'trunc_pair_{k}'], 2)}"
                    for k in ("ICC", "DCC", "score")), flush=True)
        out.append(rec)
        rows.append(rec)
        print(f"done {f.stem[:50]}: {len(chunkings)} chunkings, units {t_units:.1f}s", flush=True)

    print()
    hdr = (f"{'document':34} {'chars':>7} {'n':>3} {'rhoICC':>6} {'rhoDCC':>6} {'rhoS':>6} {'pICC':>5} {'pDCC':>5} "
           f"{'pS':>5} {'win=':>4} {'units s':>7} {'comp s':>6} {'exact s':>7} {'x':>5}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        has = "exact" in r
        speed = (r["t_exact_all"] / (r["t_units"] + r["t_composed_all"])) if has else None
        print(f"{r['doc'][:34]:34} {r['chars']:>7} {r['chunkings']:>3} {fmt(r.get('rho_ICC'), 2):>6} "
              f"{fmt(r.get('rho_DCC'), 2):>6} {fmt(r.get('rho_score'), 2):>6} {fmt(r.get('pair_ICC'), 2):>5} "
              f"{fmt(r.get('pair_DCC'), 2):>5} {fmt(r.get('pair_score'), 2):>5} "
              f"{('yes' if r.get('winner_composed') == r.get('winner_exact') else 'no') if has else '-':>4} "
              f"{r['t_units']:>7.1f} {r['t_composed_all']:>6.2f} {fmt(r.get('t_exact_all'), 1):>7} {fmt(speed, 1):>5}")
    ex = [r for r in rows if "exact" in r]
    if ex:
        def mean(key):
            v = [r[key] for r in ex if r.get(key) is not None]
            return sum(v) / len(v) if v else None

        print(f"{'mean (exact-mode docs)':34} {'':>7} {'':>3} {fmt(mean('rho_ICC'), 2):>6} {fmt(mean('rho_DCC'), 2):>6} "
              f"{fmt(mean('rho_score'), 2):>6} {fmt(mean('pair_ICC'), 2):>5} {fmt(mean('pair_DCC'), 2):>5} "
              f"{fmt(mean('pair_score'), 2):>5}")
        # pooled pairwise agreement over all documents
        for key in ("ICC", "DCC", "score"):
            agree = sum((r[f"pair_{key}"] or 0) * r[f"npairs_{key}"] for r in ex)
            tot = sum(r[f"npairs_{key}"] for r in ex)
            print(f"pooled pairwise agreement {key}: {fmt(agree / tot if tot else None)} over {tot} pairs")
    print("columns: rho = Spearman composed vs exact across the document's chunkings; p = pairwise ranking "
          "agreement; win= same best candidate; units s = embed the document's units once (cold); comp s = composed "
          "ICC+DCC of all chunkings after that; exact s = exact ICC+DCC of all chunkings (cold); x = exact / composed time")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
