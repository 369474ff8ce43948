"""Time to the first answer: provisional results, cold starts, a 400k-token document.

Measured in one run (ratios hold on a loaded machine):

1. ``gdpr-warm``: GDPR in a warm process (a fresh process that first analyses a small document, so
   the model, spaCy's pipelines and scipy are loaded), upload -> provisional leaderboard (the first
   snapshot: SC, BI, problems) and -> complete report, with the default backend. The same in a
   checkout of an earlier commit (``--baseline REV``, e.g. the commit before a change: "before")
   and with the fp32 reference backend (``--reference``: sentence-transformers on torch, slow).
2. ``gdpr-cold``: ``chunkscope analyze --progress`` in a fresh process; seconds until the
   provisional leaderboard appears on stderr, and until the process ends.
3. ``cold``: on each 40–85k-character dev document, ``chunkscope analyze`` in a fresh process vs a
   plain cold fp32 pass (a fresh process that imports sentence-transformers, loads the bundled
   MiniLM and encodes the document's sentences).
4. ``big``: a ~400k-token document (dev documents concatenated): provisional seconds and peak RSS
   of a fresh process (``--full``: the complete analysis too).

    .venv/bin/python bench/progressive.py [--skip gdpr-warm,gdpr-cold,cold,big] [--full]
        [--baseline REV] [--reference]
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
GDPR = CORPUS / "Norma (légal)_GDPR.json"
PY = sys.executable
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ENV.pop("CHUNKSCOPE_CACHE_DIR", None)  # nothing cached: every pass is a real one

PLAIN_PASS = """
import json, sys, time
t0 = time.perf_counter()
from sentence_transformers import SentenceTransformer
from chunkscope.embeddings.embedder import bundled_model_path
m = SentenceTransformer(str(bundled_model_path()), device="cpu")
texts = json.load(open(sys.argv[1]))
m.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
print(time.perf_counter() - t0)
"""

# a warm process: everything loaded by a small analysis, then the upload (bytes -> Document) and
# the analysis timed from the upload's bytes; prints {"structure": s, ..., "complete": s}
WARM = """
import json, resource, sys, time
from chunkscope.analysis import Resources, Settings, analyze
from chunkscope.ingest import load_bytes
backend = sys.argv[2]
try:
    res = Resources(None, "composed", backend=backend)
    settings = Settings(embedding_backend=backend)
except TypeError:  # a baseline from before the embedding backends: its one path (fp32, torch)
    res, settings = Resources(None, "composed"), Settings()
small = (b"# Warm up\\n\\nThe model loads once. She said it to him.\\n\\n## Another block\\n\\nThe committee "
         b"saw it and approved it.\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\n")
analyze(load_bytes(small, "warm-up.md"), settings, res)
data = open(sys.argv[1], "rb").read()
t0 = time.perf_counter()
seen = {}
doc = load_bytes(data, sys.argv[1].rsplit("/", 1)[-1])
seen["ingest"] = time.perf_counter() - t0
def part(rep, st):  # the second structure snapshot (the sentence chunkers) is "structure2"
    seen.setdefault(st if st not in seen else st + "2", time.perf_counter() - t0)
try:
    r = analyze(doc, settings, res, on_partial=part)
except TypeError:  # a baseline without the progressive analysis: complete only
    r = analyze(doc, settings, res)
