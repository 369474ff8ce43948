"""Retrain the learned coreference pair scorer (``core/chunkscope/coref/pair_model.json``) from Maverick's pairs.

    .venv/bin/python tools/train_coref.py [FOLDER ...] [--out core/chunkscope/coref/pair_model.json] [--check]

FOLDERs default to ``../shared/corpus/clair-dev`` and ``../shared/corpus/clair-train`` (each
with ``parsed/*.json`` and ``mentions/*.parquet``). Every English document with Maverick pairs
is parsed (spaCy windows, as at inference) and the model is fitted deterministically
(``chunkscope.coref.train``): the same folders give the same file, byte for byte. ``--check``
writes nothing and exits 1 when the shipped file differs from what the folders give.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpus"


def model_text(folders: list[str], cache: str | None = None, log=print) -> str:
    from chunkscope.coref.train import corpus, parsed_docs, train

    docs = corpus(folders)
    if not docs:
        raise SystemExit(f"no documents with Maverick pairs in {', '.join(folders)}")
    parsed = parsed_docs(docs, cache, log=log)
    digest = hashlib.sha256("".join(sorted(d.sha256 for _, d, _ in docs)).encode()).hexdigest()[:12]
    model = train(parsed, version="learned",
                  meta={"documents": [name for name, _, _ in docs], "pairs": sum(len(p) for _, _, p in docs),
                        "corpus_digest": digest})
    d = model.to_dict()  # the version names the weights, so the disk cache never serves another model's pairs
    d["version"] = "learned-" + hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]
    return json.dumps(d, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", default=[str(SHARED / "clair-dev"), str(SHARED / "clair-train")])
    ap.add_argument("--out", default=str(ROOT / "core" / "chunkscope" / "coref" / "pair_model.json"))
    ap.add_argument("--cache", help="keep the parses here (pickles) to retrain faster")
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args(argv)
    text = model_text(args.folders, args.cache)
    out = Path(args.out)
    if args.check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'reproduced exactly' if same else 'DIFFERS from what the folders give'}")
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({json.loads(text)['version']}, threshold {json.loads(text)['threshold']})")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
