"""Stage 4, embeddings: the document's units embedded once; ICC and DCC (DESIGN section 7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from chunkscope import metrics as M
from chunkscope.analysis.settings import Settings
from chunkscope.document import Document, Span
from chunkscope.report import ChunkingResult

if TYPE_CHECKING:
    from chunkscope.analysis.resources import ResourcesProtocol
    from chunkscope.embeddings.spans import SpanEmbedder

Embed = Callable[[list[Span]], Any]
EmbeddingOutcome = tuple[Embed | None, dict[str, Any], str]  # (embed, embedder facts, why it is unavailable)


def span_embedding(doc: Document, resources: ResourcesProtocol,
                   on_units: Callable[[SpanEmbedder], None] | None = None) -> EmbeddingOutcome:
    """Embed the document's units once: (embed(spans), embedder facts, "").

    (None, {}, reason) when the model is unavailable (ICC/DCC then become None with the reason).
    ``on_units(span_embedder)`` hears when the units are known, before they are embedded.
    """
    try:
        se = resources.span_embedder(doc)
        if on_units is not None:
            se.prepare_units()
            on_units(se)
        se.prepare()  # embed the document's units once (composed mode); a no-op for exact
        return se.embed, embedder_info(resources, se), ""
    except Exception as exc:  # noqa: BLE001 - boundary: a model that cannot load or run (its library may raise
        # anything) makes ICC/DCC None with the reason, never a failed analysis
        return None, {}, f"embeddings unavailable: {exc}"


def embed_counters(resources: ResourcesProtocol, doc: Document) -> dict[str, Any]:
    """The embedding counters now (empty when nothing is loaded yet).

    The loaded model's (model calls, texts, cache hits, seconds: they add up over every analysis in the process)
    and those of ``doc``'s span embedder when an earlier analysis of it left one (spans, fragments, ...).
    """
    found = resources.cached_span_embedder(doc)
    if found is not None:
        return {k: v for k, v in found.stats.items()  # "units": how many the document has, not a count of work
                if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "units"}
    emb = resources.loaded_embedder()
    return emb.stats.to_dict() if emb is not None else {}


def embedder_info(resources: ResourcesProtocol, se: Any, since: dict[str, Any] | None = None) -> dict[str, Any]:
    """Facts about the embedding run: model, its input limit, unit/span statistics, warnings.

    ``since``: the model's counters when the analysis began (``embed_counters``), so the stats are this
    analysis's alone, the same whichever documents the process analysed before (corpus workers, the app).
    """
    info: dict[str, Any] = {}
    emb = resources.embedder()
    for attr in ("name", "max_tokens", "backend", "precision", "device"):
        if hasattr(emb, attr):
            info[attr if attr != "name" else "model"] = getattr(emb, attr)
    stats = getattr(se, "stats", None)
    if stats:
        info["stats"] = dict(stats() if callable(stats) else stats)
        for k, v in (since or {}).items():
            if isinstance(info["stats"].get(k), (int, float)) and isinstance(v, (int, float)):
                info["stats"][k] -= v
        for k, v in info["stats"].items():
            if isinstance(v, float):
                info["stats"][k] = round(v, 4)
    w = getattr(se, "warnings", None)
    if w:
        info["warnings"] = list(w)
    return info


def metric_spans(doc: Document, r: ChunkingResult, settings: Settings) -> list[Span]:
    """The spans ``embedding_metrics`` will embed for one OK chunking (``metrics.embedding_requests``).

    So that their edge fragments can be embedded ahead (``SpanEmbedder.prefetch``).
    """
    return M.embedding_requests([(c.start, c.end) for c in r.chunks], [c.tokens for c in r.chunks],
                                doc.split_points, window_tokens=settings.window_tokens,
                                window_step=settings.window_step, text=doc.text)


def embedding_metrics(doc: Document, r: ChunkingResult, settings: Settings,
                      embed: Embed | None) -> dict[str, M.MetricResult | None]:
    """ICC and DCC of one OK chunking; None (with the stage's reason) without an embedder."""
    if embed is None:
        return {"ICC": None, "DCC": None}
    spans = [Span(c.start, c.end) for c in r.chunks]
    return {
        "ICC": M.intrachunk_cohesion(spans, doc.split_points, embed),
        "DCC": M.document_contextual_coherence(
            spans, [c.tokens for c in r.chunks], embed, window_tokens=settings.window_tokens,
            window_step=settings.window_step, text=doc.text,
        ),
    }
