"""Training of the learned pair scorer (``pair_model.json``) from Maverick's pairs.

Deterministic: the same parses and pairs give the same weights, bit for bit (numpy only:
L2-regularised logistic regression fitted by Newton's method from zero, then the pairing
threshold that maximises pair F1 on the training documents). ``tools/train_coref.py`` is the
command line; ``bench/coref_agreement.py`` uses the same functions for leave-one-document-out
models.

Labels: a candidate of a pronoun is positive when Maverick pairs that pronoun with an entity
starting within ``TOL`` characters of the candidate's start (for a resolved pronoun
candidate: of the entity it stands for). Pronouns without a Maverick pair give negative rows
only (the model learns when not to pair); pronouns whose Maverick entity is not among the
candidates are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from chunkscope.coref.base import Pair
from chunkscope.coref.learned import FEATURES, Mention, PairModel, Parsed, candidates, featurize
from chunkscope.document import Document

TOL = 2
L2 = 1.0
ITERATIONS = 25
OBJECTIVE = "count"  # threshold: best pair F1 ("f1") or as many pairs as Maverick ("count")


@dataclass
class Example:
    """One pronoun's training rows: its candidates' features ``X`` and labels ``y`` (1: Maverick's entity)."""

    X: np.ndarray
    y: np.ndarray


def examples(parsed: Parsed, ref: Sequence[Pair], tol: int = TOL) -> list[Example]:
    """One example (candidate rows, labels) per pronoun, chains taught from Maverick's pairs."""
    gold: dict[int, int] = {}
    for p in ref:
        if p.entity.start < p.pronoun.start:
            gold[p.pronoun.start] = p.entity.start
    out: list[Example] = []
    resolved: list[Mention] = []
    for pi, pron in enumerate(parsed.pronouns):
        cands = candidates(parsed, pi, resolved)
        g = gold.get(pron.start)
        if g is not None:
            pron.ent = (g, g)
            resolved.append(pron)
        if not cands:
            continue
        y = np.array([abs((c.ent[0] if c.ent is not None else c.start) - g) <= tol if g is not None else False
                      for c in cands], dtype=np.float64)
        if g is not None and not y.any():
            continue  # Maverick's entity is not a candidate: nothing to learn from this pronoun
        out.append(Example(featurize(parsed, pi, cands), y))
    for m in resolved:
        m.ent = None
    return out


def fit(X: np.ndarray, y: np.ndarray, l2: float = L2, iterations: int = ITERATIONS) -> tuple[np.ndarray, ...]:
    """(weights, mean, scale) of an L2 logistic regression on standardised features (bias unpenalised)."""
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    bias = FEATURES.index("bias")
    mean[bias], scale[bias] = 0.0, 1.0
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale
    w = np.zeros(X.shape[1])
    reg = np.full(X.shape[1], l2)
    reg[bias] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(Z @ w, -30, 30)))
        grad = Z.T @ (p - y) + reg * w
        H = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(H, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-6:
            break
    return w, mean, scale


def train(docs: Sequence[tuple[Parsed, Sequence[Pair]]], version: str, meta: dict[str, Any] | None = None) -> PairModel:
    """A pair model from parsed documents and their Maverick pairs."""
    return train_examples([doc_examples(parsed, ref) for parsed, ref in docs], version, meta)


def doc_examples(parsed: Parsed, ref: Sequence[Pair]) -> tuple[list[Example], int]:
    """(examples, number of forward Maverick pairs) of one document."""
    return examples(parsed, ref), sum(1 for p in ref if p.entity.start < p.pronoun.start)


def train_examples(per_doc: Sequence[tuple[list[Example], int]], version: str,
                   meta: dict[str, Any] | None = None, objective: str = OBJECTIVE) -> PairModel:
    """Fit the scorer, then the pairing threshold with the best pair F1 on the training documents."""
    rows = [ex for exs, _ in per_doc for ex in exs]
    X = np.vstack([ex.X for ex in rows])
    y = np.concatenate([ex.y for ex in rows])
    w, mean, scale = fit(X, y)
    model = PairModel(w, mean, scale, 0.5, version, dict(meta or {}))
    probs = [model.prob(ex.X) for ex in rows]
    best_p = np.array([float(q.max()) for q in probs])
    right = np.array([bool(ex.y[int(np.argmax(q))]) for ex, q in zip(rows, probs)])
    n_ref = sum(n for _, n in per_doc)
    best = (-1.0, 0.5)
    for t in np.round(np.arange(0.025, 0.951, 0.025), 3):
        on = best_p >= t
        if objective == "count":  # as many pairs as Maverick: RC is a share of the pairs
            score = -abs(float(on.sum()) - n_ref)
        else:
            score = 2 * float((on & right).sum()) / (float(on.sum()) + n_ref)
        if score > best[0] + 1e-12 or best[0] == -1.0:
            best = (score, float(t))
    model.threshold = best[1]
    on = best_p >= model.threshold
    model.meta.update({"rows": int(len(y)), "positives": int(y.sum()), "objective": objective,
                       "train_f1": round(2 * float((on & right).sum()) / (float(on.sum()) + n_ref), 4)})
    return model


def corpus(folders: Sequence[str | Path]) -> list[tuple[str, Document, list[Pair]]]:
    """(name, document, Maverick pairs) of every English document with pairs in the corpus folders
    (each holds ``parsed/*.json`` and ``mentions/*.parquet``), sorted by name."""
    from chunkscope.coref.precomputed import load_pairs
    from chunkscope.ingest.reference import load_reference

    out = []
    for folder in folders:
        root = Path(folder)
        for f in sorted((root / "parsed").glob("*.json")):
            m = root / "mentions" / (f.stem + ".parquet")
            if not m.is_file():
                continue
            doc = load_reference(f)
            pairs, _ = load_pairs(m, len(doc.text))
            if pairs:
                out.append((f.stem, doc, pairs))
    return sorted(out, key=lambda x: x[0])


def parsed_docs(docs: Sequence[tuple[str, Document, list[Pair]]], cache: str | Path | None = None,
                log: Any = None) -> list[tuple[Parsed, list[Pair]]]:
    """Each document parsed (windows, mentions); pickled under ``cache`` when given, keyed by the code that reads
    them (:func:`parse_code_digest`), so a changed rule never meets a stale parse."""
    import pickle

    from chunkscope.coref import learned

    code = parse_code_digest()
    out = []
    for name, doc, pairs in docs:
        cfile = Path(cache) / f"parsed-{code}-{doc.sha256[:16]}.pkl" if cache else None
        if cfile is not None and cfile.is_file():
            parsed = pickle.loads(cfile.read_bytes())
        else:
            parsed = learned.parse(doc.text)
            if cfile is not None:
                cfile.parent.mkdir(parents=True, exist_ok=True)
                cfile.write_bytes(pickle.dumps(parsed))
        if log:
            log(f"parsed {name[:60]}: {len(parsed.pronouns)} pronouns, {len(parsed.cands)} candidates")
        out.append((parsed, pairs))
    return out


def parse_code_digest() -> str:
    """A hash of the source a parse depends on: the learned module and every module of the heuristic package (whose
    words, noun chunks and pleonastic test the learned parse uses), whatever module of the package a rule lives in.

    It only names the parse cache's files (``--cache``); the model file ``--check`` compares does not depend on it."""
    import hashlib

    from chunkscope.coref import heuristic, learned

    files = [Path(str(learned.__file__))] + sorted(Path(str(heuristic.__file__)).parent.glob("*.py"))
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]
