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

``analyze`` reads as those stages: each is a method of ``AnalysisRun``, the one record of a run
(its results, timings, warnings, coreference and embedder facts). Coreference and the unit
embedding pass run beside the stages (``analysis.background``); ``analysis.timings`` keeps the
report's disjoint stage timings.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from chunkscope import metrics as M
from chunkscope.analysis.background import Hold, UnitPass, in_thread, wait_for
from chunkscope.analysis.coreference import CorefOutcome, Pairs, coref_pairs, rc_not_computed, reference_metrics
from chunkscope.analysis.embedding import Embed, embed_counters, embedder_info, embedding_metrics, metric_spans
from chunkscope.analysis.resources import ResourcesProtocol, shared_resources
from chunkscope.analysis.retrieval import RetrievalRequest, retrieval_stage
from chunkscope.analysis.selection import rescore
from chunkscope.analysis.settings import Settings
from chunkscope.analysis.structure import chunk_one, chunking_plan, needs, structure_metrics, uses_sentences
from chunkscope.analysis.timings import Timings
from chunkscope.analysis.uncertainty import uncertainty_facts
from chunkscope.document import Document
from chunkscope.embeddings.embedder import backend_facts
from chunkscope.provenance import provenance
from chunkscope.report import METRICS, ChunkingResult, Report, attach_boxes
from chunkscope.text.nlp import import_pipeline

STAGES = ("structure", "coreference", "embeddings", "llm", "selection")

Progress = Callable[[str, float, str], None]  # (stage, fraction of stage done, message)
OnPartial = Callable[[Report, str], None]  # (provisional snapshot, the stage just finished)
Item = tuple[int, tuple[str, str, dict[str, Any]]]  # (place in the plan, (chunking id, chunker id, overrides))

# the metrics each stage makes possible (SC and BI need nothing but the chunks): what a snapshot
# after a stage still waits for, and the reason a pending metric gives meanwhile
STAGE_METRICS = {"structure": ("SC", "BI"), "coreference": ("RC",), "embeddings": ("ICC", "DCC")}
PENDING_REASON = {m: f"pending: {stage}" for stage, ms in STAGE_METRICS.items() for m in ms}


class AnalysisCancelled(Exception):
    """``cancel()`` asked the run to stop; ``partial`` is the last snapshot (or None before any)."""

    def __init__(self, partial: Report | None, stage: str):
        super().__init__(f"analysis cancelled during {stage}")
        self.partial = partial
        self.stage = stage


def _no_progress(stage: str, fraction: float, message: str) -> None:
    return None


def _never() -> bool:
    return False


def _apply(r: ChunkingResult, found: Mapping[str, M.MetricResult | None], reasons: dict[str, str]) -> None:
    """Store computed metrics (value, reason when None, diagnostics) on ``r``.

    ``reasons``: why a metric the stage could not compute (None in ``found``) is missing.
    """
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


def analyze(doc: Document, settings: Settings | None = None, *, resources: ResourcesProtocol | None = None,
            progress: Progress | None = None, on_partial: OnPartial | None = None,
            cancel: Callable[[], bool] | None = None, retrieval: RetrievalRequest | None = None,
            hold: Hold | None = None) -> Report:
    """Run every chunking of ``settings`` on ``doc``, score it, pick the adaptive winner.

    ``resources``: the model and span embedders to use (None: the process's shared ones for the
    settings; resources for another model, mode or backend raise ``ValueError``). ``progress``,
    ``on_partial``, ``cancel``: see the module's docstring. ``retrieval``: questions that add the
    report's optional ``retrieval`` block (after the LLM chunkings). ``hold(stop)``: tests only,
    called by the unit embedding pass before it starts (returns when it may go on).
    """
    settings = settings or Settings()
    settings.validate()
    run = AnalysisRun(doc, settings, _resources_for(settings, resources), progress or _no_progress,
                      on_partial, cancel or _never, retrieval, hold)
    run.structure()
    run.coreference()
    run.embeddings()
    run.llm()
    run.retrieval_check()
    return run.select()