seen["complete"] = time.perf_counter() - t0
seen["winner"] = r.winner
seen["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(seen))
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
    seen.setdefault("rss_at_" + stage + "_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if stage == "structure" and sys.argv[2] != "full":
        raise SystemExit(0)
try:
    r = analyze(doc, Settings(), on_partial=partial)
    seen["complete"] = time.perf_counter() - t0
    seen["winner"] = r.winner
finally:
    seen["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(seen))
"""


def _run_json(code: str, args: list[str], pythonpath: str | None = None) -> dict:
    env = dict(ENV)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    # a baseline runs outside the repository, so that this checkout's core/ does not shadow its own
    r = subprocess.run([PY, "-c", code, *args], env=env, capture_output=True, text=True,
                       cwd=Path(pythonpath).parent if pythonpath else ROOT)
    lines = [ln for ln in r.stdout.strip().splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": r.stderr.strip()[-800:]}


def checkout(rev: str, into: Path) -> str:
    """The package ``chunkscope`` of commit ``rev`` under ``into``: a PYTHONPATH entry
    that takes precedence over the editable install."""
    src = into / "src"
    src.mkdir(parents=True)
    arch = subprocess.run(["git", "archive", rev, "core"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=arch, check=True)
    pkg = into / "path"
    pkg.mkdir()
    if (src / "core" / "chunkscope").is_dir():  # the source layout: core/chunkscope/
        (pkg / "chunkscope").symlink_to(src / "core" / "chunkscope")
    else:  # before it: core/ installed as chunkscope (older code still imports core.*)
        (pkg / "chunkscope").symlink_to(src / "core")
        (pkg / "core").symlink_to(src / "core")
    return str(pkg)


def warm_runs(baseline: str, reference: bool) -> dict[str, dict]:
    out = {"new": _run_json(WARM, [str(GDPR), "auto"])}
    if baseline:
        with tempfile.TemporaryDirectory() as d:
            out[f"before ({baseline})"] = _run_json(WARM, [str(GDPR), "auto"], checkout(baseline, Path(d)))
    if reference:
        out["reference fp32"] = _run_json(WARM, [str(GDPR), "reference"])
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
    from chunkscope.embeddings.embedder import Embedder
    from chunkscope.embeddings.spans import document_units
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
    from chunkscope.text.tokens import count_tokens

    parts = [load_document(p).text for p in sorted(CORPUS.glob("*.json"))]
    text, n = "", 0
    while n < 400_000:
        for t in parts:
            text += "\n\n" + t
        n = count_tokens(text)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "big.md"
        f.write_text(text, encoding="utf-8")
        res = _run_json(BIG, [str(f), "full" if full else "structure"])
    res["tokens"] = n
    return res


def _s(x: object) -> str:
    return f"{x:.1f}" if isinstance(x, (int, float)) else "–"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip", default="", help="parts to leave out: gdpr-warm,gdpr-cold,cold,big")
    ap.add_argument("--full", action="store_true", help="the 400k-token document: the complete analysis too")
    ap.add_argument("--baseline", default="", help="also time GDPR warm with this commit's code (git rev)")
    ap.add_argument("--reference", action="store_true", help="also time GDPR warm with the fp32 reference backend")
    a = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"skip: no dev corpus at {CORPUS}")
        return 0
    skip = set(a.skip.split(","))
    t_all = time.perf_counter()
    if "gdpr-warm" not in skip:
        w = warm_runs(a.baseline, a.reference)
        print("\nGDPR (66.8k tokens), warm process, from the upload's bytes (seconds):\n")
        print("| code / backend | provisional (structure) | + sentence chunkers | coreference | complete | winner |"
              " peak RSS MB |")
        print("|---|---:|---:|---:|---:|---|---:|")
        for name, x in w.items():
            if "error" in x:
                print(f"| {name} | error: {x['error'][-200:]} |")
                continue
            print(f"| {name} | {_s(x.get('structure'))} | {_s(x.get('structure2'))} | {_s(x.get('coreference'))} | "
                  f"{_s(x.get('complete'))} | {x.get('winner')} | {x.get('peak_rss_mb', 0):.0f} |")
        new = w["new"].get("complete")
        for name, x in w.items():
            if name != "new" and isinstance(new, float) and isinstance(x.get("complete"), float):
                print(f"complete: new / {name} = {new / x['complete']:.2f}")
        sys.stdout.flush()
    if "gdpr-cold" not in skip:
        c = cold_progress(GDPR)
        print(f"\nGDPR cold CLI (fresh process): provisional {_s(c['provisional_s'])} s, complete "
              f"{_s(c['complete_s'])} s", flush=True)
    if "cold" not in skip:
        from chunkscope.ingest import load_document

        for p in sorted(CORPUS.glob("*.json")):
            if 40_000 <= len(load_document(p).text) <= 85_000:
                r = cold_ratio(p)
                print(f"cold {r['doc'][:40]} ({r['chars']} chars): analyze {r['analyze_s']:.1f} s vs plain cold "
                      f"fp32 pass {r['plain_pass_s']:.1f} s: ratio {r['ratio']:.2f}", flush=True)
    if "big" not in skip:
        b = big(a.full)
        print(f"\n400k-token document ({b.get('tokens')} tokens), fresh process: provisional "
              f"{_s(b.get('structure'))} s, complete {_s(b.get('complete'))} s, peak RSS "
              f"{b.get('peak_rss_mb', 0):.0f} MB; {json.dumps(b)}", flush=True)
    print(f"\n(bench/progressive.py ran {time.perf_counter() - t_all:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
