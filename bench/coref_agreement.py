"""How well do heuristic coreference pairs stand in for Maverick's when scoring RC?

For each English dev document: RC of several chunkings (recursive at 150/300/600/1100
tokens, pages; with ``--windows`` also fixed windows of 100/200/400/800 tokens) with the heuristic pairs and with the reference Maverick pairs; per document
the Spearman correlation of the two RC series and the mean |ΔRC|. Also pair-level
precision/recall against Maverick (a pair matches when the pronoun spans are equal and the
entity starts agree within ``--tol`` characters) and the heuristic's time per document.

    .venv/bin/python bench/coref_agreement.py [--corpus DIR] [--windows] [--tol 20] [--json OUT]

Targets (issue 4): Spearman >= 0.85 within a document, mean |ΔRC| <= 0.03.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chunkscope.chunkers.registry import run_chunker  # noqa: E402
from chunkscope.coref import Pair, get_pairs  # noqa: E402
from chunkscope.coref.heuristic import resolve  # noqa: E402
from chunkscope.document import Span  # noqa: E402
from chunkscope.ingest.reference import load_reference  # noqa: E402
from chunkscope.metrics import references_completeness  # noqa: E402

SIZES = (150, 300, 600, 1100)
WINDOWS = (100, 200, 400, 800)


def chunkings(doc, windows: bool = False) -> dict[str, list[Span]]:
    """Chunk spans per chunking id, from the chunker registry."""
    out: dict[str, list[Span]] = {}
    for size in SIZES:
        out[f"recursive-{size}"] = run_chunker(doc, "recursive-1100", {"chunk_size": size}).spans
    page = run_chunker(doc, "page")
    if page.status == "ok":
        out["page"] = page.spans
    if windows:  # structure-blind windows, cut anywhere (even mid-sentence)
        for n in WINDOWS:
            out[f"fixed-{n}"] = run_chunker(doc, "fixed-512", {"size": n, "overlap": 0}).spans
    return out


def rc(spans: list[Span], pairs: list[Pair]) -> float | None:
    return references_completeness(spans, pairs).value


def spearman(x: list[float], y: list[float]) -> float:
    if len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")  # a constant series has no ranking
    return float(spearmanr(x, y).statistic)


def pair_match(mine: list[Pair], ref: list[Pair], tol: int) -> tuple[float, float, float]:
    """(precision, recall, pronoun recall): pronoun span equal, entity starts within tol."""
    by_pro: dict[tuple[int, int], list[int]] = {}
    for p in ref:
        by_pro.setdefault((p.pronoun.start, p.pronoun.end), []).append(p.entity.start)
    hit = sum(any(abs(p.entity.start - e) <= tol for e in by_pro.get((p.pronoun.start, p.pronoun.end), []))
              for p in mine)
    pro_hit = sum((p.pronoun.start, p.pronoun.end) in by_pro for p in mine)
    prec = hit / len(mine) if mine else float("nan")
    rec = hit / len(ref) if ref else float("nan")
    return prec, rec, (pro_hit / len(ref) if ref else float("nan"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "clair-dev"))
    ap.add_argument("--tol", type=int, default=20, help="entity start tolerance in characters")
    ap.add_argument("--json", help="write the per-document results here")
    ap.add_argument("--verbose", action="store_true", help="print every RC")
    ap.add_argument("--windows", action="store_true",
                    help=f"add structure-blind windows of {', '.join(map(str, WINDOWS))} tokens to the chunkings")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    files = sorted((corpus / "parsed").glob("*.json"))
    if not files:
        print(f"no dev corpus at {corpus}", file=sys.stderr)
        return 1
    rows = []
    print(f"{'document':42} {'chunkings':>9} {'pairs H/M':>10} {'spearman':>8} {'mean|dRC|':>9} "
          f"{'P':>5} {'R':>5} {'proR':>5} {'sec':>6}")
    for f in files:
        doc = load_reference(f)
        mfile = corpus / "mentions" / (f.stem + ".parquet")
        ref = get_pairs(doc, "precomputed", mentions=mfile)
        if not ref.pairs:
            print(f"{f.stem[:42]:42} skipped: {ref.reason}")
            continue
        t0 = time.perf_counter()
        mine = resolve(doc.text)
        secs = time.perf_counter() - t0
        ids, rc_h, rc_m = [], [], []
        for cid, spans in chunkings(doc, args.windows).items():
            a, b = rc(spans, mine), rc(spans, ref.pairs)
            ids.append(cid)
            rc_h.append(a if a is not None else 1.0)
            rc_m.append(b)
            if args.verbose:
                print(f"    {cid:16} chunks={len(spans):4} RC heuristic={rc_h[-1]:.3f} maverick={b:.3f}")
        rho = spearman(rc_h, rc_m)
        mad = sum(abs(a - b) for a, b in zip(rc_h, rc_m)) / len(rc_m)
        p, r, pr = pair_match(mine, ref.pairs, args.tol)
        rows.append({"document": f.stem, "chunkings": ids, "pairs_heuristic": len(mine),
                     "pairs_maverick": len(ref.pairs), "rc_heuristic": rc_h, "rc_maverick": rc_m,
                     "spearman": rho, "mean_abs_diff": mad, "precision": p, "recall": r,
                     "pronoun_recall": pr, "seconds": secs, "chars": len(doc.text)})
        print(f"{f.stem[:42]:42} {len(rc_m):9} {len(mine):>4}/{len(ref.pairs):<5} {rho:8.3f} {mad:9.4f} "
              f"{p:5.2f} {r:5.2f} {pr:5.2f} {secs:6.2f}")
    valid = [x["spearman"] for x in rows if not math.isnan(x["spearman"])]
    n_nan = len(rows) - len(valid)
    if valid:
        print(f"\nmean Spearman {sum(valid) / len(valid):.3f} over {len(valid)} docs (min {min(valid):.3f})"
              + (f"; undefined for {n_nan} doc(s): one RC series is constant" if n_nan else ""))
    print(f"mean |dRC| {sum(x['mean_abs_diff'] for x in rows) / len(rows):.4f} "
          f"(max {max(x['mean_abs_diff'] for x in rows):.4f}) over {len(rows)} docs")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
