"""Chunker throughput on the GDPR dev document (~67k o200k tokens, 363k characters).

    .venv/bin/python bench/chunkers.py [--repeat 3] [--doc PATH]

For every built-in chunker: best-of-N wall time with a *cold* token-count cache
(and a cold sentence cache), tokens per second. Then the paper's comparison:
our ``recursive-1100`` against LangChain's ``RecursiveCharacterTextSplitter`` with the
same separators (regex, kept at the start), the same o200k length function and size
1100, measured in the same run. Exits 0; skips with a message without the corpus.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DOC = ROOT.parent / "shared" / "corpus" / "clair-dev" / "parsed" / "Norma (légal)_GDPR.json"
IDS = ["page", "page+pp", "recursive-1100", "recursive-1100+pp", "recursive-600", "recursive-600+pp",
       "langchain-default", "langchain-1100", "sentence-5", "fixed-512", "structure", "whole"]


def _cold() -> None:
    from chunkscope.text import sentences, tokens

    tokens.clear_cache()
    sentences.clear_cache()


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        _cold()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(DEFAULT_DOC))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    path = Path(args.doc)
    if not path.exists():
        print(f"bench/chunkers.py: skipped, {path} not found (the dev corpus lives in ../shared/corpus)")
        return 0

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from chunkscope.chunkers import registry
    from chunkscope.chunkers.recursive import PAPER_SEPARATORS, RecursiveSplitter
    from chunkscope.ingest.reference import load_reference
    from chunkscope.text.sentences import sentence_spans
    from chunkscope.text.tokens import count_tokens, encoding

    doc = load_reference(path)
    enc = encoding()
    n_tokens = len(enc.encode_ordinary(doc.text))
    sentence_spans("Warm up the model. Then measure.")  # model load is not chunking time
    print(f"{doc.name}: {len(doc.text):,} characters, {n_tokens:,} o200k tokens; best of {args.repeat}, cold caches\n")
    print(f"{'chunker':<20} {'chunks':>6} {'seconds':>8} {'tokens/s':>12}")
    for cid in IDS:
        secs, res = best_of(lambda: registry.run_chunker(doc, cid), args.repeat)
        rate = f"{n_tokens / secs:>12,.0f}" if secs >= 1e-4 else f"{'(instant)':>12}"
        print(f"{cid:<20} {len(res.spans):>6} {secs:>8.3f} {rate}")

    def raw_len(t: str) -> int:
        return len(enc.encode_ordinary(t))

    def lc(length):
        return RecursiveCharacterTextSplitter(separators=list(PAPER_SEPARATORS), chunk_size=1100, chunk_overlap=0,
                                              is_separator_regex=True, keep_separator="start",
                                              length_function=length).split_text(doc.text)

    ours_c, ours = best_of(lambda: RecursiveSplitter(chunk_size=1100, length=count_tokens).split(doc.text), args.repeat)
    ours_r, _ = best_of(lambda: RecursiveSplitter(chunk_size=1100, length=raw_len).split(doc.text), args.repeat)
    lc_r, lc_chunks = best_of(lambda: lc(raw_len), args.repeat)
    lc_c, _ = best_of(lambda: lc(count_tokens), args.repeat)
    print("\nrecursive-1100 vs LangChain RecursiveCharacterTextSplitter (same separators, o200k, 1100, same run)")
    print(f"{'splitter':<44} {'chunks':>6} {'seconds':>8} {'tokens/s':>12}")
    for name, secs, n in (("ours, plain tiktoken length", ours_r, len(ours)),
                          ("LangChain, plain tiktoken length", lc_r, len(lc_chunks)),
                          ("ours, cached count_tokens (cold cache)", ours_c, len(ours)),
                          ("LangChain, cached count_tokens (cold cache)", lc_c, len(lc_chunks))):
        print(f"{name:<44} {n:>6} {secs:>8.3f} {n_tokens / secs:>12,.0f}")
    print(f"\nspeed-up of ours over LangChain: {lc_r / ours_r:.1f}x (plain length), {lc_c / ours_c:.1f}x (cached length)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
