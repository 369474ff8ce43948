"""Score chunkings by retrieval: every question ranked against every chunking's chunks.

``evaluate(text, chunkings, questions, config)`` is the one place the retrieval check runs
(CLI ``chunkscope retrieval``, ``analyze --questions``, the app, the Chroma benchmark). Its
``to_dict()`` is the stable JSON ``chunkscope.retrieval/1`` (documented in docs/retrieval.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from chunkscope.retrieval import metrics as RM
from chunkscope.retrieval.metrics import Range
from chunkscope.retrieval.questions import Question, QuestionSet
from chunkscope.retrieval.retrievers import RETRIEVERS, Dense, QueryTokens, rank

SCHEMA = "chunkscope.retrieval/1"
KS = (1, 3, 5, 10)
CURVE = (250, 500, 1000, 2000, 4000)
KEYS = ("recall", "recall_std", "precision", "iou", "precision_omega", "full_recall_share")


@dataclass
class Config:
    """How the retrieval check ranks and scores: the retriever, k, the token budget, the curves."""

    retriever: str = "bm25"
    k: int = 5
    budget: int = 1000
    ks: tuple[int, ...] = KS
    curve: tuple[int, ...] = CURVE
    per_question: bool = True

    def validate(self) -> None:
        """Raise ValueError on an unknown retriever or a k or budget below 1."""
        if self.retriever not in RETRIEVERS:
            raise ValueError(f"retriever must be one of {', '.join(RETRIEVERS)} (got {self.retriever!r})")
        if self.k < 1:
            raise ValueError(f"k must be >= 1 (got {self.k})")
        if self.budget < 1:
            raise ValueError(f"the token budget must be >= 1 (got {self.budget})")

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON."""
        return {"retriever": self.retriever, "k": self.k, "budget": self.budget, "ks": list(self.ks),
                "curve": list(self.curve)}


@dataclass
class Chunking:
    """One chunking to score: its chunk spans and token counts."""

    id: str
    spans: list[Range]
    tokens: list[int]
    label: str = ""