def _resources_for(settings: Settings, resources: ResourcesProtocol | None) -> ResourcesProtocol:
    """The resources the run uses: the ones given (``ValueError`` unless they serve the settings), else the shared ones."""
    if resources is None:
        return shared_resources(settings.embedder, settings.embedding_mode, settings.embedding_backend)
    if not resources.serves(settings.embedder, settings.embedding_mode, settings.embedding_backend):
        raise ValueError(f"analyze: the resources given do not run the settings' embedding model "
                         f"(embedder={settings.embedder!r}, mode={settings.embedding_mode!r}, "
                         f"backend={settings.embedding_backend!r}); pass resources made for them, or none")
    return resources


def _plan_by_stage(settings: Settings, resources: ResourcesProtocol) -> tuple[int, dict[str, list[Item]]]:
    """(how many chunkings, the plan's chunkings by what they need: "" (structure), "embedder", "llm")."""
    plan = chunking_plan(settings)
    by_stage: dict[str, list[Item]] = {"": [], "embedder": [], "llm": []}
    for i, item in enumerate(plan):
        by_stage[needs(item[1])].append((i, item))
    if by_stage["llm"] and not resources.llm_settings().configured:
        # no endpoint: the LLM chunkings are skipped at once ("no LLM endpoint configured") with the
        # structure stage, instead of being listed as "still to run" until the end
        by_stage[""] += by_stage["llm"]
        by_stage["llm"] = []
    return len(plan), by_stage


def _outcome_line(results: list[ChunkingResult | None]) -> str:
    """How many chunkings ran, and which did not, grouped by why."""
    groups: dict[tuple[str, str], list[str]] = {}
    for res in results:
        if res is not None and not res.ok:
            groups.setdefault((res.status, res.reason or "no reason given"), []).append(res.id)
    return f"{sum(1 for r in results if r is not None and r.ok)} chunkings ok" + "".join(
        f"; {', '.join(ids)} {status} ({why})" for (status, why), ids in groups.items())


