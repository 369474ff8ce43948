"""Embedding backends on the dev corpus: speed, winner agreement and score correlation.

For each dev document and each configuration, runs the default analysis (every default chunker,
default candidates, heuristic coreference) with a warm model and records: the winner, every
chunking's score, the analysis time, and the time of ONE embedding pass over the document's
units with the same backend (the "one pass" the analysis is measured against). Configurations:

* ``old``: reference backend (sentence-transformers, torch, fp32) with per-chunking edge
  fragments embedded on their own — the analysis before this change;
* ``onnx``: ONNX Runtime fp32 (fragments embedded on their own, as ``old``);
* ``onnx-int8``: ONNX Runtime int8 (dynamic quantization): the default;
* ``int8-tok``: int8 with edge fragments pooled from the unit pass's token states (no model call).

Agreement is measured against ``old``: same winner, Spearman rho of the chunking scores.
Everything is measured in the same process and run, so the ratios hold on a loaded machine.

    .venv/bin/python bench/embedding_backends.py [--docs SUBSTR] [--configs old,onnx,onnx-int8] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))
CONFIGS = {"old": ("reference", "encode"), "onnx": ("onnx", "encode"), "onnx-int8": ("onnx-int8", "encode"),
           "int8-tok": ("onnx-int8", "tokens")}


def one_pass(doc, embedder) -> tuple[float, int]:
    """Seconds to embed the document's units once (cold text cache) and their model tokens."""
    from chunkscope.embeddings import document_units

    units = document_units(doc.text, doc.split_points, embedder)
    texts = [doc.text[u.start:u.end] for u in units if doc.text[u.start:u.end].strip()]
    embedder.clear_memory_cache()
    t0 = time.perf_counter()
    embedder.encode(texts)
    dt = time.perf_counter() - t0
    embedder.clear_memory_cache()
    return dt, sum(embedder.model_tokens(texts))


def run(doc, config: str) -> dict:
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.embeddings import SpanEmbedder

    backend, fragments = CONFIGS[config]
    res = Resources(None, "composed", backend=backend)
    t0 = time.perf_counter()
    emb = res.embedder()  # warm: loading is not part of the analysis time
    load_s = time.perf_counter() - t0
    pass_s, tokens = one_pass(doc, emb)
    emb.clear_memory_cache()

    def span_embedder(d, _res=res):  # the configuration's fragment mode
        key = (d.fingerprint, _res.mode)
        se = _res._span_embedders.get(key)
        if se is None:
            se = _res._span_embedders.put(key, SpanEmbedder(d, _res.embedder(), mode="composed", fragments=fragments))
        return se

    res.span_embedder = span_embedder  # type: ignore[method-assign]
    s = Settings(embedding_backend=backend)
    t0 = time.perf_counter()
    r = analyze(doc, s, res)
    total = time.perf_counter() - t0
    emb.clear_memory_cache()
    return {"winner": r.winner, "scores": {c.id: c.score for c in r.chunkings if c.ok}, "analysis_s": total,
            "pass_s": pass_s, "tokens": tokens, "load_s": load_s, "embed_s": r.timings.get("embed"),
            "stats": r.embedder.get("stats", {})}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default="", help="only documents whose name contains this")
    ap.add_argument("--configs", default="old,onnx,onnx-int8,int8-tok")
    ap.add_argument("--json", default="", help="write the raw results here")
    a = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"skip: no dev corpus at {CORPUS}")
        return 0
    from chunkscope.ingest import load_document

    files = sorted((CORPUS / "parsed").glob("*.json"), key=lambda p: p.stat().st_size)
    files = [f for f in files if a.docs in f.name]
    configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    out: dict = {}
    for f in files:
        doc = load_document(f)
        out[f.stem] = {}
        for c in configs:
            out[f.stem][c] = run(doc, c)
            x = out[f.stem][c]
            print(f"{f.stem[:40]:<40} {c:<10} winner {x['winner']:<18} analysis {x['analysis_s']:7.1f}s "
                  f"pass {x['pass_s']:7.1f}s ratio {x['analysis_s'] / max(x['pass_s'], 1e-9):5.2f} "
                  f"tok/s {x['tokens'] / max(x['pass_s'], 1e-9):7.0f}", flush=True)
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=1))
    print()
    print(f"{'document':<40} {'config':<10} {'same winner':>11} {'spearman':>8} {'an/pass':>7} {'tok/s':>7} "
          f"{'vs old':>7}")
    for name, by in out.items():
        ref = by.get("old")
        for c, x in by.items():
            same = rho = "-"
            if ref is not None:
                same = "yes" if x["winner"] == ref["winner"] else "NO"
                ids = sorted(set(ref["scores"]) & set(x["scores"]))
                pairs = [(ref["scores"][i], x["scores"][i]) for i in ids
                         if ref["scores"][i] is not None and x["scores"][i] is not None]
                if len(pairs) > 2:
                    rho = f"{spearmanr(*zip(*pairs)).statistic:.3f}"
            speed = x["analysis_s"] / ref["analysis_s"] if ref else float("nan")
            print(f"{name[:40]:<40} {c:<10} {same:>11} {rho:>8} {x['analysis_s'] / max(x['pass_s'], 1e-9):7.2f} "
                  f"{x['tokens'] / max(x['pass_s'], 1e-9):7.0f} {speed:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
