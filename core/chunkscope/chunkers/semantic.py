"""``semantic``: embedding-breakpoint chunker in the manner of LangChain's SemanticChunker.

1. Sentences come from ``chunkscope.text.sentences.sentence_spans`` (spans, whitespace attached).
2. Each sentence is embedded together with ``buffer_size`` sentences on each side.
3. Cosine distance between each buffered sentence and the next one.
4. A breakpoint follows sentence ``i`` when its distance (or, for ``gradient``, the
   gradient of the distance curve) exceeds the threshold:
   ``gradient``/``percentile``: the ``threshold_amount``-th percentile (default 95);
   ``standard_deviation``: mean + amount * std (default 3);
   ``interquartile``: mean + amount * IQR (default 1.5).
5. A chunk runs from the start of its first sentence to the start of the next chunk, so
   chunks tile the document. Raw chunks have no size cap (``semantic+pp`` fixes sizes).

Embeddings: ``exact`` embeds each buffered text with the run's shared Embedder (texts
cached by content); ``composed`` takes the span embeddings of the run's SpanEmbedder, i.e.
the sentence-unit embeddings already computed for the metrics (no new model call);
``auto`` uses ``composed`` when the run context offers it, else ``exact``.

``info`` carries the diagnostics the tune view plots: sentence spans, distances, the
compared values (gradient or distances), threshold and breakpoints.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamError, ParamSpec, RunContext
from chunkscope.document import Document, Span

THRESHOLD_TYPES = ("gradient", "percentile", "standard_deviation", "interquartile")
DEFAULT_AMOUNTS = {"gradient": 95.0, "percentile": 95.0, "standard_deviation": 3.0, "interquartile": 1.5}
_EPS = 1e-6  # distances closer than this are equal (identical sentences give float noise)


def buffered_windows(n: int, buffer_size: int) -> list[tuple[int, int]]:
    """For each sentence i, the sentence index range [lo, hi] of its buffered window."""
    return [(max(0, i - buffer_size), min(n - 1, i + buffer_size)) for i in range(n)]


def cosine_distances(emb: np.ndarray) -> np.ndarray:
    """1 - cos between consecutive rows, rounded so identical texts give exactly 0."""
    if len(emb) < 2:
        return np.zeros(0, dtype=np.float64)
    e = np.asarray(emb, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    e = e / np.where(norms == 0, 1.0, norms)
    sims = np.sum(e[:-1] * e[1:], axis=1)
    d = np.clip(1.0 - sims, 0.0, 2.0)
    return np.round(d / _EPS) * _EPS


def breakpoint_threshold(distances: np.ndarray, threshold_type: str, amount: float) -> tuple[float, np.ndarray]:
    """(threshold, values compared with it): LangChain's four thresholding rules."""
    if threshold_type == "percentile":
        return float(np.percentile(distances, amount)), distances
    if threshold_type == "standard_deviation":
        return float(np.mean(distances) + amount * np.std(distances)), distances
    if threshold_type == "interquartile":
        q1, q3 = np.percentile(distances, [25, 75])
        return float(np.mean(distances) + amount * (q3 - q1)), distances
    if threshold_type == "gradient":
        grad = np.gradient(distances) if len(distances) >= 2 else np.zeros_like(distances)
        grad = np.round(grad / _EPS) * _EPS
        return float(np.percentile(grad, amount)), grad
    raise ParamError(f"threshold_type must be one of {', '.join(THRESHOLD_TYPES)} (got {threshold_type!r})")


def _embed_windows(doc: Document, sents: list[Span], windows: list[tuple[int, int]],
                   ctx: RunContext | None, mode: str) -> tuple[np.ndarray, str, str]:
    """Embeddings of the buffered windows, the mode used and the model name."""
    pairs = [(sents[lo].start, sents[hi].end) for lo, hi in windows]
    if mode in ("auto", "composed") and ctx is not None and hasattr(ctx, "span_embedder"):
        se = ctx.span_embedder(doc)
        if getattr(se, "mode", "composed") == "composed" or mode == "composed":
            emb = se.embed([Span(a, b) for a, b in pairs])
            name = getattr(getattr(se, "embedder", None), "name", "") or ""
            return np.asarray(emb), "composed", name
    if ctx is not None and hasattr(ctx, "embedder"):
        embedder = ctx.embedder()
    else:
        from chunkscope.embeddings.embedder import Embedder

        embedder = Embedder.load()
    # the window text: its sentences' visible text joined by one space (as LangChain does)
    texts = [" ".join(doc.text[s.start:s.end].strip() for s in sents[lo:hi + 1]) for lo, hi in windows]
    return np.asarray(embedder.encode(texts)), "exact", str(getattr(embedder, "name", ""))


