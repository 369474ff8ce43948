"""Same numbers before and after a change: the report JSON of each dev document, from this checkout and from
an earlier commit, compared key by key (timings and the build digest left out, key order kept).

A refactor must leave every report identical: scores, chunks, diagnostics, explanation, verdict. Each
document is analysed with default settings by ``chunkscope analyze --json`` in a fresh process, once with
this checkout's engine and once with the engine of ``--before REV`` (its ``core/`` taken with ``git
archive``, as ``bench/progressive.py --baseline`` does), nothing cached.

    .venv/bin/python bench/same_reports.py [--before REV] [--docs N]     (REV: HEAD unless given)

Prints one line per document ("identical", or the first differing keys) and a closing
"N passed, M failed" line; exits 1 when a report differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from progressive import CORPUS, ENV, PY, checkout

# what changes from run to run, or with any edit of the code, but is no result
VOLATILE = {"seconds", "timings", "build", "unit_seconds", "model_seconds"}


def stable(x: Any) -> Any:
    """``x`` without the volatile keys, at every depth (key order kept)."""
    if isinstance(x, dict):
        return {k: stable(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [stable(v) for v in x]
    return x


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two stable reports differ (type, keys, length or value), as JSON paths."""
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} vs {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r:.60} vs {b!r:.60}"]


def report(doc: Path, out: Path, pythonpath: str | None) -> dict[str, Any]:
    """The report of ``doc`` by ``chunkscope analyze`` (this checkout's engine, or the one on ``pythonpath``)."""
    env = dict(ENV)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = "import sys; from chunkscope.cli import main; sys.exit(main(sys.argv[1:]))"
    subprocess.run([PY, "-c", code, "analyze", str(doc), "--quiet", "--json", str(out)], env=env, check=True,
                   capture_output=True, cwd=Path(pythonpath).parent if pythonpath else None)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> int:
    """Compare the reports of this checkout and of ``--before`` on the dev documents."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="HEAD", help="the commit to compare with (default HEAD: the uncommitted "
                                                     "change; for a branch, the commit it started from)")
    ap.add_argument("--docs", type=int, default=7, help="how many dev documents (default all 7)")
    args = ap.parse_args()
    docs = sorted(CORPUS.glob("*.json"))[: args.docs]
    if not docs:
        print(f"no dev documents under {CORPUS} (see docs/developer-data.md)")
        return 0
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        before = checkout(args.before, Path(tmp) / "before")
        for i, doc in enumerate(docs):
            new = stable(report(doc, Path(tmp) / f"new{i}.json", None))
            old = stable(report(doc, Path(tmp) / f"old{i}.json", before))
            diff = differences(old, new)
            print(f"{doc.stem[:60]:60} " + ("identical" if not diff else "DIFFERENT: " + "; ".join(diff[:3])))
            passed, failed = passed + (not diff), failed + bool(diff)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
