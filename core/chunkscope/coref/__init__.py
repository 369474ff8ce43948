"""Coreference: entity–pronoun pairs for References Completeness (DESIGN section 8).

Public API (used by ``chunkscope.analysis``, the CLI and the app)::

    get_pairs(doc, backend=None, mentions=None, model=None) -> CorefResult

Backends:

* ``heuristic`` (default; offline, English): spaCy rules, see ``chunkscope.coref.heuristic``;
* ``learned`` (offline, English): a small pair scorer learned from Maverick's pairs over the
  spaCy parse, see ``chunkscope.coref.learned`` (``docs/coreference.md`` compares the two);
* ``maverick`` (optional extra ``chunkscope[maverick]``, non-commercial licence): the model the
  paper used, see ``chunkscope.coref.maverick``;
* ``precomputed``: pairs read from the reference mentions parquet or a JSON of pairs
  (``mentions=PATH``), see ``chunkscope.coref.precomputed``;
* ``none``: no coreference; RC is not computed.

Every span is half-open ``[start, end)`` into ``Document.text`` (inclusive ends of the
reference data are converted on reading). A result without pairs carries ``reason``, the
one-line explanation shown where RC would be (non-English document, no pronouns, ...).
Backends that cannot run raise :class:`CorefError` with a one-line message.
"""

from __future__ import annotations

from pathlib import Path

from chunkscope.caching import BoundedCache
from chunkscope.coref.base import (
    BACKENDS,
    CorefError,
    CorefResult,
    Pair,
    cache_dir,
    document_language,
)
from chunkscope.document import Document
from chunkscope.text.language import rc_available


def non_english_reason(lang: str) -> str:
    """Why a document in ``lang`` gets no pairs: the backends are English only."""
    return f"non-English document ({lang}): RC not computed"


def get_pairs(
    doc: Document,
    backend: str | None = None,
    mentions: str | Path | None = None,
    model: str | None = None,
) -> CorefResult:
    """Entity–pronoun pairs of ``doc`` from one backend.

    ``backend`` None means ``precomputed`` when ``mentions`` is given, else ``heuristic``.
    ``mentions``: path of a reference mentions parquet or a JSON of pairs (precomputed only).
    ``model``: Maverick model name or local path (maverick only; default from
    ``CHUNKSCOPE_MAVERICK_MODEL``, else ``sapienzanlp/maverick-mes-ontonotes``).
    Raises :class:`CorefError` when the chosen backend cannot run.
    """
    if backend is None:
        backend = "precomputed" if mentions is not None else "heuristic"
    backend = backend.strip().lower()
    if backend not in BACKENDS:
        raise CorefError(f"unknown coreference backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    warnings: list[str] = []
    if mentions is not None and backend != "precomputed":
        warnings.append(f"mentions file ignored: it is only read by the precomputed backend (backend is {backend})")

    if backend == "none":
        return CorefResult([], "none", reason="coreference disabled (backend none): RC not computed", warnings=warnings)

    lang = document_language(doc)
    if backend == "precomputed":
        return _precomputed(doc, mentions, lang, warnings)
    if not rc_available(lang):
        return CorefResult([], backend, reason=non_english_reason(lang),
                           warnings=warnings, info={"language": lang})
    res = _run_backend(doc, backend, model)
    res.warnings = warnings + res.warnings
    res.info.setdefault("language", lang)
    if lang == "und":
        res.warnings.append("document language unknown; coreference run as English")
    return res


def _precomputed(doc: Document, mentions: str | Path | None, lang: str, warnings: list[str]) -> CorefResult:
    """The precomputed backend's result: the pairs of ``mentions`` checked against ``doc``."""
    if mentions is None:
        raise CorefError("precomputed coreference needs a mentions file (reference parquet or JSON of pairs)")
    pairs, load_warnings = mentions_pairs(doc, mentions)
    res = CorefResult(pairs, "precomputed", warnings=warnings + load_warnings,
                      info={"language": lang, "source": str(mentions)})
    if not pairs:
        res.reason = (non_english_reason(lang) if not rc_available(lang)
                      else f"no entity–pronoun pairs in {Path(mentions).name}: RC not computed")
    return res


def _run_backend(doc: Document, backend: str, model: str | None) -> CorefResult:
    """The pairs of a backend that reads the text (heuristic, learned, maverick); CorefError when it cannot run."""
    from chunkscope.text.nlp import NLPUnavailable

    try:
        if backend == "maverick":
            from chunkscope.coref.maverick import maverick_pairs

            return maverick_pairs(doc, model=model)
        if backend == "learned":
            from chunkscope.coref.learned import learned_pairs

            return learned_pairs(doc)
        from chunkscope.coref.heuristic import heuristic_pairs

        return heuristic_pairs(doc)
    except NLPUnavailable as exc:
        raise CorefError(str(exc)) from None


def mentions_pairs(doc: Document, mentions: str | Path) -> tuple[list[Pair], list[str]]:
    """The pairs of a mentions file, checked against ``doc`` (:func:`~chunkscope.coref.precomputed.load_pairs`:
    every span inside its text and, for a document RC is computed for, pronoun spans that are pronouns there).
    The one check the analysis, the CLI and the app make. Raises ``CorefError``.

    A file checked once against a document is not read again while it is unchanged (same path, size and
    modification time): the CLI checks ``--mentions`` before the analysis, which then uses them."""
    from chunkscope.coref.precomputed import load_pairs

    path = Path(mentions)
    english = rc_available(document_language(doc))  # the language can be set by hand: part of the key
    try:
        st = path.stat()
        key: tuple | None = (doc.sha256, english, str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:
        key = None  # load_pairs says what is wrong with it
    hit = _CHECKED.get(key) if key else None
    if hit is None:
        hit = load_pairs(mentions, len(doc.text), text=doc.text if english else None)
        if key:
            _CHECKED.put(key, hit)
    return list(hit[0]), list(hit[1])


_CHECKED: BoundedCache[tuple, tuple[list[Pair], list[str]]] = BoundedCache(8)


__all__ = ["BACKENDS", "CorefError", "CorefResult", "Pair", "cache_dir", "document_language", "get_pairs", "mentions_pairs"]
