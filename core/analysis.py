"""analyze(document, settings) -> Report: run chunkers, score them, pick the adaptive winner.

One function serves the CLI, the app and corpus mode, so their numbers agree. Shared,
expensive resources (the embedding model, unit embeddings, coreference pairs) live in
``Resources`` and are reused across chunkers, metrics and runs.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Callable

from core.document import Document, Span
from core.metrics import score as metric_score
from core.report import METRICS, ChunkingResult, ChunkRow, Report

DEFAULT_CANDIDATES = ("page+pp", "recursive-1100+pp", "recursive-600+pp", "llm-regex+pp")
STAGES = ("chunking", "coreference", "embedding", "metrics", "selection")

Progress = Callable[[str, float, str], None]  # (stage, fraction of stage done, message)


def _no_progress(stage: str, fraction: float, message: str) -> None:
    return None


@dataclass
class Settings:
    """Everything that changes a report. Stored in the report; a config file is its JSON/TOML."""

    chunkers: tuple[str, ...] | None = None  # None: every default chunker
    candidates: tuple[str, ...] = DEFAULT_CANDIDATES
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunker id -> overrides
    min_tokens: int = 100
    max_tokens: int = 1100
    bi_tolerance: int = 5
    window_tokens: int = 3000
    window_step: int = 1
    weights: dict[str, float] = field(default_factory=lambda: {m: 1.0 for m in METRICS})
    coref: str = "heuristic"  # heuristic | maverick | precomputed | none
    mentions: str | None = None  # path to precomputed mentions (parquet/JSON)
    embedder: str | None = None  # model name or path; None = bundled all-MiniLM-L6-v2
    embedding_mode: str = "composed"  # composed | exact
    # named candidates ("promoted" configurations): name -> {"chunker": base id, "params": {...}};
    # analyze() runs each like any other chunking under its name (which may be a candidate)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)

    def validate(self) -> None:
        if self.min_tokens < 0 or self.max_tokens < self.min_tokens:
            raise ValueError(f"size bounds: need 0 <= min ({self.min_tokens}) <= max ({self.max_tokens})")
        if self.bi_tolerance < 0:
            raise ValueError("BI tolerance must be >= 0")
        if self.window_tokens < 1 or self.window_step < 1:
            raise ValueError("DCC window tokens and window step must be >= 1")
        if self.embedding_mode not in ("composed", "exact"):
            raise ValueError(f"embedding mode must be 'composed' or 'exact' (got {self.embedding_mode!r})")
        if self.coref not in ("heuristic", "maverick", "precomputed", "none"):
            raise ValueError(f"coref backend must be heuristic, maverick, precomputed or none (got {self.coref!r})")
        bad = [k for k in self.weights if k not in METRICS]
        if bad:
            raise ValueError(f"unknown metric weight(s): {', '.join(bad)} (metrics: {', '.join(METRICS)})")
        if any(not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0 for w in self.weights.values()):
            raise ValueError("metric weights must be finite numbers >= 0")
        if not any(self.weights.get(m, 0) > 0 for m in METRICS):
            raise ValueError("at least one metric weight must be > 0")
        for name, v in self.variants.items():
            if not isinstance(name, str) or not name.strip():
                raise ValueError("a variant needs a non-empty name")
            if not isinstance(v, dict) or not isinstance(v.get("chunker"), str):
                raise ValueError(f"variant {name!r}: expected {{\"chunker\": ID, \"params\": {{...}}}}")
            extra = sorted(set(v) - {"chunker", "params"})
            if extra:
                raise ValueError(f"variant {name!r}: unknown key(s) {', '.join(extra)} (keys: chunker, params)")
            if not isinstance(v.get("params", {}), dict):
                raise ValueError(f"variant {name!r}: params must be a table of NAME = VALUE")
            if _registered(name):
                raise ValueError(f"variant {name!r}: the name is a built-in chunker id; choose another name")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["chunkers"] = list(self.chunkers) if self.chunkers is not None else None
        d["candidates"] = list(self.candidates)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Settings":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        d = dict(d)
        for k in ("chunkers", "candidates"):  # a config written by hand: "a, b" for ["a", "b"]
            if isinstance(d.get(k), str):
                d[k] = [x.strip() for x in d[k].split(",") if x.strip()]
        if d.get("chunkers") is not None:
            d["chunkers"] = tuple(d["chunkers"])
        if "candidates" in d:
            d["candidates"] = tuple(d["candidates"])
        if "weights" in d:
            if not isinstance(d["weights"], dict):
                raise ValueError("weights must be a table of METRIC = number")
            weights = {m: 1.0 for m in METRICS}
            for k, v in d["weights"].items():
                try:
                    weights[k] = float(v)
                except (TypeError, ValueError):
                    raise ValueError(f"weight {k} must be a number (got {v!r})") from None
            d["weights"] = weights
        if d.get("variants") is not None:
            d["variants"] = {str(k): dict(v) if isinstance(v, dict) else v for k, v in d["variants"].items()}
        else:
            d.pop("variants", None)
        s = cls(**d)
        s.validate()
        return s

    def with_(self, **changes: Any) -> "Settings":
        return replace(self, **changes)


class Resources:
    """Shared, reusable resources for analyses (one per process / app session).

    Acts as the chunkers' RunContext: ``embedder()`` and ``llm()``.
    """

    def __init__(self, embedder_name: str | None = None, mode: str = "composed", llm_settings: Any = None):
        self.embedder_name = embedder_name
        self.mode = mode
        self._embedder = None
        self._llm_settings = llm_settings
        self._llm = None
        self._span_embedders: dict[tuple[str, str], Any] = {}
        self.load_seconds = 0.0

    def embedder(self):
        if self._embedder is None:
            from core.embeddings import Embedder

            t0 = time.perf_counter()
            self._embedder = Embedder.load(self.embedder_name)
            self.load_seconds = time.perf_counter() - t0
        return self._embedder

    def embedding_seconds(self) -> float:
        """Seconds spent loading and running the embedding model so far (all analyses)."""
        if self._embedder is None:
            return 0.0
        stats = getattr(self._embedder, "stats", None)
        return self.load_seconds + float(getattr(stats, "seconds", 0.0) or 0.0)

    def llm_settings(self):
        """The LLM settings this run uses: the ones given, else the environment's."""
        from core.llm import LLMSettings

        return self._llm_settings or LLMSettings.from_env()

    def llm(self):
        if self._llm is None:
            try:
                from core.llm import LLMClient
            except ImportError:
                return None
            settings = self.llm_settings()
            if not settings.configured:
                return None
            self._llm = LLMClient(settings)
        return self._llm

    def with_llm(self, llm_settings: Any) -> "Resources":
        """This Resources (model, unit embeddings: shared) with its own LLM settings and client.

        For a shared Resources (the app's, one per model for every session): one session's
        endpoint and API key must never be used for another session's requests.
        """
        return _LLMView(self, llm_settings)  # type: ignore[return-value]

    def span_embedder(self, doc: Document):
        key = (doc.fingerprint, self.mode)
        se = self._span_embedders.get(key)
        if se is None:
            from core.embeddings import SpanEmbedder

            se = SpanEmbedder(doc, self.embedder(), mode=self.mode)
            # keep memory bounded: only the latest few documents
            if len(self._span_embedders) >= 4:
                self._span_embedders.pop(next(iter(self._span_embedders)))
            self._span_embedders[key] = se
        return se


