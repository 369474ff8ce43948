"""Every chunker id, by name. The public API other modules code against.

* ``get(chunker_id)`` -> ChunkerSpec; any ``ID+pp`` is the base chunker followed by
  the paper's post-processing, with the base params plus ``pp_max_tokens``,
  ``pp_min_tokens`` and ``pp_merge_max``.
* ``ids(include_pp=True)`` -> registered ids (with their ``+pp`` variants).
* ``DEFAULT_IDS`` -> what an analysis runs by default: every DESIGN section 4 id that
  is registered, plus the paper's candidates (``page+pp``, ``recursive-1100+pp``,
  ``recursive-600+pp``, and ``llm-regex+pp``/``semantic+pp`` once registered).
* ``is_registered(chunker_id)``: the one "is this id known" check (``+pp`` ids included).
* ``register(spec)`` adds a chunker; an id that is already taken is an error, never a silent
  replacement (registering the very same spec again is a no-op). Modules never register
  themselves: each family module exposes ``specs()`` and this module registers them, the
  optional ones (semantic, llm-regex) only when their dependencies import.
* ``run_chunker(doc, id, params, ctx)`` validates params (ParamError with a user
  message) and runs the chunker; it times nothing.
"""

from __future__ import annotations

import importlib
import logging
import traceback
from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamError, all_of
from chunkscope.chunkers.postprocess import PP_PARAMS, PostprocessStats, postprocess, validate_pp
from chunkscope.document import Document, Span

log = logging.getLogger(__name__)

PP_SUFFIX = "+pp"

# DESIGN section 4 order; DEFAULT_IDS keeps the registered ones in this order.
_DESIGN_ORDER = (
    "page", "page+pp", "recursive-1100", "recursive-1100+pp", "recursive-600", "recursive-600+pp",
    "langchain-default", "langchain-1100", "sentence-5", "semantic", "semantic+pp",
    "llm-regex", "llm-regex+pp", "fixed-512", "structure", "whole",
)

_SPECS: dict[str, ChunkerSpec] = {}
DEFAULT_IDS: list[str] = []
OPTIONAL_MODULES = ("chunkscope.chunkers.semantic", "chunkscope.chunkers.llm_regex")
OPTIONAL_ERRORS: dict[str, str] = {}  # module -> why it could not be imported