@dataclass
class ChunkingScores:
    """One chunking's retrieval scores: at k, within the budget, at every k and along the curve."""

    id: str
    label: str
    chunks: int
    mean_tokens: float
    at_k: dict[str, Any]
    at_budget: dict[str, Any]
    at_ks: dict[str, dict[str, Any]]
    curve: list[dict[str, Any]]
    precision_omega_ideal: float | None
    per_question: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON."""
        return {"id": self.id, "label": self.label, "chunks": self.chunks, "mean_tokens": round(self.mean_tokens, 1),
                "at_k": self.at_k, "at_budget": self.at_budget, "at_ks": self.at_ks, "curve": self.curve,
                "precision_omega_ideal": self.precision_omega_ideal, "notes": self.notes,
                "seconds": round(self.seconds, 4), "per_question": self.per_question}


@dataclass
class RetrievalResult:
    """The retrieval check of every chunking on one question set."""

    config: Config
    questions: QuestionSet
    chunkings: list[ChunkingScores]
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    dense_model: str = ""

    def get(self, cid: str) -> ChunkingScores | None:
        """The scores of chunking ``cid`` (None when it was not scored)."""
        return next((c for c in self.chunkings if c.id == cid), None)

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON ``chunkscope.retrieval/1``."""
        return {
            "schema": SCHEMA,
            "retriever": self.config.retriever,
            "k": self.config.k,
            "budget": self.config.budget,
            "ks": list(self.config.ks),
            "curve_budgets": list(self.config.curve),
            "dense_model": self.dense_model or None,
            "question_source": self.questions.to_dict(),
            "questions": [q.to_dict() for q in self.questions.questions],
            "chunkings": [c.to_dict() for c in self.chunkings],
            "warnings": list(self.warnings),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


def aggregate(rows: Sequence[tuple[float, float, float]], omega: Sequence[float] | None) -> dict[str, Any]:
    """Mean ± std over questions of (recall, precision, IoU) triples; share fully recalled."""
    rec, rstd = RM.mean_std([r[0] for r in rows])
    prec, _ = RM.mean_std([r[1] for r in rows])
    iou, _ = RM.mean_std([r[2] for r in rows])
    om = RM.mean_std(list(omega))[0] if omega is not None else None
    full = sum(1 for r in rows if r[0] >= 1 - 1e-12) / len(rows) if rows else None
    return {"recall": rec, "recall_std": rstd, "precision": prec, "iou": iou, "precision_omega": om,
            "full_recall_share": full}


class _Lead:
    """Characters of a chunk's first m o200k tokens (each chunk tokenized once, when needed; a
    token that ends inside a multi-byte character does not count that character)."""

    def __init__(self, text: str, spans: Sequence[Range]):
        self.text, self.spans = text, spans
        self._ids: dict[int, list[int]] = {}
        self._part: dict[int, bool] = {}  # ids cover only a prefix of the chunk

    def __call__(self, i: int, m: int) -> int:
        from chunkscope.text.tokens import encoding

        enc = encoding()
        s, e = self.spans[i]
        ids = self._ids.get(i)
        if ids is None or (len(ids) <= m + 8 and self._part.get(i)):
            # a prefix long enough for m tokens is enough (tokens never span 16+ characters... almost:
            # when the prefix yields no more than m tokens, the whole chunk is encoded)
            width = 16 * (m + 1)
            part = width < e - s
            ids = enc.encode_ordinary(self.text[s:s + width] if part else self.text[s:e])
            if part and len(ids) <= m + 8:
                ids, part = enc.encode_ordinary(self.text[s:e]), False
            self._ids[i], self._part[i] = ids, part
        if m >= len(ids):
            return e - s
        return len(enc.decode_bytes(ids[:m]).decode("utf-8", errors="ignore"))


def evaluate(text: str, chunkings: Sequence[Chunking], questions: QuestionSet, config: Config | None = None,
             dense: Dense | None = None, language: str | None = None) -> RetrievalResult:
    """Rank every chunking's chunks for every question and score them (see ``metrics``)."""
    config = config or Config()
    config.validate()
    t0 = time.perf_counter()
    qs = questions.questions
    qtexts = [q.text for q in qs]
    qtok = QueryTokens(qtexts, language)
    qvecs = None
    if config.retriever in ("dense", "hybrid"):
        if dense is None:
            raise ValueError(f"the {config.retriever} retriever needs an embedding model")
        qvecs = np.asarray(dense.encode(qtexts), dtype=np.float32)  # once per question set
    timings = {"queries": time.perf_counter() - t0, "rank": 0.0, "score": 0.0}
    result = RetrievalResult(config, questions, [], dense_model=dense.name if dense and qvecs is not None else "")
    for ch in chunkings:
        t1 = time.perf_counter()
        spans = [(int(s), int(e)) for s, e in ch.spans]
        rankings = rank(config.retriever, spans, [text[s:e] for s, e in spans], qtok, qvecs, dense)
        t2 = time.perf_counter()
        timings["rank"] += t2 - t1
        tally = _Tally(text, spans, ch.tokens, config)
        for q, (order, scores) in zip(qs, rankings):
            tally.add(q, order.tolist(), scores)
        timings["score"] += time.perf_counter() - t2
        result.chunkings.append(tally.scores(ch, t1))
    result.timings = {**timings, "total": time.perf_counter() - t0}
    return result


class _Tally:
    """One chunking's per-question results (at every k and budget), gathered into its ``ChunkingScores``."""

    def __init__(self, text: str, spans: list[Range], tokens: Sequence[int], config: Config):
        self.spans, self.tokens, self.config = spans, tokens, config
        self.lead = _Lead(text, spans)
        self.bounds = RM.span_bounds(spans)
        self.ks = sorted({config.k, *config.ks})
        self.budgets = sorted({config.budget, *config.curve})
        self.at: dict[int, list[tuple[float, float, float]]] = {k: [] for k in self.ks}
        self.at_b: dict[int, list[tuple[float, float, float]]] = {b: [] for b in self.budgets}
        self.omega_k: list[float] = []
        self.omega_ideal: list[float] = []
        self.per_q: list[dict[str, Any]] = []

    def add(self, q: Question, order: list[int], scores: Any) -> None:
        """Score one question's ranking (``order``: chunk indices best first, ``scores`` in that order)."""
        spans = self.spans
        holders = RM.evidence_chunks(spans, q.evidence, self.bounds)
        h = max(1, len(holders))
        rk, rb = RM.walk(order, spans, self.tokens, q.evidence, [*self.ks, h], self.budgets, self.lead)
        for k in self.ks:
            self.at[k].append(rk[k])
        for b in self.budgets:
            self.at_b[b].append(rb[b])
        self.omega_k.append(rk[h][1])
        self.omega_ideal.append(RM.precision_omega_ideal(spans, q.evidence, holders))
        if self.config.per_question:
            self.per_q.append(self._detail(q, order, scores, holders))

    def _detail(self, q: Question, order: list[int], scores: Any, holders: Sequence[int]) -> dict[str, Any]:
        """The per-question row of the JSON: what top-k and the budget retrieved, and what they missed."""
        spans, k = self.spans, self.config.k
        sk = RM.score([spans[i] for i in order[:k]], q.evidence)
        taken = RM.take_budget(order, spans, self.tokens, self.config.budget, self.lead)
        sb = RM.score([(s, e) for _, s, e in taken], q.evidence)
        pos = {int(i): r for r, i in enumerate(order)}
        return {
            "retrieved": [[spans[i][0], spans[i][1], round(float(scores[r]), 4)] for r, i in enumerate(order[:k])],
            "chunk_ids": [int(i) for i in order[:k]],
            "recall": sk.recall, "precision": sk.precision, "iou": sk.iou,
            "missed": [list(m) for m in sk.missed],
            "evidence_chunks": [[int(i), pos.get(i, -1) + 1] for i in holders],  # (chunk, its rank)
            "budget": {"retrieved": [[s, e, round(float(scores[pos[i]]), 4)] for i, s, e in taken],
                       "chunk_ids": [int(i) for i, _, _ in taken],
                       "recall": sb.recall, "precision": sb.precision, "iou": sb.iou,
                       "missed": [list(m) for m in sb.missed]},
        }

    def scores(self, ch: Chunking, started: float) -> ChunkingScores:
        """The aggregates over the questions added (``started``: when this chunking's ranking began)."""
        config, n = self.config, len(self.spans)
        notes = [f"only {n} chunk(s), fewer than k = {config.k}: top-k retrieves every chunk"] if n < config.k else []
        curve_rows = []
        for b in config.curve:
            m, sd = RM.mean_std([x[0] for x in self.at_b[b]])
            curve_rows.append({"budget": b, "recall": m, "recall_std": sd})
        toks = list(ch.tokens)
        return ChunkingScores(
            ch.id, ch.label or ch.id, n, (sum(toks) / n) if n else 0.0, aggregate(self.at[config.k], self.omega_k),
            aggregate(self.at_b[config.budget], None), {str(k): aggregate(self.at[k], None) for k in config.ks},
            curve_rows, RM.mean_std(self.omega_ideal)[0], self.per_q, time.perf_counter() - started, notes)


def chunkings_from_report(report: Any) -> list[Chunking]:
    """The OK chunkings of a ``Report`` (or of its ``ChunkingResult`` list)."""
    rows = report.chunkings if hasattr(report, "chunkings") else report
    return [Chunking(c.id, [(r.start, r.end) for r in c.chunks], [r.tokens for r in c.chunks], c.label)
            for c in rows if c.ok and c.chunks]


def leaderboard(result: RetrievalResult | dict[str, Any]) -> list[dict[str, Any]]:
    """One row per chunking, best budgeted recall first (what the CLI and the app show)."""
    d = result.to_dict() if isinstance(result, RetrievalResult) else result
    rows = []
    for c in d["chunkings"]:
        a, b = c["at_k"], c["at_budget"]
        rows.append({"chunking": c["id"], "chunks": c["chunks"], "mean tokens": c["mean_tokens"],
                     "recall@budget": b["recall"], "± std": b["recall_std"], "full@budget": b["full_recall_share"],
                     "precision@budget": b["precision"], "IoU@budget": b["iou"],
                     f"recall@{d['k']}": a["recall"], f"precision@{d['k']}": a["precision"],
                     f"IoU@{d['k']}": a["iou"], f"precision Ω@{d['k']}": a["precision_omega"]})
    rows.sort(key=lambda r: (-(r["recall@budget"] or 0.0), r["chunking"]))
    return rows


def note_lines(result: RetrievalResult | dict[str, Any]) -> list[str]:
    """One line per chunking note ("<id>: only 2 chunk(s), fewer than k = 5..."), as the CLI and the app show them."""
    d = result.to_dict() if isinstance(result, RetrievalResult) else result
    return [f"{c['id']}: {n}" for c in d["chunkings"] for n in c.get("notes") or []]


def recall_by_chunking(block: dict[str, Any] | None) -> dict[str, float]:
    """Budgeted recall per chunking id from a report's ``retrieval`` block (what may join the score)."""
    if not block:
        return {}
    return {c["id"]: c["at_budget"]["recall"] for c in block.get("chunkings", [])
            if c.get("at_budget", {}).get("recall") is not None}
