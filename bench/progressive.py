"""Time to the first answer: provisional results, cold starts, a 400k-token document.

Measured in one run (ratios hold on a loaded machine):

1. GDPR, warm process (model and spaCy loaded): seconds from ``analyze`` to the first
   provisional snapshot (SC, BI, problems known) and to the complete report, with the default
   backend; and the complete report with the old path (reference backend, sentence-transformers
   fp32) for the ratio.
2. GDPR, cold: ``chunkscope analyze --progress`` in a fresh process; seconds until the
   provisional leaderboard appears on stderr, and until the process ends.
3. Cold start on a 40–85k-character dev document: ``chunkscope analyze`` in a fresh process vs a
   plain cold fp32 pass (a fresh process that imports sentence-transformers, loads the bundled
   MiniLM and encodes the document's sentences).
4. A ~400k-token document (dev documents concatenated): provisional seconds and peak RSS of a
   fresh process (``--full``: the complete analysis too).

    .venv/bin/python bench/progressive.py [--skip gdpr-warm,gdpr-cold,cold,big] [--full]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev")) / "parsed"
PY = sys.executable
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ENV.pop("CHUNKSCOPE_CACHE_DIR", None)  # nothing cached: every pass is a real one

PLAIN_PASS = """
import json, sys, time
t0 = time.perf_counter()
from sentence_transformers import SentenceTransformer
from chunkscope.embeddings import bundled_model_path
m = SentenceTransformer(str(bundled_model_path()), device="cpu")
texts = json.load(open(sys.argv[1]))
m.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
print(time.perf_counter() - t0)
"""

BIG = """
import json, resource, sys, time
t0 = time.perf_counter()
from chunkscope.analysis import Settings, analyze
from chunkscope.ingest import load_bytes
text = open(sys.argv[1], encoding="utf-8").read()
doc = load_bytes(text.encode(), "concatenated.md")
seen = {}
def partial(r, stage):
    seen.setdefault(stage, time.perf_counter() - t0)
    if stage == "structure" and sys.argv[2] != "full":
        raise SystemExit(0)
try:
    analyze(doc, Settings(), on_partial=partial)
    seen["complete"] = time.perf_counter() - t0
finally:
    seen["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seen["tokens"] = None
    print(json.dumps(seen))
"""


def gdpr():
    from chunkscope.ingest import load_document

    return load_document(CORPUS / "Norma (légal)_GDPR.json")


def warm(doc) -> dict:
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.ingest import load_bytes

    out = {}
    for name, backend in (("new", "auto"), ("old", "reference")):
        res = Resources(None, "composed", backend=backend)
        small = load_bytes(b"# Warm up\n\nThe model loads. It is then warm.\n", "warm.md")
        analyze(small, Settings(embedding_backend=backend), res)  # model, spaCy, tokenizers loaded
        res.embedder().clear_memory_cache()
        t0 = time.perf_counter()
        first: dict = {}
        on_partial = (lambda r, st: first.setdefault(st, time.perf_counter() - t0)) if name == "new" else None
        analyze(doc, Settings(embedding_backend=backend), res, on_partial=on_partial)
        out[name] = {"complete_s": time.perf_counter() - t0, **{f"{k}_s": v for k, v in first.items()}}
        res.embedder().clear_memory_cache()
    return out


def cold_progress(path: Path) -> dict:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([PY, "-m", "chunkscope.cli", "analyze", str(path), "--progress", "--json",
                              str(Path(d) / "r.json")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, env=ENV, cwd=ROOT)
        first = None
        assert p.stderr is not None
        for line in p.stderr:
            if first is None and line.startswith("== after structure"):
                first = time.perf_counter() - t0
        p.wait()
    return {"provisional_s": first, "complete_s": time.perf_counter() - t0}


def cold_ratio(path: Path) -> dict:
    from chunkscope.embeddings import Embedder, document_units
    from chunkscope.ingest import load_document

    doc = load_document(path)
    units = document_units(doc.text, doc.split_points, Embedder.load(cache_dir=None, backend="onnx"))
    texts = [doc.text[u.start:u.end] for u in units if doc.text[u.start:u.end].strip()]
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "texts.json"
        f.write_text(json.dumps(texts))
        t0 = time.perf_counter()
        subprocess.run([PY, "-c", PLAIN_PASS, str(f)], check=True, env=ENV, capture_output=True)
        plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([PY, "-m", "chunkscope.cli", "analyze", str(path), "--quiet", "--json", str(Path(d) / "r.json")],
                       check=True, env=ENV, capture_output=True, cwd=ROOT)
        cli = time.perf_counter() - t0
    return {"doc": path.stem, "chars": len(doc.text), "plain_pass_s": plain, "analyze_s": cli, "ratio": cli / plain}


def big(full: bool) -> dict:
    from chunkscope.ingest import load_document
    from chunkscope.tokens import count_tokens

    parts = [load_document(p).text for p in sorted(CORPUS.glob("*.json"))]
    text, n = "", 0
    while n < 400_000:
        for t in parts:
            text += "\n\n" + t
        n = count_tokens(text)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "big.md"
        f.write_text(text, encoding="utf-8")
        r = subprocess.run([PY, "-c", BIG, str(f), "full" if full else "structure"], env=ENV, capture_output=True,
                           text=True, cwd=ROOT)
    res = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {"error": r.stderr[-500:]}
    res["tokens"] = n
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip", default="")
    ap.add_argument("--full", action="store_true", help="the 400k-token document: the complete analysis too")
    a = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"skip: no dev corpus at {CORPUS}")
        return 0
    skip = set(a.skip.split(","))
    if "gdpr-warm" not in skip:
        w = warm(gdpr())
        print(f"GDPR warm: provisional {w['new'].get('structure_s', float('nan')):.2f} s, complete "
              f"{w['new']['complete_s']:.1f} s; old path complete {w['old']['complete_s']:.1f} s; "
              f"ratio {w['new']['complete_s'] / w['old']['complete_s']:.2f}", flush=True)
    if "gdpr-cold" not in skip:
        c = cold_progress(CORPUS / "Norma (légal)_GDPR.json")
        print(f"GDPR cold CLI: provisional {c['provisional_s']:.2f} s, complete {c['complete_s']:.1f} s", flush=True)
    if "cold" not in skip:
        for p in sorted(CORPUS.glob("*.json")):
            from chunkscope.ingest import load_document

            if 40_000 <= len(load_document(p).text) <= 85_000:
                r = cold_ratio(p)
                print(f"cold {r['doc'][:40]} ({r['chars']} chars): analyze {r['analyze_s']:.1f} s vs plain cold "
                      f"fp32 pass {r['plain_pass_s']:.1f} s: ratio {r['ratio']:.2f}", flush=True)
    if "big" not in skip:
        b = big(a.full)
        print(f"400k-token document ({b.get('tokens')} tokens): {json.dumps(b)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
