"""``analyze(document, settings) -> Report``: the stages of DESIGN section 12, in order.

document (given) → structure (chunkings that need no model; SC, BI) → coreference (pairs; RC) →
embeddings (units once; the chunkings that need the embedder; ICC, DCC) → LLM chunkings →
selection. Each stage fills the same ``Report``; ``progress(stage, fraction, message)`` hears
about each step. One function serves the CLI, the app and corpus mode, so their numbers agree.

The analysis is progressive: each stage scores the metrics it makes possible as soon as it ends
(SC and BI after structure, RC after coreference, ICC and DCC after embeddings), and
``on_partial(report, stage)`` receives a snapshot after every stage: a provisional ``Report``
(``provisional=True``, ``pending`` names the metrics and chunkings still to come, their
``metric_reasons`` say "pending: ..."; RC known not to come, with coreference off or for a
non-English document, is not pending), ranked and explained from what is known. Metric values
do not depend on the order in which they are computed, so the final report is the same with or
without ``on_partial`` (tests check it). ``cancel()`` returning True stops the run between steps
with ``AnalysisCancelled`` carrying the last snapshot.
"""

from __future__ import annotations

import copy
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from chunkscope import metrics as M
from chunkscope.analysis.coreference import Pairs, coref_pairs, rc_not_computed, reference_metrics
from chunkscope.analysis.embedding import (
    Embed,
    embed_counters,
    embedder_info,
    embedding_metrics,
    metric_spans,
    span_embedding,
)
from chunkscope.analysis.resources import Resources
from chunkscope.analysis.selection import rescore
from chunkscope.analysis.settings import Settings
from chunkscope.analysis.structure import chunk_one, chunking_plan, needs, structure_metrics, uses_sentences
from chunkscope.analysis.uncertainty import uncertainty_facts
from chunkscope.document import Document
from chunkscope.embeddings.embedder import backend_facts
from chunkscope.provenance import provenance
from chunkscope.report import METRICS, ChunkingResult, Report, attach_boxes
from chunkscope.text.nlp import import_pipeline

STAGES = ("structure", "coreference", "embeddings", "llm", "selection")
HELP_TEXTS = 64  # texts of the unit pass this thread runs between two looks at the clock (progress, cancel)
# Report.timings keys: disjoint stages that add up to "total" (the CLI and corpus mode add "parse"
# to both). Kept for the JSON schema: chunk, coref, embed, metrics, total; added: other.
TIMING_KEYS = ("chunk", "coref", "embed", "metrics", "other", "total")

Progress = Callable[[str, float, str], None]  # (stage, fraction of stage done, message)
OnPartial = Callable[[Report, str], None]  # (provisional snapshot, the stage just finished)

# the metrics each stage makes possible (SC and BI need nothing but the chunks)
STAGE_METRICS = {"structure": ("SC", "BI"), "coreference": ("RC",), "embeddings": ("ICC", "DCC")}
PENDING_REASON = {"RC": "pending: coreference", "ICC": "pending: embeddings", "DCC": "pending: embeddings"}
# test setting: the embedding stage waits until this file exists (the browser test looks at the
# provisional view first); at most HOLD_MAX_S seconds
HOLD_ENV = "CHUNKSCOPE_TEST_HOLD_EMBEDDINGS"
HOLD_MAX_S = 300.0


class AnalysisCancelled(Exception):
    """``cancel()`` asked the run to stop; ``partial`` is the last snapshot (or None before any)."""

    def __init__(self, partial: Report | None, stage: str):
        super().__init__(f"analysis cancelled during {stage}")
        self.partial = partial
        self.stage = stage


def _no_progress(stage: str, fraction: float, message: str) -> None:
    return None


def _apply(r: ChunkingResult, found: dict[str, M.MetricResult | None], reasons: dict[str, str]) -> None:
    """Store computed metrics (value, reason when None, diagnostics) on ``r``; ``reasons``: why a
    metric the stage could not compute (None in ``found``) is missing."""
    for m, res in found.items():
        r.metric_reasons.pop(m, None)
        r.diagnostics.pop(m, None)
        if res is None:
            r.metrics[m] = None
            r.metric_reasons[m] = reasons.get(m) or "not computed"
        else:
            r.metrics[m] = res.value
            if res.value is None:
                r.metric_reasons[m] = res.reason
            r.diagnostics[m] = res.details
    # the same key order however the metrics arrived (the JSON of a progressive run is identical)
    r.metric_reasons = {m: r.metric_reasons[m] for m in METRICS if m in r.metric_reasons}
    r.diagnostics = {m: r.diagnostics[m] for m in METRICS if m in r.diagnostics}


