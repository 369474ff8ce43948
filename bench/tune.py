"""Tune sweep benchmark: a 14-point chunk-size sweep of ``recursive-1100`` on the GDPR dev document.

    .venv/bin/python bench/tune.py [--doc PATH] [--range 200:1500:100] [--coref precomputed|heuristic|none]

Three timings of the same sweep (``chunkscope.tune.sweep``, the code path of the Tune page and
``chunkscope sweep``):

1. cold: model load, the document's unit embeddings and coreference pairs, then 14 chunkings;
2. warm: embeddings, token counts and pairs warm, the tune cache cleared, so all 14
   configurations are really re-chunked and re-scored (what a new sweep costs in the app);
3. cached: the same sweep again; every configuration is a cache hit.

Prints the rows (the chunk size where the score stops gaining) and the times. RC uses the
corpus' precomputed mentions when present (the paper's setting), else the heuristic backend.
Skips cleanly (exit 0) without the corpus.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpus" / "clair-dev"
DEFAULT_DOC = CORPUS / "parsed" / "Norma (légal)_GDPR.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(DEFAULT_DOC))
    ap.add_argument("--range", default="200:1500:100")
    ap.add_argument("--chunker", default="recursive-1100")
    ap.add_argument("--coref", default=None, help="default: precomputed when the corpus has mentions, else heuristic")
    args = ap.parse_args()
    path = Path(args.doc)
    if not path.is_file():
        print(f"skip: {path} not present (the dev corpus is not available here)")
        return 0

    from chunkscope import tune
    from chunkscope.analysis import Resources, Settings
    from chunkscope.cli.sweep import header, row_line
    from chunkscope.ingest.reference import load_reference

    doc = load_reference(path)
    mentions = CORPUS / "mentions" / (path.stem + ".parquet")
    coref = args.coref or ("precomputed" if mentions.is_file() else "heuristic")
    settings = Settings(coref=coref, mentions=str(mentions) if coref == "precomputed" else None)
    values = tune.parse_range(args.range)
    from chunkscope.text.tokens import count_tokens

    print(f"{doc.name}: {len(doc.text):,} chars, {count_tokens(doc.text):,} tokens, {len(doc.blocks)} blocks; "
          f"coref {coref}; sweep {args.chunker} chunk_size over {len(values)} values")
    res = Resources()
    cache = tune.TuneCache()
    times = {}
    t = time.perf_counter()
    rows = tune.sweep(doc, args.chunker, "chunk_size", values, settings, res, cache=cache)
    times["cold"] = time.perf_counter() - t
    cache._results.clear()  # keep the pairs and the embeddings, re-chunk and re-score everything
    t = time.perf_counter()
    rows2 = tune.sweep(doc, args.chunker, "chunk_size", values, settings, res, cache=cache)
    times["warm"] = time.perf_counter() - t
    t = time.perf_counter()
    rows3 = tune.sweep(doc, args.chunker, "chunk_size", values, settings, res, cache=cache)
    times["cached"] = time.perf_counter() - t
    assert rows == rows2 == rows3, "a warm or cached sweep must give the same rows"

    print(header("chunk_size"))
    for r in rows:
        print(row_line("chunk_size", r))
    stop = tune.gain_stops(rows)
    best = max(rows, key=lambda r: r["score"] if r["score"] is not None else -1)
    print(f"best score {best['score']:.3f} at chunk_size={best['value']}; stops gaining (within 0.005) from "
          f"chunk_size={stop['value']}")
    front = tune.pareto_front(rows)
    print("Pareto-optimal (score vs tokens embedded): " + ", ".join(str(rows[i]["value"]) for i in front))
    n = len(values)
    print(f"time, {n}-point sweep: cold {times['cold']:.2f} s (model, unit embeddings, coref pairs), "
          f"warm {times['warm']:.2f} s ({times['warm'] / n * 1000:.0f} ms per configuration, re-chunked and "
          f"re-scored), cached {times['cached'] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