class _LLMView:
    """A Resources that shares everything with ``base`` except the LLM settings and client."""

    def __init__(self, base: Resources, llm_settings: Any):
        self._base = base
        self._llm_settings = llm_settings
        self._llm = None

    llm = Resources.llm
    llm_settings = Resources.llm_settings

    def with_llm(self, llm_settings: Any) -> "_LLMView":
        return _LLMView(self._base, llm_settings)

    def __getattr__(self, name: str) -> Any:  # embedder(), span_embedder(), mode, ...: the shared ones
        return getattr(self._base, name)


def default_chunker_ids() -> list[str]:
    from core.chunkers import registry

    ids = list(registry.DEFAULT_IDS)
    for extra in ("semantic", "semantic+pp", "llm-regex", "llm-regex+pp"):
        if extra not in ids and _registered(extra):
            ids.append(extra)
    return ids


def _registered(cid: str) -> bool:
    from core.chunkers import registry

    try:
        registry.get(cid)
        return True
    except KeyError:
        return False


def chunking_plan(settings: Settings) -> list[tuple[str, str, dict[str, Any]]]:
    """What analyze() runs, in order: (chunking id, registered chunker id, parameter overrides).

    The requested chunkers (default: every default chunker), then registered candidates not
    yet listed, then every named variant (id = its name, run with its base chunker and params).
    """
    ids = list(settings.chunkers) if settings.chunkers is not None else default_chunker_ids()
    for cand in settings.candidates:
        if cand not in ids and (_registered(cand) or cand in settings.variants):
            ids.append(cand)
    for name in settings.variants:
        if name not in ids:
            ids.append(name)
    plan = []
    for cid in dict.fromkeys(ids):
        v = settings.variants.get(cid)
        if v is not None:
            plan.append((cid, v["chunker"], dict(v.get("params") or {})))
        else:
            plan.append((cid, cid, dict(settings.params.get(cid, {}))))
    return plan