def all_metrics(doc: Document, r: ChunkingResult, settings: Settings, pairs: Pairs | None,
                embed: Embed | None) -> dict[str, M.MetricResult | None]:
    """Every metric of one OK chunking (a chunking produced after the stages that score the others)."""
    return structure_metrics(doc, r, settings) | reference_metrics(r, pairs) | embedding_metrics(doc, r, settings, embed)


def fill_metrics(doc: Document, r: ChunkingResult, settings: Settings, pairs: Pairs | None, rc_reason: str,
                  embed: Embed | None, emb_error: str = "") -> float:
    """Fill ``r.metrics``/``metric_reasons``/``diagnostics`` for one OK chunking; returns seconds spent.

    ``pairs``: coreference pairs or None (then RC is None with ``rc_reason``); ``embed``: the
    span embedder (None: ICC/DCC are None with ``emb_error``). Shared by analyze and tune.
    """
    t0 = time.perf_counter()
    found = all_metrics(doc, r, settings, pairs, embed)
    _apply(r, {m: found.get(m) for m in METRICS}, {"RC": rc_reason, "ICC": emb_error, "DCC": emb_error})
    dt = time.perf_counter() - t0
    r.seconds += dt
    return dt


def _hold_embeddings(cancelled: Callable[[], bool]) -> None:
    flag = os.environ.get(HOLD_ENV)
    if not flag:
        return
    t0 = time.perf_counter()
    while not Path(flag).exists() and time.perf_counter() - t0 < HOLD_MAX_S and not cancelled():
        time.sleep(0.1)


