"""Bad inputs, measured: every broken file ends in a loaded document or one clear error, in time.

    .venv/bin/python bench/fuzz_inputs.py [--seed 7] [--limit-s 120] [--big-mb 50] [--quick]

Builds a fuzz set in a temporary folder: broken PDFs (a valid PDF truncated at random offsets,
random bytes flipped, a huge page count, a page with 100k tiny text objects, an encrypted one) and
text / Markdown / JSON (random bytes, deep nesting, one single line of ``--big-mb`` MB, 1M table
rows). Each input goes through what the app does with an upload -- ``load_bytes`` then the token
count of the summary -- in its own worker process with a time limit, so a hang or a crash is
measured instead of stopping the bench. Outcome per input:

* ``loaded``: a Document came back (its token count too);
* ``refused``: one clear line (``IngestError`` / ``ValueError``: what the UI and CLI show);
* ``other``: anything else -- another exception type (a traceback in the UI), a crash of the
  worker (e.g. a tiktoken panic, a BaseException), or the time limit.

Prints one line per input and the counts (tried / loaded / refused / other). ``--quick`` shrinks
the big inputs (for ``make bench`` on a small machine). Exit code 0 when ``other`` is 0, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

WORKER = r"""
import json, sys, time
path, name = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
try:
    from chunkscope.ingest import load_bytes
    from chunkscope.text.tokens import count_tokens
    doc = load_bytes(open(path, "rb").read(), name)
    n = count_tokens(doc.text)
    out = {"outcome": "loaded", "detail": f"{len(doc.text):,} chars, {n:,} tokens, {len(doc.pages)} pages"}
except ValueError as exc:  # IngestError, TokenizerFailed: one line for the user
    msg = " ".join(str(exc).split())
    out = {"outcome": "refused" if msg and "\n" not in str(exc).strip() else "other", "detail": msg[:160]}
except Exception as exc:
    out = {"outcome": "other", "detail": f"{type(exc).__name__}: {' '.join(str(exc).split())[:140]}"}
out["seconds"] = round(time.perf_counter() - t0, 2)
print("RESULT " + json.dumps(out))
"""


def _pdf_inputs(rng: random.Random, quick: bool) -> list[tuple[str, bytes]]:
    import pymupdf
    from pdf_factory import make_encrypted_pdf, make_pdf

    base = make_pdf(pages=4)
    out: list[tuple[str, bytes]] = []
    for i in range(8):
        cut = rng.randrange(1, len(base))
        out.append((f"truncated-{i}@{cut}.pdf", base[:cut]))
    for i in range(8):
        b = bytearray(base)
        for _ in range(rng.choice((1, 10, 100))):
            b[rng.randrange(len(b))] = rng.randrange(256)
        out.append((f"flipped-{i}.pdf", bytes(b)))
    doc = pymupdf.open()
    for _ in range(2_000 if quick else 20_000):
        doc.new_page(width=200, height=200)
    out.append((f"huge-page-count-{doc.page_count}.pdf", doc.tobytes(garbage=0)))
    doc.close()
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    n = 10_000 if quick else 100_000
    ops = "".join(f"BT /F1 2 Tf {(k % 300) * 2} {(k // 300) % 400 * 2} Td (x) Tj ET\n" for k in range(n))
    page.insert_text((10, 10), "seed")  # a font resource /F1-like name for the stream below
    font = [f for f in page.get_fonts()][0][4] if page.get_fonts() else "F1"
    xref = page.get_contents()[0]
    doc.update_stream(xref, ops.replace("/F1", f"/{font}").encode())
    out.append((f"tiny-text-objects-{n}.pdf", doc.tobytes()))
    doc.close()
    out.append(("encrypted.pdf", make_encrypted_pdf()))
    out.append(("not-a-pdf.pdf", b"%PDF-1.7\n" + bytes(rng.randrange(256) for _ in range(5000))))
    return out


def _text_inputs(rng: random.Random, quick: bool, big_mb: int) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    for i, ext in enumerate((".txt", ".md", ".json", ".txt")):
        out.append((f"random-bytes-{i}{ext}", bytes(rng.randrange(256) for _ in range(20_000))))
    depth = 10_000 if quick else 100_000
    out.append((f"deep-nesting-{depth}.json", b"[" * depth + b"]" * depth))
    out.append((f"deep-nesting-obj-{depth}.json", b'{"a":' * depth + b"1" + b"}" * depth))
    out.append((f"deep-quotes-{depth}.md", b">" * depth + b" text\n"))
    out.append((f"deep-list-{depth // 10}.md", "".join("  " * k + "- item\n" for k in range(depth // 10)).encode()))
    mb = 5 if quick else big_mb
    out.append((f"single-line-{mb}MB.txt", b"a" * (mb * 1_000_000)))
    out.append((f"single-line-words-{mb}MB.md", (b"word " * (mb * 200_000)).strip()))
    rows = 100_000 if quick else 1_000_000
    out.append((f"table-{rows}-rows.md", b"| a | b |\n|---|---|\n" + b"| 1 | 2 |\n" * rows))
    out.append(("bad-utf8.md", b"# Title\n\n" + bytes([0xff, 0xfe, 0xc3]) * 1000))
    out.append(("empty.md", b""))
    out.append(("nul-bytes.txt", b"\x00" * 10_000))
    out.append(("json-not-a-document.json", json.dumps({"hello": [1, 2, 3]}).encode()))
    return out


def run_one(path: Path, name: str, limit_s: float) -> dict:
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", WORKER, str(path), name], capture_output=True, text=True,
                           timeout=limit_s, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"outcome": "other", "detail": f"no answer within {limit_s:g}s", "seconds": round(limit_s, 1)}
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        tail = " ".join((p.stderr or "").split())[-160:]
        return {"outcome": "other", "detail": f"worker died (exit {p.returncode}): {tail}",
                "seconds": round(time.perf_counter() - t0, 2)}
    return json.loads(line[7:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit-s", type=float, default=120.0, help="time limit per input (seconds)")
    ap.add_argument("--big-mb", type=int, default=50, help="size of the single-line inputs (MB)")
    ap.add_argument("--quick", action="store_true", help="smaller big inputs (5 MB line, 100k rows, 2k pages)")
    ap.add_argument("--json", metavar="OUT", help="write the per-input results as JSON")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    inputs = _pdf_inputs(rng, args.quick) + _text_inputs(rng, args.quick, args.big_mb)
    counts = {"tried": 0, "loaded": 0, "refused": 0, "other": 0}
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, data in inputs:
            p = Path(d) / "input.bin"
            p.write_bytes(data)
            r = run_one(p, name, args.limit_s)
            counts["tried"] += 1
            counts[r["outcome"]] += 1
            rows.append({"input": name, "bytes": len(data), **r})
            print(f"{r['outcome']:8} {r['seconds']:7.2f}s  {name:34} {r['detail']}", flush=True)
            os.remove(p)
    print("\n" + " / ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"slowest: {max(rows, key=lambda r: r['seconds'])['input']} "
          f"({max(r['seconds'] for r in rows):.1f}s, limit {args.limit_s:g}s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "rows": rows}, indent=1))
    return 0 if counts["other"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
