"""Coreference: entity–pronoun pairs for References Completeness (DESIGN section 8).

Public API (used by ``core/analysis.py``, the CLI and the app)::

    get_pairs(doc, backend=None, mentions=None, model=None) -> CorefResult

Backends:

* ``heuristic`` (default; offline, English): spaCy rules, see ``chunkscope.coref.heuristic``;
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

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunkscope.document import Document, Span

BACKENDS = ("heuristic", "maverick", "precomputed", "none")


class CorefError(RuntimeError):
    """A backend cannot run (missing extra, unreadable mentions, ...). The message is one line."""


@dataclass(frozen=True)
class Pair:
    """One entity–pronoun pair; both spans half-open into the document text."""

    entity: Span
    pronoun: Span

    def __iter__(self):  # (entity, pronoun): unpacks like the reference's [[es, ee], [ps, pe]]
        yield self.entity
        yield self.pronoun

    @property
    def bounds(self) -> tuple[int, int]:
        """``(s, t)`` of DESIGN section 6: start of the earlier mention, end of the later one."""
        first, last = (self.entity, self.pronoun) if self.entity.start <= self.pronoun.start else (self.pronoun, self.entity)
        return first.start, last.end

    def to_dict(self) -> dict[str, list[int]]:
        return {"entity": [self.entity.start, self.entity.end], "pronoun": [self.pronoun.start, self.pronoun.end]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Pair":
        return cls(Span(*map(int, d["entity"])), Span(*map(int, d["pronoun"])))


@dataclass
class CorefResult:
    """Pairs found by one backend. ``reason`` is set when there are no pairs (why RC is None)."""

    pairs: list[Pair]
    backend: str
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # e.g. language, seconds, cached, model

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "pairs": [p.to_dict() for p in self.pairs],
            "reason": self.reason,
            "warnings": list(self.warnings),
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CorefResult":
        return cls(
            pairs=[Pair.from_dict(p) for p in d.get("pairs", [])],
            backend=str(d.get("backend", "")),
            reason=str(d.get("reason", "")),
            warnings=list(d.get("warnings", [])),
            info=dict(d.get("info", {})),
        )


def document_language(doc: Document) -> str:
    """``doc.language``, or (when "und") the language detected with py3langid."""
    lang = (doc.language or "und").lower()
    if lang != "und":
        return lang
    from chunkscope.language import language_code

    return language_code(doc.text)


def cache_dir() -> Path | None:
    d = os.environ.get("CHUNKSCOPE_CACHE_DIR")
    return Path(d) / "coref" if d else None


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
        if mentions is None:
            raise CorefError("precomputed coreference needs a mentions file (reference parquet or JSON of pairs)")
        from chunkscope.coref.precomputed import load_pairs

        pairs, load_warnings = load_pairs(mentions, len(doc.text))
        res = CorefResult(pairs, "precomputed", warnings=warnings + load_warnings,
                          info={"language": lang, "source": str(mentions)})
        if not pairs:
            res.reason = (f"non-English document ({lang}): RC not computed" if lang not in ("en", "und")
                          else f"no entity–pronoun pairs in {Path(mentions).name}: RC not computed")
        return res

    if lang not in ("en", "und"):
        return CorefResult([], backend, reason=f"non-English document ({lang}): RC not computed",
                           warnings=warnings, info={"language": lang})

    if backend == "heuristic":
        from chunkscope.coref.heuristic import heuristic_pairs

        res = heuristic_pairs(doc)
    else:
        from chunkscope.coref.maverick import maverick_pairs

        res = maverick_pairs(doc, model=model)
    res.warnings = warnings + res.warnings
    res.info.setdefault("language", lang)
    if lang == "und":
        res.warnings.append("document language unknown; coreference run as English")
    return res


__all__ = ["BACKENDS", "CorefError", "CorefResult", "Pair", "cache_dir", "document_language", "get_pairs"]