def variant_label(base_label: str, base_id: str, params: dict[str, Any], overrides: dict[str, Any]) -> str:
    """What a named variant is: its base chunker and the parameters that differ from it."""
    shown = ", ".join(f"{k}={_short(params.get(k, v))}" for k, v in overrides.items())
    return f"{base_label} [{base_id}{' @ ' + shown if shown else ''}]"


def _short(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "|".join(map(str, v)) if len(v) <= 4 else f"[{len(v)} items]"
    return str(v)


def chunk_one(doc: Document, cid: str, base_id: str | None = None, overrides: dict[str, Any] | None = None,
              resources: Any = None, candidate: bool = False) -> ChunkingResult:
    """Run one chunking (chunker ``base_id`` with ``overrides``, reported as ``cid``): spans, token
    counts and coverage audit. Never raises for a bad parameter or a chunker bug: the result is
    ``failed`` with the reason. The one place a chunking is produced (analyze and tune share it).
    """
    from core.chunkers import registry
    from core.chunkers.audit import audit
    from core.chunkers.base import ParamError
    from core.tokens import count_many

    base_id = base_id or cid
    overrides = dict(overrides or {})
    t0 = time.perf_counter()
    try:
        spec = registry.get(base_id)
    except KeyError:
        return ChunkingResult(cid, cid, {}, candidate, "failed", reason=f"unknown chunker id '{base_id}'")
    label = spec.label
    try:
        params = spec.resolve_params(overrides)
        if base_id != cid:
            label = variant_label(spec.label, base_id, params, overrides)
        res = registry.run_chunker(doc, base_id, overrides, ctx=resources)
    except ParamError as exc:
        params, res = overrides, None
        reason = str(exc)
    except Exception as exc:  # a chunker bug must not sink the whole analysis; say so
        params, res = overrides, None
        reason = f"internal error in {cid}: {type(exc).__name__}: {exc}"
    cr = ChunkingResult(cid, label, params, candidate, "failed")
    if res is None:
        cr.reason = reason
    else:
        cr.status, cr.reason, cr.info = res.status, res.reason, dict(res.info)
        if base_id != cid:
            cr.info["variant_of"] = base_id
        if res.status == "ok":
            texts = [doc.text[s.start:s.end] for s in res.spans]
            toks = count_many(texts)
            cr.chunks = [ChunkRow(s.start, s.end, n) for s, n in zip(res.spans, toks)]
            cr.audit = audit(doc, res.spans).to_dict()
    cr.seconds = time.perf_counter() - t0
    return cr


def score_metrics(doc: Document, r: ChunkingResult, settings: Settings, pairs: Any, rc_reason: str,
                  embed: Callable | None, emb_error: str = "") -> float:
    """Fill ``r.metrics``/``metric_reasons``/``diagnostics`` for one OK chunking; returns seconds spent.

    ``pairs``: coreference pairs or None (then RC is None with ``rc_reason``); ``embed``: the
    span embedder (None: ICC/DCC are None with ``emb_error``). Shared by analyze and tune.
    """
    from core import metrics as M

    t0 = time.perf_counter()
    split_points = doc.split_points
    spans = [Span(c.start, c.end) for c in r.chunks]
    toks = [c.tokens for c in r.chunks]
    found = {
        "SC": M.size_compliance(toks, min_tokens=settings.min_tokens, max_tokens=settings.max_tokens),
        "BI": M.block_integrity(spans, split_points, len(doc.text), tolerance=settings.bi_tolerance),
    }
    if pairs is None:
        found["RC"] = None
    else:
        found["RC"] = M.references_completeness(spans, pairs)
    if embed is not None:
        found["ICC"] = M.intrachunk_cohesion(spans, split_points, embed, text=doc.text)
        found["DCC"] = M.document_contextual_coherence(
            spans, toks, embed, window_tokens=settings.window_tokens, window_step=settings.window_step,
            text=doc.text,
        )
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


def analyze(
    doc: Document,
    settings: Settings | None = None,
    resources: Resources | None = None,
    progress: Progress | None = None,
) -> Report:
    settings = settings or Settings()
    settings.validate()
    progress = progress or _no_progress
    resources = resources or Resources(settings.embedder, settings.embedding_mode)
    if resources.mode != settings.embedding_mode or resources.embedder_name != settings.embedder:
        resources = Resources(settings.embedder, settings.embedding_mode, resources._llm_settings)
    t_total = time.perf_counter()
    embed_s0 = resources.embedding_seconds()
    timings = {k: 0.0 for k in ("chunk", "coref", "embed", "metrics")}
    warnings: list[str] = list(doc.warnings)
    plan = chunking_plan(settings)

    # 1. chunking
    results: list[ChunkingResult] = []
    for i, (cid, base_id, overrides) in enumerate(plan):
        progress("chunking", i / max(1, len(plan)), cid)
        cr = chunk_one(doc, cid, base_id, overrides, resources, candidate=cid in settings.candidates)
        timings["chunk"] += cr.seconds
        results.append(cr)
    progress("chunking", 1.0, f"{sum(r.ok for r in results)} of {len(results)} chunkings ok")

    # 2. coreference (RC)
    pairs: list[tuple[tuple[int, int], tuple[int, int]]] | None = None
    coref_info: dict[str, Any] = {"backend": settings.coref}
    progress("coreference", 0.0, settings.coref)
    t0 = time.perf_counter()
    pairs, rc_reason, coref_info = _coref_pairs(doc, settings)
    warnings.extend(f"coreference: {w}" for w in coref_info.get("warnings", []))
    timings["coref"] = time.perf_counter() - t0
    progress("coreference", 1.0, rc_reason or f"{len(pairs or [])} entity-pronoun pairs")

    # 3. embeddings (ICC, DCC)
    ok = [r for r in results if r.ok]
    embed = None
    emb_info: dict[str, Any] = {"model": settings.embedder or "all-MiniLM-L6-v2 (bundled)", "mode": settings.embedding_mode}
    emb_error = ""
    if ok:
        progress("embedding", 0.0, "loading model")
        t0 = time.perf_counter()
        embed, more, emb_error = span_embedding(doc, resources)
        emb_info.update(more)
        if emb_error:
            warnings.append(emb_error)
        timings["embed"] += time.perf_counter() - t0
        progress("embedding", 1.0, emb_error or "document units embedded")

    # 4. metrics
    for i, r in enumerate(ok):
        progress("metrics", i / max(1, len(ok)), r.id)
        dt = score_metrics(doc, r, settings, pairs, rc_reason, embed, emb_error)
        timings["metrics"] += dt
    if embed is not None:
        # spans are embedded while scoring: only now are the stats and warnings (exact mode:
        # texts truncated by the model) complete
        try:
            se = resources.span_embedder(doc)
            emb_info.update(_embedder_info(resources, se))
            warnings.extend(w for w in (getattr(se, "warnings", None) or []) if w not in warnings)
        except Exception:  # facts only: never fail an analysis for them
            pass
    progress("metrics", 1.0, "done")

    # 5. adaptive selection
    report = Report(
        document=document_facts(doc),
        settings=settings.to_dict(),
        chunkings=results,
        winner=None,
        explanation="",
        timings=timings,
        warnings=warnings,
        coref=coref_info,
        embedder=emb_info,
    )
    rescore(report, settings.weights, settings.candidates)
    # time spent inside the embedding model (loading + encoding), wherever it happened
    # (the semantic chunker embeds sentences during chunking)
    timings["embed"] = resources.embedding_seconds() - embed_s0
    timings["total"] = time.perf_counter() - t_total
    progress("selection", 1.0, f"winner: {report.winner}")
    return report


def span_embedding(doc: Document, resources: Resources) -> tuple[Callable | None, dict[str, Any], str]:
    """(embed(spans), embedder facts, "") with the document's units embedded once, or
    (None, {}, reason) when the model is unavailable (ICC/DCC then become None with the reason)."""
    try:
        se = resources.span_embedder(doc)
        se.prepare()  # embed the document's units once (composed mode); a no-op for exact
        return se.embed, _embedder_info(resources, se), ""
    except Exception as exc:  # model missing etc.
        return None, {}, f"embeddings unavailable: {exc}"


def _coref_pairs(doc: Document, settings: Settings):
    """Entity-pronoun pairs as ((s, e), (s, e)) half-open spans, or None with the reason."""
    if settings.coref == "none":
        return None, "coreference disabled (--coref none)", {"backend": "none"}
    try:
        from core.coref import CorefError, get_pairs
    except ImportError as exc:
        return None, f"coreference unavailable: {exc}", {"backend": settings.coref}
    backend = settings.coref
    if settings.mentions and backend == "heuristic":
        backend = "precomputed"  # giving a mentions file means: use it
    try:
        res = get_pairs(doc, backend=backend, mentions=settings.mentions)
    except CorefError as exc:
        return None, str(exc), {"backend": backend, "error": str(exc)}
    pairs = [((p.entity.start, p.entity.end), (p.pronoun.start, p.pronoun.end)) for p in res.pairs]
    info = {"backend": res.backend, "pairs": len(pairs), "reason": res.reason}
    if res.warnings:
        info["warnings"] = list(res.warnings)
    if not pairs:
        return None, res.reason or "no entity-pronoun pairs found", info
    return pairs, "", info


def _embedder_info(resources: Resources, se: Any) -> dict[str, Any]:
    info: dict[str, Any] = {}
    emb = resources.embedder()
    for attr in ("name", "max_tokens"):
        if hasattr(emb, attr):
            info[attr if attr != "name" else "model"] = getattr(emb, attr)
    stats = getattr(se, "stats", None)
    if stats:
        info["stats"] = stats() if callable(stats) else stats
    w = getattr(se, "warnings", None)
    if w:
        info["warnings"] = list(w)
    return info


def document_facts(doc: Document) -> dict[str, Any]:
    from core.tokens import count_tokens

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


# ---------------------------------------------------------------- adaptive selection

def rescore(report: Report, weights: dict[str, float] | None = None,
            candidates: tuple[str, ...] | list[str] | None = None) -> Report:
    """Recompute scores, candidate flags, winner and explanation in place (no re-embedding)."""
    weights = {m: 1.0 for m in METRICS} | dict(weights or report.settings.get("weights") or {})
    cands = tuple(candidates if candidates is not None else report.settings.get("candidates", DEFAULT_CANDIDATES))
    report.settings["weights"] = weights
    report.settings["candidates"] = list(cands)
    for c in report.chunkings:
        c.candidate = c.id in cands
        c.score = metric_score(c.metrics, weights) if c.ok else None
    pool = [c for c in report.ranked if c.candidate]
    report.flags = []
    if not pool:
        report.winner = None
        missing = [c for c in cands if report.get(c) is None or not report.get(c).ok]
        why = "; ".join(
            f"{cid}: {report.get(cid).reason if report.get(cid) else 'not run'}" for cid in missing
        )
        scoreless = [c for c in report.chunkings if c.id in cands and c.ok]
        if scoreless:  # they ran, but every metric with a positive weight is missing for them
            used = [m for m in METRICS if weights.get(m, 0) > 0]
            c0 = scoreless[0]
            reasons = ", ".join(f"{m}: {c0.metric_reasons.get(m) or 'not computed'}" for m in used)
            why = "; ".join(filter(None, [why, f"no metric with a positive weight ({', '.join(used)}) is "
                                               f"available for the candidates ({reasons})"]))
        report.explanation = "No candidate chunking produced a score, so there is no adaptive winner" + (
            f" ({why})." if why else "."
        )
        report.flags.append("no-winner")
        return report
    best = pool[0]
    report.winner = best.id
    report.explanation, report.flags = explain(best, pool[1] if len(pool) > 1 else None, weights, report)
    return report


def explain(best: ChunkingResult, runner: ChunkingResult | None, weights: dict[str, float],
            report: Report) -> tuple[str, list[str]]:
    flags: list[str] = []
    parts = [f"{best.id} wins with a score of {best.score:.3f}"]
    if runner is None:
        parts[0] += " as the only candidate with a score."
        flags.append("single-candidate")
    else:
        margin = best.score - runner.score
        parts[0] += f", {margin:.3f} ahead of {runner.id} ({runner.score:.3f})."
        if margin == 0:
            flags.append("tie")
            parts.append(f"It ties on score and wins the tie-break ({len(best.chunks)} vs "
                         f"{len(runner.chunks)} chunks, then id).")
        leads, trails, one_sided = [], [], []
        for m in METRICS:
            a, b = best.metrics.get(m), runner.metrics.get(m)
            if weights.get(m, 0) <= 0 or (a is None and b is None):
                continue
            if a is None or b is None:
                who, other = (runner, best) if a is None else (best, runner)
                one_sided.append(f"{m} is scored for {who.id} ({who.metrics[m]:.3f}) but not for {other.id} "
                                 f"({other.metric_reasons.get(m, 'not computed')})")
                continue
            d = a - b
            if d > 0.0005:
                leads.append((d, f"{m} {a:.3f} vs {b:.3f}"))
            elif d < -0.0005:
                trails.append((-d, f"{m} {a:.3f} vs {b:.3f}"))
        if leads:
            parts.append("It leads on " + ", ".join(s for _, s in sorted(leads, reverse=True)) + ".")
        if trails:
            parts.append("It trails on " + ", ".join(s for _, s in sorted(trails, reverse=True)) + ".")
        if one_sided:
            parts.append("; ".join(one_sided) + ".")
        if not leads and not trails and not one_sided:
            parts.append("Both score the same on every metric.")
    missing = [m for m in METRICS if best.metrics.get(m) is None and weights.get(m, 0) > 0]
    if missing:
        flags.append("metrics-missing")
        reasons = "; ".join(f"{m}: {best.metric_reasons.get(m, 'not computed')}" for m in missing)
        parts.append(f"Scored without {', '.join(missing)} ({reasons}), so the mean covers fewer metrics.")
    if len(best.chunks) == 1:
        flags.append("single-chunk")
        parts.append("Warning: the winner is a single chunk (the whole document); BI and RC are trivially "
                     "perfect and ICC/DCC may be undefined, so check that this is what you want.")
    others = [c for c in report.chunkings if c.ok and not c.candidate and c.score is not None and c.score > best.score]
    if others:
        top = max(others, key=lambda c: c.score)
        parts.append(f"(Non-candidate {top.id} scores higher, {top.score:.3f}; add it to the candidates to let it win.)")
    return " ".join(parts), flags