def analyze(doc: Document, settings: Settings | None = None, resources: Resources | None = None,
            progress: Progress | None = None, on_partial: OnPartial | None = None,
            cancel: Callable[[], bool] | None = None, retrieval: Any = None) -> Report:
    """``retrieval``: an ``analysis.retrieval.RetrievalRequest`` (questions) adds the report's
    optional ``retrieval`` block (stage ``analysis.retrieval``, after the LLM chunkings)."""
    settings = settings or Settings()
    settings.validate()
    progress = progress or _no_progress
    cancelled = cancel or (lambda: False)
    resources = (resources or Resources(settings.embedder, settings.embedding_mode,
                                        backend=settings.embedding_backend)).for_settings(
        settings.embedder, settings.embedding_mode, settings.embedding_backend)
    t_total = time.perf_counter()
    stats0 = embed_counters(resources, doc)  # counters add up over the process: this analysis reports its own
    # disjoint stage timings that add up to the total: time inside the embedding model (loading,
    # encoding) is "embed" wherever it happens (the semantic chunker embeds while chunking, exact
    # mode while scoring), so "chunk" and "metrics" exclude it; "other" is the rest (bookkeeping).
    timings = {k: 0.0 for k in TIMING_KEYS if k != "total"}
    warnings: list[str] = list(doc.warnings)
    plan = chunking_plan(settings)
    by_stage: dict[str, list[tuple[int, tuple[str, str, dict[str, Any]]]]] = {"": [], "embedder": [], "llm": []}
    for i, item in enumerate(plan):
        by_stage[needs(item[1])].append((i, item))
    results: list[ChunkingResult | None] = [None] * len(plan)
    coref_info: dict[str, Any] = {}
    emb_info: dict[str, Any] = {"model": settings.embedder or "all-MiniLM-L6-v2 (bundled)",
                                "mode": settings.embedding_mode,
                                **backend_facts(settings.embedder, settings.embedding_backend)}
    last: list[Report] = []  # the latest snapshot (what a cancelled run leaves)
    abandoned = threading.Event()  # the run stopped (or needs no embeddings): the unit pass need not start

    def check(stage: str) -> None:
        if cancelled():
            abandoned.set()
            raise AnalysisCancelled(last[-1] if last else None, stage)

    def run_chunkings(stage: str, items: list, done: int = 0, of: int | None = None) -> list[ChunkingResult]:
        out = []
        of = of if of is not None else len(items)
        for k, (i, (cid, base_id, overrides)) in enumerate(items):
            check(stage)
            progress(stage, (done + k) / max(1, of), cid)
            e0 = resources.embedding_seconds()
            cr = chunk_one(doc, cid, base_id, overrides, resources, candidate=cid in settings.candidates)
            # structural chunkers never use the model (the unit pass may run meanwhile in its thread)
            model_s = resources.embedding_seconds() - e0 if stage != "structure" else 0.0
            timings["chunk"] += max(0.0, cr.seconds - model_s)
            results[i] = cr
            out.append(cr)
            if not cr.ok:  # did not run: say so, rather than leave its id up as if it were running
                progress(stage, (done + k + 1) / max(1, of), f"{cid} {cr.status} ({cr.reason or 'no reason given'})")
        return out

    def score(stage: str, rs: list[ChunkingResult], found_of: Callable[[ChunkingResult], dict], reasons: dict) -> None:
        own_model = stage in ("embeddings", "llm")  # before that, model time is the unit pass's (its thread)
        for r in rs:
            if r.ok:
                t0, e0 = time.perf_counter(), resources.embedding_seconds()
                _apply(r, found_of(r), reasons)
                dt = time.perf_counter() - t0
                r.seconds += dt
                model_s = resources.embedding_seconds() - e0 if own_model else 0.0
                timings["metrics"] += max(0.0, dt - model_s)  # model time is "embed"

    def build(pending: list[str]) -> Report:
        report = Report(
            document=facts,
            settings=settings.to_dict(),
            chunkings=[r for r in results if r is not None],
            winner=None,
            explanation="",
            timings=timings,
            warnings=warnings,
            coref=coref_info,
            embedder=emb_info,
            provenance=provenance(settings, emb_info, coref_info),
            provisional=bool(pending),
            pending=pending,
            uncertainty=uncertainty_facts(pairs),
            retrieval=retrieval_block,
        )
        return rescore(report, settings.weights, settings.candidates, settings.retrieval_weight)

    def snapshot(stage: str, pending_metrics: tuple[str, ...], later: list) -> None:
        if on_partial is None:
            return
        pending = list(pending_metrics) + [cid for _, (cid, _, _) in later]
        rep = build(pending)
        snap = _snapshot(rep)
        last[:] = [snap]
        on_partial(snap, stage)

    pairs: Pairs | None = None  # known after the coreference stage
    retrieval_block: dict[str, Any] | None = None  # the retrieval check's, when questions are given

    # the one embedding pass over the document's units needs nothing but the text: it starts in a
    # thread right after the first structure snapshot and runs while the rest of the structure stage
    # runs here and coreference in its own thread (ONNX Runtime and tokenizers release the GIL); the
    # embeddings stage joins it. Used only when some chunking needs embeddings.
    unit_pass: dict[str, Any] = {}
    units_known = threading.Event()  # set when the thread knows the units (or gave up)
    # the edge fragments of every structural chunking, embedded ahead in one deduplicated model call
    # (the metrics then find them in the cache) by whichever thread is free first: this one after
    # coreference, or the unit pass's after the units. The same call either way, so the same vectors.
    ahead: dict[str, Any] = {}
    ahead_lock = threading.Lock()

    def embed_ahead() -> float:
        with ahead_lock:
            spans = ahead.pop("spans", None)
        se = unit_pass.get("se")
        if not spans or se is None or not hasattr(se, "prefetch"):
            return 0.0
        t0 = time.perf_counter()
        try:
            se.prefetch(spans)
        except Exception:  # the metrics embed what is missing and report any error themselves
            pass
        return time.perf_counter() - t0

    def units_ready(se: Any) -> None:
        unit_pass["se"] = se
        units_known.set()

    def embed_units() -> None:
        try:
            _hold_embeddings(lambda: cancelled() or abandoned.is_set())
            if abandoned.is_set():
                return
            unit_pass["result"] = span_embedding(doc, resources, on_units=units_ready)
            if not abandoned.is_set():
                embed_ahead()
        except BaseException as exc:  # Ctrl-C handed over by the int8 helper, a bug: the analysis re-raises it
            unit_pass["error"] = exc
        finally:
            units_known.set()

    worker: threading.Thread | None = None
    # coreference needs nothing but the text either: it runs in its own thread from the same moment,
    # so the sentence chunkers and the snapshots here never delay it; its stage joins it
    coref_out: dict[str, Any] = {}

    def run_coref() -> None:
        try:
            coref_out["result"] = coref_pairs(doc, settings)
        except BaseException as exc:  # re-raised by the coreference stage, in the caller's thread
            coref_out["error"] = exc

    coref_worker = threading.Thread(target=run_coref, name="chunkscope-coref", daemon=True)

    def start_threads() -> None:
        nonlocal worker
        if coref_worker.ident is not None:  # started already
            return
        # spaCy is imported here, not in a thread: its import hides torch from the whole process
        # for a moment, which must not overlap another thread's imports
        import_pipeline()
        if plan:
            worker = threading.Thread(target=embed_units, name="chunkscope-unit-pass", daemon=True)
            worker.start()
        coref_worker.start()

    facts = document_facts(doc)

    # structure: every chunking that needs no model; SC and BI at once. Those that need the
    # sentence segmenter (a spaCy model) come after a first snapshot of the others.
    if by_stage["llm"] and not resources.llm_settings().configured:
        # no endpoint: the LLM chunkings are skipped at once ("no LLM endpoint configured") with the
        # structure stage, instead of being listed as "still to run" until the end
        by_stage[""] += by_stage["llm"]
        by_stage["llm"] = []
    quick = [it for it in by_stage[""] if not uses_sentences(it[1][1])]
    slow = [it for it in by_stage[""] if uses_sentences(it[1][1])]
    phases = [(quick, slow), (slow, [])] if quick and slow else [(by_stage[""], [])]
    structural: list[ChunkingResult] = []
    # RC known not to come (coreference off, a non-English document) is not "pending" in the snapshots
    rc_off = rc_not_computed(doc, settings)
    early = ("ICC", "DCC") if rc_off else ("RC", "ICC", "DCC")
    for k, (part, later) in enumerate(phases):
        got = run_chunkings("structure", part, done=len(structural), of=len(by_stage[""]))
        progress("structure", (len(structural) + len(got)) / max(1, len(by_stage[""])),
                 f"SC and BI of {sum(1 for r in got if r.ok)} chunking(s)")
        for r in got:
            if r.ok:
                r.metric_reasons.update({m: PENDING_REASON[m] for m in early})
                if rc_off:
                    r.metric_reasons["RC"] = rc_off
        score("structure", got, lambda r: structure_metrics(doc, r, settings), {})
        structural += got
        if k == len(phases) - 1:
            # the line that stays up while the embedding pass runs also names what did not run, and why
            groups: dict[tuple[str, str], list[str]] = {}
            for res in results:
                if res is not None and not res.ok:
                    groups.setdefault((res.status, res.reason or "no reason given"), []).append(res.id)
            progress("structure", 1.0, f"{sum(1 for r in results if r is not None and r.ok)} chunkings ok" + "".join(
                f"; {', '.join(ids)} {status} ({why})" for (status, why), ids in groups.items()))
        snapshot("structure", early, later + by_stage["embedder"] + by_stage["llm"])
        start_threads()

    need_embedder = any(r is not None and r.ok for r in results) or bool(by_stage["embedder"] or by_stage["llm"])
    if worker is not None and not need_embedder:
        abandoned.set()  # nothing to score: the pass is not waited for
        worker = None

    if worker is not None:
        spans = [sp for r in structural if r.ok for sp in metric_spans(doc, r, settings)]
        with ahead_lock:
            ahead["spans"] = spans

    # coreference (RC)
    check("coreference")
    progress("coreference", 0.0, settings.coref)
    t0 = time.perf_counter()
    while coref_worker.is_alive():
        coref_worker.join(0.1)
        check("coreference")
    if "error" in coref_out:
        raise coref_out["error"]
    pairs, rc_reason, info = coref_out["result"]
    coref_info.update(info)
    warnings.extend(f"coreference: {w}" for w in coref_info.get("warnings", []))
    timings["coref"] = time.perf_counter() - t0  # the wait for its thread (the rest overlapped)
    score("coreference", structural, lambda r: reference_metrics(r, pairs), {"RC": rc_reason})
    progress("coreference", 1.0, rc_reason or f"{len(pairs or [])} entity-pronoun pairs")
    snapshot("coreference", ("ICC", "DCC"), by_stage["embedder"] + by_stage["llm"])

    # embeddings: units once (the thread), then the chunkings that need the embedder; ICC and DCC
    check("embeddings")
    embed: Embed | None = None
    emb_error = ""
    waited = prefetch_s = 0.0  # wall time spent here on the model (the rest of the pass overlapped)
    if worker is not None:
        progress("embeddings", 0.0, "embedding the document's units")
        t_wait = time.perf_counter()
        while not units_known.wait(0.1):
            check("embeddings")
        prefetch_s = embed_ahead()  # unless the unit pass's thread took them already
        # nothing else to do here: take a share of the unit pass (int8: one text per model call,
        # so the vectors are the same whichever thread runs a text)
        emb = resources.loaded_embedder()
        helper = getattr(emb, "help_encode", None)
        told = time.perf_counter()
        while worker.is_alive():
            if helper is None or not helper(HELP_TEXTS):
                worker.join(0.05)
            check("embeddings")
            if time.perf_counter() - told >= 1.0:  # a long document's pass takes minutes: say how far it is
                told = time.perf_counter()
                far = emb.encode_progress() if hasattr(emb, "encode_progress") else None
                if far and far[1]:
                    progress("embeddings", 0.8 * far[0] / far[1], f"embedding the document's units: {far[0]:,} of "
                             f"{far[1]:,} texts")
        waited = time.perf_counter() - t_wait - prefetch_s
        if "result" not in unit_pass:  # the unit pass failed (or was interrupted): its error, never a KeyError
            raise unit_pass.get("error") or RuntimeError("the embedding pass ended without a result")
        embed, more, emb_error = unit_pass["result"]
        emb_info.update(more)
        if emb_error:
            warnings.append(emb_error)
    model_s0 = resources.embedding_seconds()  # the model time from here on is this thread's
    # the unit pass took the stage's first 80% (when it ran): the chunkings that embed come after it
    n_sem = len(by_stage["embedder"])
    semantic = run_chunkings("embeddings", by_stage["embedder"], *((4 * n_sem, 5 * n_sem) if worker else (0, None)))
    emb_reasons = {"ICC": emb_error, "DCC": emb_error}
    every_reason = {"RC": rc_reason, **emb_reasons}
    score("embeddings", structural, lambda r: embedding_metrics(doc, r, settings, embed), emb_reasons)
    score("embeddings", semantic, lambda r: all_metrics(doc, r, settings, pairs, embed), every_reason)
    progress("embeddings", 1.0, emb_error or "document units embedded")
    if by_stage["llm"]:
        snapshot("embeddings", (), by_stage["llm"])

    # LLM chunkings, scored at once
    llm = run_chunkings("llm", by_stage["llm"])
    score("llm", llm, lambda r: all_metrics(doc, r, settings, pairs, embed), every_reason)
    progress("llm", 1.0, f"{len(by_stage['llm'])} LLM chunking(s)")

    if retrieval is not None:  # optional retrieval check (DESIGN section 11)
        from chunkscope.analysis.retrieval import retrieval_stage

        check("retrieval")
        retrieval_block, why = retrieval_stage(doc, [r for r in results if r is not None], retrieval, resources,
                                               progress)
        warnings.extend([why] if why else [])

    check("selection")
    progress("selection", 0.9, "ranking")
    if embed is not None:
        # spans are embedded while scoring: only now are the stats and warnings (exact mode:
        # texts truncated by the model) complete
        try:
            se = resources.span_embedder(doc)
            emb_info.update(embedder_info(resources, se, since=stats0))
            warnings.extend(w for w in (getattr(se, "warnings", None) or []) if w not in warnings)
        except Exception:  # facts only: never fail an analysis for them
            pass
    report = build([])
    attach_boxes(report, doc)  # PDF sources: each chunk's page boxes (chunkscope.geometry)
    # wall time spent on the embedding model by this thread: the fragments embedded ahead, the wait
    # for the unit pass (the rest of it overlapped the other stages), and the model time from then
    # on (the semantic chunker embeds while chunking, exact mode while scoring). So the stage
    # timings are disjoint and add up to the total (``other``: the rest, e.g. bookkeeping).
    timings["embed"] = prefetch_s + waited + max(0.0, resources.embedding_seconds() - model_s0)
    timings["total"] = time.perf_counter() - t_total
    timings["other"] = max(0.0, timings["total"] - sum(timings[k] for k in ("chunk", "coref", "embed", "metrics")))
    progress("selection", 1.0, f"winner: {report.winner}")
    return report


def _snapshot(report: Report) -> Report:
    """A copy the caller may keep and re-rank while the run goes on (chunk rows are shared: they
    never change once produced)."""
    out = copy.copy(report)
    out.chunkings = [copy.copy(c) for c in report.chunkings]
    for c in out.chunkings:
        c.metrics, c.metric_reasons, c.diagnostics = dict(c.metrics), dict(c.metric_reasons), dict(c.diagnostics)
        c.params, c.info = dict(c.params), dict(c.info)
    out.settings = copy.deepcopy(report.settings)
    out.timings, out.warnings, out.pending = dict(report.timings), list(report.warnings), list(report.pending)
    out.coref, out.embedder = copy.deepcopy(report.coref), copy.deepcopy(report.embedder)
    out.provenance, out.flags = copy.deepcopy(report.provenance), list(report.flags)
    return out


def document_facts(doc: Document) -> dict[str, Any]:
    from chunkscope.text.tokens import count_tokens

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
