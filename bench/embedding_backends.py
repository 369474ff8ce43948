"""Embedding backends on the dev corpus: speed, winner agreement and score correlation.

For each dev document and each configuration, runs the default analysis (every default chunker,
default candidates, heuristic coreference) in a warm process (the model, spaCy's pipelines and
scipy loaded by a warm-up analysis of a small document first) and records: the winner, every
chunking's score, the analysis time, and the time of ONE embedding pass over the document's
units with the same backend (the "one pass" the analysis is measured against). Configurations:

* ``old``: reference backend (sentence-transformers, torch, fp32): the path every number before
  the ONNX backends used; agreement is measured against it;
* ``onnx``: ONNX Runtime fp32;
* ``onnx-int8``: ONNX Runtime int8 (dynamic quantization): the default;
* ``int8-tok``: int8 with edge fragments pooled from the unit pass's token states (no model call).

Agreement with ``old``: same winner, Spearman rho of the chunking scores. Everything is measured in
the same process and run, so the ratios hold on a loaded machine. ``old`` is the slow part (torch
fp32 on GDPR takes minutes): ``--json OUT`` saves every result, ``--old-json OUT`` of an earlier
run takes ``old``'s results from it for the documents it has, instead of running it again (its
scores do not change with the other backends), ``--skip-old`` leaves it out (no agreement).

    .venv/bin/python bench/embedding_backends.py [--docs SUBSTR[,SUBSTR]] [--configs old,onnx,onnx-int8]
        [--json OUT] [--old-json EARLIER] [--skip-old]
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
os.environ.pop("CHUNKSCOPE_CACHE_DIR", None)  # nothing cached on disk: every pass is a real one
CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))
CONFIGS = {"old": ("reference", "encode"), "onnx": ("onnx", "encode"), "onnx-int8": ("onnx-int8", "encode"),
           "int8-tok": ("onnx-int8", "tokens")}
WARM_UP = (b"# Warm up\n\nThe model loads once. It is then warm, and the analysis that follows measures no "
           b"loading. She said it to him.\n\n## A second block\n\nAnother block; the committee saw it and "
           b"approved it.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")


def one_pass(doc, embedder) -> tuple[float, int]:
    """Seconds to embed the document's units once (cold text cache) and their model tokens."""
    from chunkscope.embeddings.spans import document_units

    units = document_units(doc.text, doc.split_points, embedder)
    texts = [doc.text[u.start:u.end] for u in units if doc.text[u.start:u.end].strip()]
    embedder.clear_memory_cache()
    t0 = time.perf_counter()
    embedder.encode(texts)
    dt = time.perf_counter() - t0
    embedder.clear_memory_cache()
    return dt, sum(embedder.model_tokens(texts))


def run(doc, config: str, coref: str = "heuristic") -> dict:
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.embeddings.spans import SpanEmbedder
    from chunkscope.ingest import load_bytes
    from chunkscope.text import sentences

    backend, fragments = CONFIGS[config]
    res = Resources(None, "composed", backend=backend)

    def span_embedder(d, _res=res):  # the configuration's fragment mode
        key = (d.fingerprint, _res.mode)
        se = _res._span_embedders.get(key)
        if se is None:
            se = _res._span_embedders.put(key, SpanEmbedder(d, _res.embedder(), mode="composed", fragments=fragments))
        return se

    res.span_embedder = span_embedder  # type: ignore[method-assign]
    s = Settings(embedding_backend=backend, coref=coref)
    t0 = time.perf_counter()
    analyze(load_bytes(WARM_UP, "warm-up.md"), s, res)  # model, spaCy pipelines, scipy: loaded before timing
    load_s = time.perf_counter() - t0
    emb = res.embedder()
    pass_s, tokens = one_pass(doc, emb)
    emb.clear_memory_cache()
    res.forget_documents()
    sentences.clear_cache()  # the pass's units segmented the document: the analysis does it again
    t0 = time.perf_counter()
    r = analyze(doc, s, res)
    total = time.perf_counter() - t0
    emb.clear_memory_cache()
    res.forget_documents()
    return {"winner": r.winner, "scores": {c.id: c.score for c in r.chunkings if c.ok}, "analysis_s": total,
            "pass_s": pass_s, "tokens": tokens, "load_s": load_s, "timings": r.timings,
            "stats": r.embedder.get("stats", {})}


