"""Coreference data: backends' names, pairs, results and errors (shared by every backend)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunkscope.caching import cache_root, disk_cache_written, file_used
from chunkscope.document import Document, Span

BACKENDS = ("heuristic", "learned", "maverick", "precomputed", "none")


class CorefError(RuntimeError):
    """A backend cannot run (missing extra, unreadable mentions, ...). The message is one line."""


@dataclass(frozen=True)
class Pair:
    """One entity–pronoun pair; both spans half-open into the document text.

    ``score``: the backend's confidence in the pair (0..1) when it gives one (the learned
    ``learned`` backend does), else None; it is not part of the pair's identity.
    """

    entity: Span
    pronoun: Span
    score: float | None = field(default=None, compare=False)

    def __iter__(self):  # (entity, pronoun): unpacks like the reference's [[es, ee], [ps, pe]]
        yield self.entity
        yield self.pronoun

    def to_dict(self) -> dict[str, Any]:
        """The pair as JSON: ``{"entity": [s, e], "pronoun": [s, e]}`` and ``score`` when there is one."""
        d: dict[str, Any] = {"entity": [self.entity.start, self.entity.end],
                             "pronoun": [self.pronoun.start, self.pronoun.end]}
        if self.score is not None:
            d["score"] = self.score
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Pair":
        """The pair :meth:`to_dict` wrote."""
        score = d.get("score")
        return cls(Span(*map(int, d["entity"])), Span(*map(int, d["pronoun"])),
                   None if score is None else float(score))


@dataclass
class CorefResult:
    """Pairs found by one backend. ``reason`` is set when there are no pairs (why RC is None)."""

    pairs: list[Pair]
    backend: str
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # e.g. language, seconds, cached, model

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON (the disk cache's entry)."""
        return {
            "backend": self.backend,
            "pairs": [p.to_dict() for p in self.pairs],
            "reason": self.reason,
            "warnings": list(self.warnings),
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CorefResult":
        """The result :meth:`to_dict` wrote."""
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
    from chunkscope.text.language import language_code

    return language_code(doc.text, plain=doc.source_format == "text")


def cache_dir() -> Path | None:
    """Where coreference pairs are cached on disk; None when they are not (``caching.cache_root``)."""
    root = cache_root("coref")
    return root / "coref" if root is not None else None


NO_PAIRS = "no third-person pronouns with an antecedent found: RC not computed"


def cached_pairs(doc: Document, backend: str, version: str, resolve: Any, info: dict[str, Any] | None = None) -> CorefResult:
    """``resolve(text) -> pairs`` as a CorefResult of ``backend``, cached on disk (under
    CHUNKSCOPE_CACHE_DIR) by (backend version, document sha256); a damaged entry is recomputed."""
    import json
    import time

    cdir = cache_dir()
    cfile = cdir / f"{version}-{doc.sha256}.json" if cdir else None
    if cfile is not None and cfile.is_file():
        try:
            res = CorefResult.from_dict(json.loads(cfile.read_text()))
            res.info["cached"] = True
            file_used(cfile)
            return res
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache entry is recomputed
    t0 = time.perf_counter()
    pairs = resolve(doc.text)
    res = CorefResult(pairs, backend, reason="" if pairs else NO_PAIRS,
                      info={**(info or {}), "version": version, "seconds": round(time.perf_counter() - t0, 3)})
    if cfile is not None:
        cfile.parent.mkdir(parents=True, exist_ok=True)
        cfile.write_text(json.dumps(res.to_dict()))
        disk_cache_written()
    return res
