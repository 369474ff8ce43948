"""Stage 3, coreference: entity–pronoun pairs (DESIGN section 8) and References Completeness."""

from __future__ import annotations

from typing import Any

from chunkscope import metrics as M
from chunkscope.analysis.settings import Settings
from chunkscope.document import Document, Span
from chunkscope.report import ChunkingResult

Pairs = list[tuple[tuple[int, int], tuple[int, int]]]
CorefOutcome = tuple[Pairs | None, str, dict[str, Any]]  # (pairs or None, why None, facts)


def uses_mentions(settings: Settings) -> bool:
    """Whether the analysis scores RC with ``settings.mentions`` (precomputed, or heuristic given a file)."""
    return bool(settings.mentions) and settings.coref in ("precomputed", "heuristic")


COREF_OFF = "coreference disabled (--coref none)"  # RC's reason when coreference is switched off


def check_mentions(doc: Document, settings: Settings) -> None:
    """Refuse (``CorefError``, one line) a mentions file the analysis would use but cannot.

    Unreadable, spans outside ``doc``, pronoun spans that are not pronouns in it (another document's file).
    The check ``analyze`` (``--mentions``) and corpus mode (a file found beside a document) make before any
    work, rather than leaving RC silently out of the scores.
    """
    if uses_mentions(settings):
        from chunkscope.coref import mentions_pairs

        mentions_pairs(doc, str(settings.mentions))


def rc_not_computed(doc: Document, settings: Settings) -> str:
    """Why RC will not be computed, when that is known before coreference runs ("" when it may be).

    Coreference off, or a document in another language than English (the backends are English only):
    the reason ``coref_pairs`` gives then. "" when RC may be computed (pending until coreference is
    done): a mentions file gives pairs in any language.
    """
    if settings.coref == "none":
        return COREF_OFF
    if uses_mentions(settings) or settings.coref == "precomputed":
        return ""
    from chunkscope.coref import non_english_reason
    from chunkscope.coref.base import document_language
    from chunkscope.text.language import rc_available

    lang = document_language(doc)
    return "" if rc_available(lang) else non_english_reason(lang)


def coref_pairs(doc: Document, settings: Settings) -> CorefOutcome:
    """(pairs as ((s, e), (s, e)) half-open spans, "", facts) or (None, the reason, facts)."""
    if settings.coref == "none":
        return None, COREF_OFF, {"backend": "none"}
    from chunkscope.coref import CorefError, get_pairs

    backend = settings.coref
    if uses_mentions(settings):
        backend = "precomputed"  # giving a mentions file means: use it
    try:
        res = get_pairs(doc, backend=backend, mentions=settings.mentions)
    except CorefError as exc:
        return None, str(exc), {"backend": backend, "error": str(exc)}
    pairs = [((p.entity.start, p.entity.end), (p.pronoun.start, p.pronoun.end)) for p in res.pairs]
    info: dict[str, Any] = {"backend": res.backend, "pairs": len(pairs), "reason": res.reason}
    if any(p.score is not None for p in res.pairs):  # the backend's confidence per pair, by pair index
        info["scores"] = [p.score for p in res.pairs]
    if res.warnings:
        info["warnings"] = list(res.warnings)
    if not pairs:
        return None, res.reason or "no entity-pronoun pairs found", info
    return pairs, "", info


def reference_metrics(r: ChunkingResult, pairs: Pairs | None) -> dict[str, M.MetricResult | None]:
    """RC of one OK chunking; None (with the stage's reason) when there are no pairs."""
    if pairs is None:
        return {"RC": None}
    return {"RC": M.references_completeness([Span(c.start, c.end) for c in r.chunks], pairs)}
