"""Benchmark of `analyze` (issue 4): everything measured in the same run, printed as ratios.

(a) total analysis time of all default chunkers in composed mode / time to embed the
    document's units once with the same model (target <= 1.5 on GDPR);
(b) speed-up of composed over exact mode (same chunkings, same model);
(c) time of SC + BI + RC for all chunkings (milliseconds).

Usage: python bench/analyze.py [--docs GDPR,Hamburg] [--skip-exact]
The model is loaded (and warmed) before any timing; embedding caches are in memory only and
cleared between measurements, so every timed embedding is real work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("CHUNKSCOPE_CACHE_DIR", None)  # no disk cache: measure real work
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))


def find(stem_part: str) -> Path | None:
    hits = sorted((CORPUS / "parsed").glob(f"*{stem_part}*.json"))
    return hits[0] if hits else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default="GDPR,Standards - Security",
                    help="comma-separated parts of dev-corpus file names")
    ap.add_argument("--skip-exact", action="store_true", help="skip (b), the slow exact-mode run")
    args = ap.parse_args()
    if not (CORPUS / "parsed").is_dir():
        print(f"dev corpus not found at {CORPUS}: skipping")
        return 0

    from chunkscope import metrics as M
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.coref import get_pairs
    from chunkscope.embeddings.spans import SpanEmbedder
    from chunkscope.ingest.reference import load_reference

    res = Resources(None, "composed")
    emb = res.embedder()
    emb.encode(["warm up the model"])  # load + first call outside the timings

    print(f"model: {emb.name}")
    print(f"{'document':<34} {'tokens':>7} {'units s':>8} {'analyze s':>9} {'(a) ratio':>9} "
          f"{'exact s':>8} {'(b) speed-up':>12} {'(c) SC+BI+RC ms':>15}")
    for part in [p.strip() for p in args.docs.split(",") if p.strip()]:
        path = find(part)
        if path is None:
            print(f"{part}: not in the dev corpus")
            continue
        doc = load_reference(path)
        mentions = CORPUS / "mentions" / (path.stem + ".parquet")
        settings = Settings(coref="precomputed", mentions=str(mentions) if mentions.exists() else None)
        if settings.mentions is None:
            settings = settings.with_(coref="none")

        # baseline: embed the document's units once (composed mode's only model work per document)
        emb.clear_memory_cache()
        t0 = time.perf_counter()
        SpanEmbedder(doc, emb, mode="composed").prepare()
        units_s = time.perf_counter() - t0

        # (a) the whole analysis, composed mode, every default chunker
        emb.clear_memory_cache()
        res.forget_documents()
        t0 = time.perf_counter()
        report = analyze(doc, settings, res)
        total_s = time.perf_counter() - t0

        # (c) the token metrics alone, all chunkings
        ok = [c for c in report.chunkings if c.ok]
        pairs = None
        if settings.mentions:
            pairs = M.pair_table(get_pairs(doc, backend="precomputed", mentions=settings.mentions).pairs)
        t0 = time.perf_counter()
        for c in ok:
            spans = [(ch.start, ch.end) for ch in c.chunks]
            M.size_compliance([ch.tokens for ch in c.chunks])
            M.block_integrity(spans, doc.split_points, len(doc.text))
            if pairs is not None:
                M.references_completeness(spans, pairs)
        token_ms = (time.perf_counter() - t0) * 1000

        # (b) exact mode on the same chunkings (ICC + DCC only: the embedding-dependent part)
        exact_s = speedup = None
        if not args.skip_exact:
            def embedding_metrics(mode: str) -> float:
                emb.clear_memory_cache()
                se = SpanEmbedder(doc, emb, mode=mode)
                t = time.perf_counter()
                se.prepare()
                for c in ok:
                    spans = [(ch.start, ch.end) for ch in c.chunks]
                    M.intrachunk_cohesion(spans, doc.split_points, se.embed)
                    M.document_contextual_coherence(spans, [ch.tokens for ch in c.chunks], se.embed, text=doc.text)
                return time.perf_counter() - t

            composed_s = embedding_metrics("composed")
            exact_s = embedding_metrics("exact")
            speedup = exact_s / composed_s if composed_s else None
        name = doc.name if len(doc.name) <= 34 else doc.name[:31] + "..."
        print(f"{name:<34} {report.document['tokens']:>7} {units_s:>8.2f} {total_s:>9.2f} {total_s / units_s:>9.2f} "
              f"{'-' if exact_s is None else f'{exact_s:.2f}':>8} {'-' if speedup is None else f'{speedup:.1f}x':>12} "
              f"{token_ms:>15.1f}")
        slow = sorted(ok, key=lambda c: -c.seconds)[:3]
        print("    slowest chunkings: " + ", ".join(f"{c.id} {c.seconds:.2f}s" for c in slow)
              + " | timings: " + ", ".join(f"{k} {v:.2f}s" for k, v in report.timings.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