def chunk_semantic(doc: Document, params: dict[str, Any], ctx: RunContext | None = None) -> ChunkResult:
    """Cut between sentences where the embedding distance to the next sentence jumps past the threshold."""
    from chunkscope.text.sentences import sentence_spans

    text = doc.text
    ttype = str(params.get("threshold_type", "gradient"))
    if ttype not in THRESHOLD_TYPES:
        raise ParamError(f"threshold_type must be one of {', '.join(THRESHOLD_TYPES)} (got {ttype!r})")
    amount = float(params.get("threshold_amount") or 0.0) or DEFAULT_AMOUNTS[ttype]
    if ttype in ("gradient", "percentile") and not 0 <= amount <= 100:
        raise ParamError(f"threshold_amount for {ttype} is a percentile in [0, 100] (got {amount:g})")
    buffer_size = int(params.get("buffer_size", 1))
    mode = str(params.get("embedding", "auto"))

    if not text.strip():
        return ChunkResult(spans=[], info={"sentences": [], "distances": [], "breakpoints": []})
    sents = sentence_spans(text)
    base = {"threshold_type": ttype, "threshold_amount": amount, "buffer_size": buffer_size,
            "sentences": [[s.start, s.end] for s in sents]}
    if len(sents) < 2:
        return ChunkResult(spans=[Span(0, len(text))], info={
            **base, "distances": [], "compared": [], "threshold": None, "breakpoints": [],
            "note": "fewer than two sentences: one chunk"})

    windows = buffered_windows(len(sents), buffer_size)
    emb, used_mode, model = _embed_windows(doc, sents, windows, ctx, mode)
    distances = cosine_distances(emb)
    # identical neighbouring sentences are never a topic change, even where their buffered
    # windows differ (document edges): without this, repeated lines produce spurious cuts
    visible = [" ".join(text[s.start:s.end].split()) for s in sents]
    for i in range(len(distances)):
        if visible[i] == visible[i + 1]:
            distances[i] = 0.0
    threshold, compared = breakpoint_threshold(distances, ttype, amount)
    # strictly above the threshold (a flat curve gives no breakpoint), and never between
    # neighbours at distance 0 (the gradient can rank such a point high next to a drop)
    breakpoints = [int(i) for i in np.nonzero((compared > threshold + _EPS / 2) & (distances > _EPS / 2))[0]]

    starts = [0] + [sents[i + 1].start for i in breakpoints]
    ends = starts[1:] + [len(text)]
    spans = [Span(a, b) for a, b in zip(starts, ends) if b > a]
    info = {
        **base,
        "embedding": used_mode,
        "embedder": model,
        "distances": [round(float(d), 6) for d in distances],
        "compared": [round(float(v), 6) for v in compared],
        "threshold": round(threshold, 6),
        "breakpoints": breakpoints,  # chunk ends after sentence i
    }
    return ChunkResult(spans=spans, info=info)


PARAMS = (
    ParamSpec("threshold_type", str, "gradient", "breakpoint rule", choices=THRESHOLD_TYPES),
    ParamSpec("threshold_amount", float, 0.0,
              "percentile for gradient/percentile, multiplier for standard_deviation/interquartile; "
              "0 = default (95, 95, 3, 1.5)", min=0,
              unset="the type's default: 95 for gradient/percentile, 3 for standard_deviation, 1.5 for interquartile"),
    ParamSpec("buffer_size", int, 1, "sentences embedded on each side of a sentence", min=0, max=10),
    ParamSpec("embedding", str, "auto", "exact: embed window texts; composed: reuse the run's sentence-unit "
              "embeddings; auto: composed when available", choices=("auto", "exact", "composed")),
)


def validate_semantic(params: dict[str, Any]) -> list[str]:
    """Problems with the threshold parameters (a percentile outside [0, 100]); empty when they are fine."""
    ttype = params.get("threshold_type", "gradient")
    amount = float(params.get("threshold_amount") or 0.0)
    if ttype in ("gradient", "percentile") and not 0 <= amount <= 100:
        return [f"threshold_amount for {ttype} is a percentile in [0, 100] (got {amount:g})"]
    return []


SPEC = ChunkerSpec(
    id="semantic",
    label="Semantic (embedding breakpoints)",
    description="Splits where the embedding distance between neighbouring sentences jumps "
                "(gradient above its 95th percentile, one-sentence buffer), as LangChain's SemanticChunker.",
    params=PARAMS,
    fn=chunk_semantic,
    family="semantic",
    needs="embedder",
    validate=validate_semantic,
)


def specs() -> list[ChunkerSpec]:
    """The semantic family's spec (``semantic``)."""
    return [SPEC]