def agreement(x: dict, ref: dict | None) -> tuple[str, str]:
    if ref is None:
        return "–", "–"
    same = "yes" if x["winner"] == ref["winner"] else "NO"
    ids = sorted(set(ref["scores"]) & set(x["scores"]))
    pairs = [(ref["scores"][i], x["scores"][i]) for i in ids
             if ref["scores"][i] is not None and x["scores"][i] is not None]
    rho = f"{spearmanr(*zip(*pairs)).statistic:.3f}" if len(pairs) > 2 else "–"
    return same, rho


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", default="", help="only documents whose name contains one of these (comma-separated)")
    ap.add_argument("--configs", default="old,onnx,onnx-int8")
    ap.add_argument("--json", default="", help="write the raw results here")
    ap.add_argument("--old-json", default="", help="take the 'old' results from this earlier --json output")
    ap.add_argument("--skip-old", action="store_true", help="do not run 'old' (no agreement unless --old-json)")
    ap.add_argument("--coref", default="heuristic", help="coreference backend of every run (default heuristic)")
    a = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"skip: no dev corpus at {CORPUS}")
        return 0
    from chunkscope.ingest import load_document

    files = sorted((CORPUS / "parsed").glob("*.json"), key=lambda p: p.stat().st_size)
    wanted = [d for d in a.docs.split(",") if d]
    files = [f for f in files if not wanted or any(d in f.name for d in wanted)]
    configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    earlier = json.loads(Path(a.old_json).read_text()) if a.old_json else {}
    if a.skip_old:
        configs = [c for c in configs if c != "old"]
    out: dict = {}
    t_all = time.perf_counter()
    for f in files:
        doc = load_document(f)
        out[f.stem] = {}
        if earlier.get(f.stem, {}).get("old"):
            out[f.stem]["old"] = earlier[f.stem]["old"]  # measured by an earlier run: not again
        for c in configs:
            if c in out[f.stem]:
                continue
            out[f.stem][c] = run(doc, c, a.coref)
            x = out[f.stem][c]
            print(f"{f.stem[:40]:<40} {c:<10} winner {x['winner']:<18} analysis {x['analysis_s']:7.1f}s "
                  f"pass {x['pass_s']:7.1f}s ratio {x['analysis_s'] / max(x['pass_s'], 1e-9):5.2f} "
                  f"tok/s {x['tokens'] / max(x['pass_s'], 1e-9):7.0f}", flush=True)
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=1))
    print(f"\n{len(files)} documents in {time.perf_counter() - t_all:.0f} s, coreference {a.coref}. an/pass = whole analysis / one "
          "embedding pass of the document's units (same backend, warm); vs old = analysis time / old's.\n")
    print("| document | config | winner | same winner | Spearman | tokens/s | an/pass | analysis s | vs old |")
    print("|---|---|---|:-:|---:|---:|---:|---:|---:|")
    for name, by in out.items():
        ref = by.get("old")
        for c, x in by.items():
            same, rho = agreement(x, ref) if c != "old" else ("–", "–")
            speed = f"{x['analysis_s'] / ref['analysis_s']:.2f}" if ref else "–"
            print(f"| {name.split('_', 1)[-1][:32]} | {c} | {x['winner']} | {same} | {rho} | "
                  f"{x['tokens'] / max(x['pass_s'], 1e-9):.0f} | {x['analysis_s'] / max(x['pass_s'], 1e-9):.2f} | "
                  f"{x['analysis_s']:.1f} | {speed} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
