"""Stage 2, structure: the chunking plan, producing one chunking, and the scores that need no model.

Every chunking whose chunker needs nothing but the text (``ChunkerSpec.needs == ""``) runs in
this stage, so its chunk counts, sizes, SC, BI and broken blocks are known before any model
loads. Chunkings that need the embedder or an LLM are produced by their own stage with the same
``chunk_one``.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from chunkscope import metrics as M
from chunkscope.analysis.settings import Settings
from chunkscope.chunkers import registry
from chunkscope.document import Document, Span
from chunkscope.report import ChunkingResult, ChunkRow

if TYPE_CHECKING:
    from chunkscope.analysis.resources import ResourcesProtocol

OPTIONAL_DEFAULTS = ("semantic", "semantic+pp", "llm-regex", "llm-regex+pp")


def default_chunker_ids() -> list[str]:
    """The chunkers an analysis runs when the settings name none: the registry's defaults, then the optional ones registered."""
    ids = list(registry.DEFAULT_IDS)
    for extra in OPTIONAL_DEFAULTS:
        if extra not in ids and registry.is_registered(extra):
            ids.append(extra)
    return ids


def chunking_plan(settings: Settings) -> list[tuple[str, str, dict[str, Any]]]:
    """What an analysis runs, in order: (chunking id, registered chunker id, parameter overrides).

    The requested chunkers (default: every default chunker), then registered candidates not
    yet listed, then every named variant (id = its name, run with its base chunker and params).
    """
    ids = list(settings.chunkers) if settings.chunkers is not None else default_chunker_ids()
    for cand in settings.candidates:
        if cand not in ids and (registry.is_registered(cand) or cand in settings.variants):
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


def needs(base_id: str) -> str:
    """What a registered chunker needs beyond the text ("", "embedder", "llm").

    "" when unknown (an unknown id fails in ``chunk_one`` with its reason, in the structure stage).
    """
    return registry.get(base_id).needs if registry.is_registered(base_id) else ""


def uses_sentences(base_id: str) -> bool:
    """Whether a registered chunker needs the sentence segmenter (a spaCy model).

    The structure stage runs those after its first snapshot.
    """
    return registry.get(base_id).uses_sentences if registry.is_registered(base_id) else False


def variant_label(base_label: str, base_id: str, params: dict[str, Any], overrides: dict[str, Any]) -> str:
    """What a named variant is: its base chunker and the parameters that differ from it.

    A default the base label names ("Recursive split-then-merge (1100)") is left out when the variant changes it.
    """
    shown = ", ".join(f"{k}={_short(params.get(k, v))}" for k, v in overrides.items())
    defaults = registry.get(base_id).resolve_params({}) if registry.is_registered(base_id) else {}
    for k in overrides:
        d = defaults.get(k)
        if d is not None and params.get(k, overrides[k]) != d:
            base_label = re.sub(r"\s*\(" + re.escape(str(d)) + r"\)", "", base_label)
    return f"{base_label} [{base_id}{' @ ' + shown if shown else ''}]"


def _short(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "|".join(map(str, v)) if len(v) <= 4 else f"[{len(v)} items]"
    return str(v)


def chunk_one(doc: Document, cid: str, base_id: str | None = None, overrides: dict[str, Any] | None = None,
              resources: ResourcesProtocol | None = None, candidate: bool = False) -> ChunkingResult:
    """Run one chunking (chunker ``base_id`` with ``overrides``, reported as ``cid``): spans, tokens, audit.

    Never raises for a bad parameter or a chunker bug: the result is ``failed`` with the reason.
    The one place a chunking is produced (analyze and tune share it).
    """
    from chunkscope.chunkers.audit import audit
    from chunkscope.chunkers.base import ParamError
    from chunkscope.text.tokens import count_many

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
    except Exception as exc:  # noqa: BLE001 - boundary: a chunker bug must not sink the whole analysis; say so
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


def structure_metrics(doc: Document, r: ChunkingResult, settings: Settings) -> dict[str, M.MetricResult]:
    """SC and BI of one OK chunking (the metrics that need neither pairs nor a model)."""
    spans = [Span(c.start, c.end) for c in r.chunks]
    return {
        "SC": M.size_compliance([c.tokens for c in r.chunks], min_tokens=settings.min_tokens,
                                max_tokens=settings.max_tokens),
        "BI": M.block_integrity(spans, doc.split_points, len(doc.text), tolerance=settings.bi_tolerance),
    }
