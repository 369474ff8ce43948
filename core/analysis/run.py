"""``analyze(document, settings) -> Report``: the stages of DESIGN section 12, in order.

document (given) → structure (chunkings that need no model; SC, BI) → coreference (pairs; RC) →
embeddings (units once; the chunkings that need the embedder; ICC, DCC) → LLM chunkings →
selection. Each stage fills the same ``Report``; ``progress(stage, fraction, message)`` hears
about each step. One function serves the CLI, the app and corpus mode, so their numbers agree.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from chunkscope.analysis.coreference import Pairs, coref_pairs, reference_metrics
from chunkscope.analysis.embedding import Embed, embedder_info, embedding_metrics, span_embedding
from chunkscope.analysis.resources import Resources
from chunkscope.analysis.selection import rescore
from chunkscope.analysis.settings import Settings
from chunkscope.analysis.structure import chunk_one, chunking_plan, needs, structure_metrics
from chunkscope.document import Document
from chunkscope.provenance import provenance
from chunkscope.report import METRICS, ChunkingResult, Report

STAGES = ("structure", "coreference", "embeddings", "llm", "selection")

Progress = Callable[[str, float, str], None]  # (stage, fraction of stage done, message)


def _no_progress(stage: str, fraction: float, message: str) -> None:
    return None


def score_metrics(doc: Document, r: ChunkingResult, settings: Settings, pairs: Pairs | None, rc_reason: str,
                  embed: Embed | None, emb_error: str = "") -> float:
    """Fill ``r.metrics``/``metric_reasons``/``diagnostics`` for one OK chunking; returns seconds spent.

    ``pairs``: coreference pairs or None (then RC is None with ``rc_reason``); ``embed``: the
    span embedder (None: ICC/DCC are None with ``emb_error``). Shared by analyze and tune.
    """
    t0 = time.perf_counter()
    found = structure_metrics(doc, r, settings) | reference_metrics(r, pairs) | embedding_metrics(doc, r, settings, embed)
    for m in METRICS:
        res = found.get(m)
        if res is None:
            r.metrics[m] = None
            r.metric_reasons[m] = rc_reason if m == "RC" else (emb_error or "not computed")
        else:
            r.metrics[m] = res.value
            if res.value is None:
                r.metric_reasons[m] = res.reason
            r.diagnostics[m] = res.details
    dt = time.perf_counter() - t0
    r.seconds += dt
    return dt


def analyze(doc: Document, settings: Settings | None = None, resources: Resources | None = None,
            progress: Progress | None = None, retrieval: Any = None) -> Report:
    """``retrieval``: an ``analysis.retrieval.RetrievalRequest`` (questions) adds the report's
    optional ``retrieval`` block (stage ``analysis.retrieval``, after the LLM chunkings)."""
    settings = settings or Settings()
    settings.validate()
    progress = progress or _no_progress
    resources = (resources or Resources(settings.embedder, settings.embedding_mode)).for_settings(
        settings.embedder, settings.embedding_mode)
    t_total = time.perf_counter()
    embed_s0 = resources.embedding_seconds()
    timings = {k: 0.0 for k in ("chunk", "coref", "embed", "metrics")}
    warnings: list[str] = list(doc.warnings)
    plan = chunking_plan(settings)
    by_stage: dict[str, list[tuple[int, tuple[str, str, dict[str, Any]]]]] = {"": [], "embedder": [], "llm": []}
    for i, item in enumerate(plan):
        by_stage[needs(item[1])].append((i, item))
    results: list[ChunkingResult | None] = [None] * len(plan)

    def run_chunkings(stage: str, items: list) -> None:
        for k, (i, (cid, base_id, overrides)) in enumerate(items):
            progress(stage, k / max(1, len(items)), cid)
            cr = chunk_one(doc, cid, base_id, overrides, resources, candidate=cid in settings.candidates)
            timings["chunk"] += cr.seconds
            results[i] = cr

    # structure: every chunking that needs no model
    run_chunkings("structure", by_stage[""])
    progress("structure", 1.0, f"{sum(1 for r in results if r is not None and r.ok)} chunkings ok")

    # coreference (RC)
    progress("coreference", 0.0, settings.coref)
    t0 = time.perf_counter()
    pairs, rc_reason, coref_info = coref_pairs(doc, settings)
    warnings.extend(f"coreference: {w}" for w in coref_info.get("warnings", []))
    timings["coref"] = time.perf_counter() - t0
    progress("coreference", 1.0, rc_reason or f"{len(pairs or [])} entity-pronoun pairs")

    # embeddings: units once, then the chunkings that need the embedder
    embed: Embed | None = None
    emb_info: dict[str, Any] = {"model": settings.embedder or "all-MiniLM-L6-v2 (bundled)",
                                "mode": settings.embedding_mode}
    emb_error = ""
    if any(r is not None and r.ok for r in results) or by_stage["embedder"] or by_stage["llm"]:
        progress("embeddings", 0.0, "loading model")
        t0 = time.perf_counter()
        embed, more, emb_error = span_embedding(doc, resources)
        emb_info.update(more)
        if emb_error:
            warnings.append(emb_error)
        timings["embed"] += time.perf_counter() - t0
    run_chunkings("embeddings", by_stage["embedder"])
    progress("embeddings", 1.0, emb_error or "document units embedded")

    # LLM chunkings
    run_chunkings("llm", by_stage["llm"])
    progress("llm", 1.0, f"{len(by_stage['llm'])} LLM chunking(s)")

    retrieval_block = None
    if retrieval is not None:  # optional retrieval check (DESIGN section 11)
        from chunkscope.analysis.retrieval import retrieval_stage

        retrieval_block, why = retrieval_stage(doc, results, retrieval, resources, progress)
        warnings.extend([why] if why else [])

    # metrics of every OK chunking (values do not depend on the order)
    done = [r for r in results if r is not None]
    ok = [r for r in done if r.ok]
    for k, r in enumerate(ok):
        progress("selection", k / max(1, len(ok)) * 0.9, r.id)
        timings["metrics"] += score_metrics(doc, r, settings, pairs, rc_reason, embed, emb_error)
    if embed is not None:
        # spans are embedded while scoring: only now are the stats and warnings (exact mode:
        # texts truncated by the model) complete
        try:
            se = resources.span_embedder(doc)
            emb_info.update(embedder_info(resources, se))
            warnings.extend(w for w in (getattr(se, "warnings", None) or []) if w not in warnings)
        except Exception:  # facts only: never fail an analysis for them
            pass

    report = Report(
        document=document_facts(doc),
        settings=settings.to_dict(),
        chunkings=done,
        winner=None,
        explanation="",
        timings=timings,
        warnings=warnings,
        coref=coref_info,
        embedder=emb_info,
        provenance=provenance(settings, emb_info, coref_info),
        retrieval=retrieval_block,
    )
    rescore(report, settings.weights, settings.candidates, settings.retrieval_weight)
    # time spent inside the embedding model (loading + encoding), wherever it happened
    # (the semantic chunker embeds sentences during chunking)
    timings["embed"] = resources.embedding_seconds() - embed_s0
    timings["total"] = time.perf_counter() - t_total
    progress("selection", 1.0, f"winner: {report.winner}")
    return report


def document_facts(doc: Document) -> dict[str, Any]:
    from chunkscope.tokens import count_tokens

    return {
        "name": doc.name,
        "sha256": doc.sha256,
        "format": doc.source_format,
        "chars": len(doc.text),
        "tokens": count_tokens(doc.text),
        "language": doc.language,
        "pages": [[p.start, p.end] for p in doc.pages],
        "blocks": [[b.start, b.end] for b in doc.blocks],
    }