class UnknownChunker(KeyError, ParamError):
    """A chunker id that names no registered chunker."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown chunker"


def _refresh_defaults() -> None:
    DEFAULT_IDS[:] = [i for i in _DESIGN_ORDER if _base_id(i) in _SPECS]


def _base_id(chunker_id: str) -> str:
    return chunker_id[: -len(PP_SUFFIX)] if chunker_id.endswith(PP_SUFFIX) else chunker_id


def register(spec: ChunkerSpec) -> None:
    """Register a base chunker (its '+pp' variant is derived); the same spec twice is fine, a clash raises."""
    if spec.id.endswith(PP_SUFFIX):
        raise ValueError(f"register the base chunker, not '{spec.id}': '+pp' variants are derived")
    if spec.id in _SPECS:
        if _SPECS[spec.id] is spec:
            return
        raise ValueError(f"chunker '{spec.id}' is already registered")
    names = [p.name for p in spec.params]
    clash = set(names) & {p.name for p in PP_PARAMS}
    if clash or len(set(names)) != len(names):
        raise ValueError(f"chunker '{spec.id}': duplicate or reserved parameter names {sorted(clash) or names}")
    _SPECS[spec.id] = spec
    _refresh_defaults()


def unregister(chunker_id: str) -> None:
    """Remove a chunker registered with ``register`` (plugins, tests); unknown ids are ignored."""
    _SPECS.pop(_base_id(chunker_id), None)
    _refresh_defaults()


def ids(include_pp: bool = True) -> list[str]:
    """Registered chunker ids in registration order, each followed by its '+pp' variant unless ``include_pp`` is False."""
    out: list[str] = []
    for i in _SPECS:
        out.append(i)
        if include_pp:
            out.append(i + PP_SUFFIX)
    return out


def _pp_spec(base: ChunkerSpec) -> ChunkerSpec:
    def run(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
        base_params = {p.name: params[p.name] for p in base.params}
        res = base.fn(doc, base_params, ctx)
        if res.status != "ok":
            return res
        stats = PostprocessStats()
        spans = postprocess(doc.text, res.spans, int(params["pp_max_tokens"]), int(params["pp_min_tokens"]),
                            int(params["pp_merge_max"]), stats)
        info = dict(res.info)
        info["postprocess"] = stats.to_dict()
        info["raw_chunks"] = len(res.spans)
        return ChunkResult(spans=spans, status="ok", reason=res.reason, info=info)

    return ChunkerSpec(
        id=base.id + PP_SUFFIX,
        label=base.label + " + pp",
        description=base.description + "; then post-processed (oversized re-split, tiny-chunk merge)",
        params=tuple(base.params) + PP_PARAMS,
        fn=run,
        family=base.family,
        validate=all_of(base.validate, validate_pp),
        needs=base.needs,
        uses_sentences=base.uses_sentences,
    )


def is_registered(chunker_id: str) -> bool:
    """Whether ``chunker_id`` (with or without '+pp') names a registered chunker."""
    return _base_id(chunker_id) in _SPECS


def get(chunker_id: str) -> ChunkerSpec:
    """The spec of a chunker id ('+pp' derives the post-processed one); UnknownChunker otherwise."""
    base_id = _base_id(chunker_id)
    spec = _SPECS.get(base_id)
    if spec is None:
        known = ", ".join(ids(include_pp=False))
        raise UnknownChunker(f"unknown chunker '{chunker_id}' (known: {known}; add '+pp' for post-processing)")
    return _pp_spec(spec) if chunker_id != base_id else spec


def _check_spans(doc: Document, spans: list[Span]) -> str | None:
    n = len(doc.text)
    prev = None
    for i, s in enumerate(spans):
        if not isinstance(s, Span) or s.start < 0 or s.end > n or s.end < s.start:
            return f"chunk {i} is not a span inside the text: {s!r}"
        if prev is not None and (s.start < prev.start or s.end < prev.end):
            return f"chunk {i} is out of order"
        prev = s
    return None


def run_chunker(doc: Document, chunker_id: str, params: dict[str, Any] | None = None,
                ctx: Any = None) -> ChunkResult:
    """Resolve params (ParamError on bad input), run, check the spans. Never times."""
    spec = get(chunker_id)
    resolved = spec.resolve_params(params)
    try:
        res = spec.fn(doc, resolved, ctx)
    except ParamError:
        raise
    except Exception as exc:  # a chunker bug must not take the whole analysis down
        log.exception("chunker %s failed", chunker_id)
        return ChunkResult.failed(f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=5),
                                  params=resolved)
    if res.status == "ok":
        bad = _check_spans(doc, res.spans)
        if bad is not None:
            return ChunkResult.failed(f"invalid output: {bad}", params=resolved)
    res.info.setdefault("params", resolved)
    return res


def _load_builtin() -> None:
    from chunkscope.chunkers import fixed, langchain, page, recursive, sentence, structure, whole

    for mod in (page, recursive, langchain, sentence, fixed, structure, whole):
        for spec in mod.specs():
            register(spec)


def _load_optional() -> None:
    for name in OPTIONAL_MODULES:
        try:
            mod = importlib.import_module(name)
            for spec in mod.specs():
                register(spec)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module exists but a dependency is missing
                OPTIONAL_ERRORS[name] = str(exc)
        except Exception as exc:  # noqa: BLE001 - boundary: an optional family with a bug of its own is recorded in
            # OPTIONAL_ERRORS (shown by `chunkscope chunkers`) and the other chunkers still load
            OPTIONAL_ERRORS[name] = f"{type(exc).__name__}: {exc}"
            log.warning("optional chunker module %s could not be imported: %s", name, exc)


_load_builtin()
_load_optional()
