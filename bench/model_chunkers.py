"""The model-driven chunkers end to end: ``llm-regex`` and ``semantic`` on the dev corpus.

Part 1 runs ``llm-regex`` (and ``+pp``) on one dev document against the local
chat-completions test server (``tests/llm_server.py``: a real HTTP server on 127.0.0.1,
answering through the real ``openai`` client). The server's answer is SCRIPTED (no real
model is reachable offline): it returns the heading-delimiter regex a good model gives for
this kind of document. What is shown is the whole pipeline: prompt (first 8000 tokens,
whole lines) -> HTTP -> first <regex> block -> validation -> split -> metrics, then a
second run served from the on-disk cache (no request), then a catastrophic pattern that
the regex timeout stops (a *failed* chunking, no fallback).

Part 2 runs ``semantic`` and ``semantic+pp`` (paper settings: gradient, 95th percentile,
buffer 1) on every dev document and prints SC, BI, RC, ICC, DCC (RC from the corpus's
precomputed mentions when present).

    .venv/bin/python bench/model_chunkers.py [--doc SUBSTR] [--semantic-docs SUBSTR] [--max-chars N] [--json OUT]

Skips cleanly when ../shared/corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CORPUS = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))
METRICS = ("SC", "BI", "RC", "ICC", "DCC")
DEMO_REGEX = r"\n\n(?=#{2,3} )"


def fmt(v) -> str:
    return "  -  " if v is None else f"{v:.3f}"


def settings_for(path: Path, chunkers: list[str]):
    from chunkscope.analysis import Settings

    mentions = CORPUS / "mentions" / (path.stem + ".parquet")
    if mentions.exists():
        return Settings(chunkers=tuple(chunkers), candidates=tuple(c for c in chunkers if c.endswith("+pp")),
                        coref="precomputed", mentions=str(mentions))
    return Settings(chunkers=tuple(chunkers), candidates=tuple(c for c in chunkers if c.endswith("+pp")))


def print_rows(report, ids) -> None:
    print(f"    {'chunking':<22}{'status':<8}{'chunks':>7}  " + "  ".join(f"{m:>5}" for m in METRICS) + "  score")
    for cid in ids:
        c = report.get(cid)
        if c is None:
            continue
        print(f"    {cid:<22}{c.status:<8}{len(c.chunks):>7}  " + "  ".join(fmt(c.metrics.get(m)) for m in METRICS)
              + f"  {fmt(c.score)}" + (f"   ({c.reason})" if c.reason else ""))


def part1(path: Path, out: dict) -> None:
    from llm_server import ScriptedLLMServer, reply

    from chunkscope.analysis import Resources, analyze
    from chunkscope.chunkers import llm_regex
    from chunkscope.ingest.reference import load_reference
    from chunkscope.llm import LLMSettings

    doc = load_reference(path)
    print(f"== llm-regex on '{doc.name}' ({len(doc.text)} chars) via the local test server")
    ids = ["llm-regex", "llm-regex+pp", "page+pp", "recursive-1100+pp", "recursive-600+pp"]
    with ScriptedLLMServer() as srv:
        srv.push(reply(f"<regex>{DEMO_REGEX}</regex>"))
        llm = LLMSettings(base_url=srv.base_url, api_key="sk-demo-not-a-real-key", model="demo-model", timeout=30)
        resources = Resources(llm_settings=llm)
        t0 = time.perf_counter()
        report = analyze(doc, settings_for(path, ids), resources)
        first = report.get("llm-regex")
        info = first.info
        print(f"    endpoint {info.get('endpoint')}  model {info.get('model')}  prompt {info.get('prompt_version')}")
        print(f"    regex returned: {info.get('regex')!r}   matches: {info.get('matches')}   attempts: {info.get('attempts')}")
        print(f"    tokens sent/received: {info.get('tokens_sent')}/{info.get('tokens_received')} "
              f"(document context: {info.get('context_tokens')} o200k tokens)   latency {info.get('latency_s')}s   "
              f"cached: {info.get('cached')}   requests to server: {len(srv.chat_requests)}")
        print_rows(report, ids)
        print(f"    winner among candidates: {report.winner}   (analysis {time.perf_counter() - t0:.1f}s)")
        for i, ch in enumerate(first.chunks[:6]):
            head = doc.text[ch.start:ch.end].strip().splitlines()[0][:70]
            print(f"      chunk {i:>2} [{ch.start:>6},{ch.end:>6}) {ch.tokens:>5} tok  {head}")
        n_req = len(srv.chat_requests)
        again = analyze(doc, settings_for(path, ["llm-regex"]), resources).get("llm-regex")
        print(f"    second analysis: cached={again.info.get('cached')}, new requests: {len(srv.chat_requests) - n_req}, "
              f"same chunks: {again.chunks == first.chunks}")
        # a catastrophic answer: stopped by the regex timeout, reported as failed (after one feedback retry)
        srv._answers = [reply("<regex>(?:(?:\\w+ ?)+)+:</regex>")]
        bad = llm_regex.chunk_llm_regex(
            doc, {"model": "catastrophic-model", "regex_timeout": 0.5, "use_cache": False}, resources)
        print(f"    catastrophic pattern: status={bad.status}, reason: {bad.reason}")
        out["llm_regex"] = {
            "document": doc.name, "regex": info.get("regex"), "chunks": len(first.chunks),
            "metrics": first.metrics, "pp_chunks": len(report.get("llm-regex+pp").chunks),
            "pp_metrics": report.get("llm-regex+pp").metrics, "cached_second_run": again.info.get("cached"),
            "catastrophic": {"status": bad.status, "reason": bad.reason},
            "others": {c: report.get(c).metrics for c in ids[2:]},
        }


def part2(paths: list[Path], max_chars: int | None, out: dict) -> None:
    from chunkscope.analysis import Resources, analyze
    from chunkscope.ingest.reference import load_reference

    print("\n== semantic (gradient, 95th percentile, buffer 1) on the dev corpus")
    resources = Resources()
    ids = ["semantic", "semantic+pp"]
    rows = []
    for path in paths:
        doc = load_reference(path)
        if max_chars and len(doc.text) > max_chars:
            print(f"  - {doc.name}: {len(doc.text)} chars > --max-chars, skipped")
            continue
        t0 = time.perf_counter()
        report = analyze(doc, settings_for(path, ids), resources)
        dt = time.perf_counter() - t0
        print(f"  {doc.name} ({len(doc.text)} chars, {dt:.1f}s)")
        print_rows(report, ids)
        sem = report.get("semantic")
        rows.append({"document": doc.name, "seconds": round(dt, 1),
                     **{cid: {"chunks": len(report.get(cid).chunks), **report.get(cid).metrics} for cid in ids},
                     "sentences": len(sem.info.get("sentences", [])), "embedding": sem.info.get("embedding")})
    if rows:
        print("\n  corpus mean over", len(rows), "documents")
        for cid in ids:
            means = []
            for m in METRICS:
                vals = [r[cid][m] for r in rows if r[cid][m] is not None]
                means.append(sum(vals) / len(vals) if vals else None)
            chunks = sum(r[cid]["chunks"] for r in rows)
            print(f"    {cid:<14} chunks {chunks:>5}  " + "  ".join(f"{m} {fmt(v)}" for m, v in zip(METRICS, means)))
    out["semantic"] = rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default="Council of Europe", help="dev document for the llm-regex demo (name substring)")
    ap.add_argument("--semantic-docs", default="", help="only dev documents whose name contains this")
    ap.add_argument("--max-chars", type=int, default=None, help="skip larger documents in part 2")
    ap.add_argument("--json", default=None, help="write the numbers to this JSON file")
    args = ap.parse_args()
    if not (CORPUS / "parsed").is_dir():
        print(f"skipped: dev corpus not found at {CORPUS}")
        return 0
    # a fresh cache so the first llm-regex run really talks to the server
    os.environ["CHUNKSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="chunkscope-bench-")
    paths = sorted((CORPUS / "parsed").glob("*.json"))
    out: dict = {}
    demo = [p for p in paths if args.doc.lower() in p.stem.lower()] or paths[:1]
    part1(demo[0], out)
    part2([p for p in paths if args.semantic_docs.lower() in p.stem.lower()], args.max_chars, out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