@dataclass
class AnalysisRun:
    """One analysis: what it was given and what its stages found so far (one method per stage)."""

    doc: Document
    settings: Settings
    resources: ResourcesProtocol
    progress: Progress
    on_partial: OnPartial | None
    cancel: Callable[[], bool]
    retrieval: RetrievalRequest | None
    hold: Hold | None
    t_start: float = field(default_factory=time.perf_counter)
    timings: Timings = field(default_factory=Timings)
    # set from the above when the run is made (__post_init__)
    stats0: dict[str, Any] = field(init=False)  # the model's counters before this run (its stats are its own)
    plan_size: int = field(init=False)
    stages: dict[str, list[Item]] = field(init=False)  # the plan's chunkings by what they need
    results: list[ChunkingResult | None] = field(init=False)  # in plan order, None until produced
    warnings: list[str] = field(init=False)
    emb_info: dict[str, Any] = field(init=False)
    rc_off: str = field(init=False)  # why RC will not come, when known before coreference runs
    facts: dict[str, Any] = field(init=False)  # the report's document block
    # found by the stages
    coref_info: dict[str, Any] = field(default_factory=dict)
    last: Report | None = None  # the latest snapshot (what a cancelled run leaves)
    pairs: Pairs | None = None  # known after the coreference stage
    rc_reason: str = ""
    embed: Embed | None = None  # known after the embeddings stage
    emb_error: str = ""
    model_s0: float = 0.0  # the model's seconds when the embeddings stage took over from the unit pass
    retrieval_block: dict[str, Any] | None = None  # the retrieval check's, when questions are given
    unit_pass: UnitPass | None = None
    coref_future: Future[CorefOutcome] | None = None  # coref_pairs in its thread, from the first snapshot on
    structural: list[ChunkingResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stats0 = embed_counters(self.resources, self.doc)
        self.warnings = list(self.doc.warnings)
        self.plan_size, self.stages = _plan_by_stage(self.settings, self.resources)
        self.results = [None] * self.plan_size
        self.emb_info = {"model": self.settings.embedder or "all-MiniLM-L6-v2 (bundled)",
                         "mode": self.settings.embedding_mode,
                         **backend_facts(self.settings.embedder, self.settings.embedding_backend)}
        # RC known not to come (coreference off, a non-English document) is not "pending" in the snapshots
        self.rc_off = rc_not_computed(self.doc, self.settings)
        self.facts = document_facts(self.doc)

    # ------------------------------------------------------------------ steps every stage takes
    def check(self, stage: str) -> None:
        """Raise ``AnalysisCancelled`` (with the last snapshot) when ``cancel()`` says so."""
        if self.cancel():
            if self.unit_pass is not None:
                self.unit_pass.abandon()
            raise AnalysisCancelled(self.last, stage)

    def run_chunkings(self, stage: str, items: list[Item], done: int = 0, of: int | None = None
                      ) -> list[ChunkingResult]:
        """Produce the chunkings ``items`` (``done`` of ``of`` of the stage's so far): their results."""
        out = []
        of = of if of is not None else len(items)
        for k, (i, (cid, base_id, overrides)) in enumerate(items):
            self.check(stage)
            self.progress(stage, (done + k) / max(1, of), cid)
            e0 = self.resources.embedding_seconds()
            cr = chunk_one(self.doc, cid, base_id, overrides, self.resources, candidate=cid in self.settings.candidates)
            # structural chunkers never use the model (the unit pass may run meanwhile in its thread)
            model_s = self.resources.embedding_seconds() - e0 if stage != "structure" else 0.0
            self.timings.add("chunk", cr.seconds, model_s)
            self.results[i] = cr
            out.append(cr)
            if not cr.ok:  # did not run: say so, rather than leave its id up as if it were running
                self.progress(stage, (done + k + 1) / max(1, of),
                              f"{cid} {cr.status} ({cr.reason or 'no reason given'})")
        return out

    def score(self, stage: str, rs: list[ChunkingResult],
              found_of: Callable[[ChunkingResult], Mapping[str, M.MetricResult | None]], reasons: dict[str, str]) -> None:
        """Store the metrics ``found_of`` computes on each OK chunking of ``rs``."""
        own_model = stage in ("embeddings", "llm")  # before that, model time is the unit pass's (its thread)
        for r in rs:
            if r.ok:
                t0, e0 = time.perf_counter(), self.resources.embedding_seconds()
                _apply(r, found_of(r), reasons)
                dt = time.perf_counter() - t0
                r.seconds += dt
                model_s = self.resources.embedding_seconds() - e0 if own_model else 0.0
                self.timings.add("metrics", dt, model_s)  # model time is "embed"

    def report(self, pending: list[str]) -> Report:
        """The report of what is known now, ranked (``pending``: what is still to come; empty: final)."""
        report = Report(
            document=self.facts,
            settings=self.settings.to_dict(),
            chunkings=[r for r in self.results if r is not None],
            winner=None,
            explanation="",
            timings=self.timings.seconds,
            warnings=self.warnings,
            coref=self.coref_info,
            embedder=self.emb_info,
            provenance=provenance(self.settings, self.emb_info, self.coref_info),
            provisional=bool(pending),
            pending=pending,
            uncertainty=uncertainty_facts(self.pairs),
            retrieval=self.retrieval_block,
        )
        return rescore(report, self.settings.weights, self.settings.candidates, self.settings.retrieval_weight)

    def pending_metrics(self, stage: str) -> tuple[str, ...]:
        """The metrics the stages after ``stage`` make possible (RC left out when it will not come)."""
        later = STAGES[STAGES.index(stage) + 1:]
        return tuple(m for st in later for m in STAGE_METRICS.get(st, ()) if not (m == "RC" and self.rc_off))

    def snapshot(self, stage: str, later: list[Item]) -> None:
        """Hand ``on_partial`` a provisional report after ``stage`` (``later``: chunkings still to run)."""
        if self.on_partial is None:
            return
        pending = list(self.pending_metrics(stage)) + [cid for _, (cid, _, _) in later]
        snap = self.report(pending).snapshot()  # the caller may keep and re-rank it; chunk rows shared
        self.last = snap
        self.on_partial(snap, stage)

    # ------------------------------------------------------------------ the stages, in order
    def structure(self) -> None:
        """Run every chunking that needs no model, with SC and BI at once.

        Those that need the sentence segmenter (a spaCy model) come after a first snapshot of the others.
        """
        items = self.stages[""]
        quick = [it for it in items if not uses_sentences(it[1][1])]
        slow = [it for it in items if uses_sentences(it[1][1])]
        phases = [(quick, slow), (slow, [])] if quick and slow else [(items, [])]
        early = self.pending_metrics("structure")
        for k, (part, later) in enumerate(phases):
            got = self.run_chunkings("structure", part, done=len(self.structural), of=len(items))
            self.progress("structure", (len(self.structural) + len(got)) / max(1, len(items)),
                          f"SC and BI of {sum(1 for r in got if r.ok)} chunking(s)")
            for r in got:
                if r.ok:
                    r.metric_reasons.update({m: PENDING_REASON[m] for m in early})
                    if self.rc_off:
                        r.metric_reasons["RC"] = self.rc_off
            self.score("structure", got, lambda r: structure_metrics(self.doc, r, self.settings), {})
            self.structural += got
            if k == len(phases) - 1:
                # the line that stays up while the embedding pass runs also names what did not run, and why
                self.progress("structure", 1.0, _outcome_line(self.results))
            self.snapshot("structure", later + self.stages["embedder"] + self.stages["llm"])
            self._start_background()
        self._aim_unit_pass()

    def _start_background(self) -> None:
        """Start coreference and the unit embedding pass in their threads (once)."""
        if self.coref_future is not None:
            return
        # spaCy is imported here, not in a thread: its import hides torch from the whole process
        # for a moment, which must not overlap another thread's imports
        import_pipeline()
        if self.plan_size:
            self.unit_pass = UnitPass(self.doc, self.resources, stop=self.cancel, hold=self.hold)
            self.unit_pass.start()
        doc, settings = self.doc, self.settings
        self.coref_future = in_thread(lambda: coref_pairs(doc, settings), "chunkscope-coref")

    def _aim_unit_pass(self) -> None:
        """Give the unit pass the structural chunkings' metric spans to embed ahead (or let it go: nothing needs it)."""
        if self.unit_pass is None:
            return
        if not (any(r is not None and r.ok for r in self.results) or self.stages["embedder"] or self.stages["llm"]):
            self.unit_pass.abandon()  # nothing to score: the pass is not waited for
            self.unit_pass = None
            return
        self.unit_pass.embed_ahead([sp for r in self.structural if r.ok
                                    for sp in metric_spans(self.doc, r, self.settings)])

    def coreference(self) -> None:
        """Wait for the coreference thread: the pairs, and RC of the structural chunkings."""
        self.check("coreference")
        self.progress("coreference", 0.0, self.settings.coref)
        t0 = time.perf_counter()
        assert self.coref_future is not None, "the structure stage starts coreference"
        self.pairs, self.rc_reason, info = wait_for(self.coref_future, lambda: self.check("coreference"))
        self.coref_info.update(info)
        self.warnings.extend(f"coreference: {w}" for w in self.coref_info.get("warnings", []))
        self.timings.add("coref", time.perf_counter() - t0)  # the wait for its thread (the rest overlapped)
        pairs = self.pairs
        self.score("coreference", self.structural, lambda r: reference_metrics(r, pairs), {"RC": self.rc_reason})
        self.progress("coreference", 1.0, self.rc_reason or f"{len(pairs or [])} entity-pronoun pairs")
        self.snapshot("coreference", self.stages["embedder"] + self.stages["llm"])

    def embeddings(self) -> None:
        """Units once (the unit pass), then the chunkings that need the embedder; ICC and DCC."""
        self.check("embeddings")
        if self.unit_pass is not None:
            (self.embed, more, self.emb_error), prefetch_s, waited = self.unit_pass.join(
                lambda: self.check("embeddings"), self.progress)
            self.emb_info.update(more)
            if self.emb_error:
                self.warnings.append(self.emb_error)
            # wall time spent here on the model: the fragments embedded ahead and the wait for the
            # unit pass (the rest of it overlapped the other stages)
            self.timings.add("embed", prefetch_s + waited)
        self.model_s0 = self.resources.embedding_seconds()  # the model time from here on is this thread's
        # the unit pass took the stage's first 80% (when it ran): the chunkings that embed come after it
        n_sem = len(self.stages["embedder"])
        semantic = self.run_chunkings("embeddings", self.stages["embedder"],
                                      *((4 * n_sem, 5 * n_sem) if self.unit_pass else (0, None)))
        doc, settings, embed = self.doc, self.settings, self.embed
        self.score("embeddings", self.structural, lambda r: embedding_metrics(doc, r, settings, embed),
                   self._reasons("ICC", "DCC"))
        self.score("embeddings", semantic, self._all_metrics, self._reasons("RC", "ICC", "DCC"))
        self.progress("embeddings", 1.0, self.emb_error or "document units embedded")
        if self.stages["llm"]:
            self.snapshot("embeddings", self.stages["llm"])

    def _reasons(self, *metrics: str) -> dict[str, str]:
        """Why each of ``metrics`` is missing when its stage could not compute it."""
        why = {"RC": self.rc_reason, "ICC": self.emb_error, "DCC": self.emb_error}
        return {m: why[m] for m in metrics}

    def _all_metrics(self, r: ChunkingResult) -> dict[str, M.MetricResult | None]:
        return all_metrics(self.doc, r, self.settings, self.pairs, self.embed)

    def llm(self) -> None:
        """The LLM chunkings, scored at once."""
        produced = self.run_chunkings("llm", self.stages["llm"])
        self.score("llm", produced, self._all_metrics, self._reasons("RC", "ICC", "DCC"))
        self.progress("llm", 1.0, f"{len(self.stages['llm'])} LLM chunking(s)")

    def retrieval_check(self) -> None:
        """The optional retrieval check (DESIGN section 11), when questions are given."""
        if self.retrieval is None:
            return
        self.check("retrieval")
        self.retrieval_block, why = retrieval_stage(self.doc, self.results, self.retrieval, self.resources,
                                                    self.progress)
        self.warnings.extend([why] if why else [])

    def select(self) -> Report:
        """The final report: ranked, explained, with its embedder facts, page boxes and timings."""
        self.check("selection")
        self.progress("selection", 0.9, "ranking")
        if self.embed is not None:
            self._embedder_facts()
        report = self.report([])
        attach_boxes(report, self.doc)  # PDF sources: each chunk's page boxes (chunkscope.geometry)
        # the model time from the embeddings stage on (the semantic chunker embeds while chunking,
        # exact mode while scoring): so the stage timings are disjoint and add up to the total
        self.timings.add("embed", self.resources.embedding_seconds() - self.model_s0)
        self.timings.finish(time.perf_counter() - self.t_start)
        self.progress("selection", 1.0, f"winner: {report.winner}")
        return report

    def _embedder_facts(self) -> None:
        """Add the span embedder's stats and warnings.

        Spans are embedded while scoring, so only now are they complete (exact mode: texts truncated by the model).
        """
        try:
            se = self.resources.span_embedder(self.doc)
            self.emb_info.update(embedder_info(self.resources, se, since=self.stats0))
            self.warnings.extend(w for w in (se.warnings or []) if w not in self.warnings)
        except (RuntimeError, OSError, ValueError):  # facts only: never fail an analysis for them
            pass
def document_facts(doc: Document) -> dict[str, Any]:
    """The report's ``document`` block: name, hash, format, size in characters and tokens, language, pages, blocks."""
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
