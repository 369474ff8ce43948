"""Tune: one chunker with given parameters, parameter sweeps, the quality–cost frontier, configs.

No Streamlit here: the Tune page, ``chunkscope sweep`` and the benchmark call these.

* ``score_chunking(doc, chunker_id, params, settings, resources)`` -> ChunkingResult: one
  chunking through the same two functions ``analyze()`` uses (``chunkscope.analysis.chunk_one`` and
  ``fill_metrics``), so a tuned configuration scores exactly what the leaderboard would show.
  Results are cached in memory by (document sha256, chunker id, canonical resolved params,
  metric settings): an unchanged configuration is never re-chunked or re-scored. Weights are
  not part of the key (the score is re-weighted on the way out).
* ``sweep(...)`` -> rows ``{"value", "chunks", "tokens", "metrics", "score"}`` (``tokens`` = total
  tokens embedded, the index cost; overlap inflates it); cancellable, with progress.
* ``parse_range("200:1500:100")``, ``pareto_front(points)``, ``gain_stops(rows)``,
  ``sweep_summary(rows, param, complete)`` (the conclusion both the page and the CLI print).
* Named variants: ``variant_name(chunker_id, params)``, ``add_variant(report, result)``,
  ``same_configuration`` (an existing chunking a new variant would only copy).
* Configs: ``config_dict`` / ``config_text`` / ``save_config`` (TOML or JSON) and
  ``parse_config``; ``chunkscope analyze --config FILE`` reads the same files.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from chunkscope.analysis.coreference import coref_pairs
from chunkscope.analysis.embedding import span_embedding
from chunkscope.analysis.resources import Resources, ResourcesProtocol
from chunkscope.analysis.run import fill_metrics
from chunkscope.analysis.selection import rescore
from chunkscope.analysis.settings import SCORES, Settings, settings_affecting
from chunkscope.analysis.structure import chunk_one, variant_label
from chunkscope.caching import BoundedCache
from chunkscope.document import Document
from chunkscope.metrics import score as metric_score
from chunkscope.report import METRICS, ChunkingResult, Report

MAX_SWEEP_POINTS = 1000
# settings that change a chunking's metrics (weights only change the score: not part of the key)
METRIC_KEYS = settings_affecting(SCORES)

Progress = Callable[[str, float, str], None]


# ------------------------------------------------------------------ cache

def canonical_params(params: Mapping[str, Any]) -> str:
    """Parameters as canonical JSON (sorted keys): part of the cache key."""
    return json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)


def metric_key(settings: Settings) -> str:
    """What a chunking's metrics depend on besides the chunking (``METRIC_KEYS`` and the provenance)."""
    from chunkscope.provenance import provenance_key

    return json.dumps([getattr(settings, k) for k in METRIC_KEYS] + [provenance_key(settings)], default=str)


class TuneCache:
    """Scored chunkings and coreference pairs, in memory, least recently used evicted first."""

    def __init__(self, max_entries: int = 256):
        self.max_entries = max_entries
        self._results: OrderedDict[tuple, ChunkingResult] = OrderedDict()
        self._pairs: BoundedCache[tuple, tuple] = BoundedCache(8)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0  # = chunkings actually run and scored

    def get(self, key: tuple) -> ChunkingResult | None:
        """The cached result for ``key`` (most recently used now), or None."""
        with self._lock:
            r = self._results.get(key)
            if r is not None:
                self._results.move_to_end(key)
                self.hits += 1
            return r

    def put(self, key: tuple, r: ChunkingResult) -> None:
        """Cache a scored chunking (a miss); the least recently used go beyond ``max_entries``."""
        with self._lock:
            self.misses += 1
            self._results[key] = r
            while len(self._results) > self.max_entries:
                self._results.popitem(last=False)

    def seed(self, key: tuple, r: ChunkingResult) -> bool:
        """Keep a chunking scored elsewhere (the analysis) under ``key``; not a miss. False if held."""
        with self._lock:
            if key in self._results:
                return False
            self._results[key] = r
            while len(self._results) > self.max_entries:
                self._results.popitem(last=False)
            return True

    def pairs(self, doc: Document, settings: Settings) -> tuple:
        """The coreference pairs of ``doc`` under ``settings``, computed once."""
        key = (doc.fingerprint, settings.coref, settings.mentions)
        return self._pairs.get_or_compute(key, lambda: coref_pairs(doc, settings))

    def clear(self) -> None:
        """Forget every cached result and pair; reset the counters."""
        with self._lock:
            self._results.clear()
            self._pairs.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._results)


DEFAULT_CACHE = TuneCache()


# ------------------------------------------------------------------ one configuration

def resolve(chunker_id: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults + coerced params, cross-checked; ParamError (user-facing) when invalid."""
    from chunkscope.chunkers import registry

    return registry.get(chunker_id).resolve_params(dict(params or {}))


def problems(chunker_id: str, params: Mapping[str, Any] | None = None) -> list[str]:
    """Every problem with these values (types, ranges, combinations); [] when valid. For widgets."""
    from chunkscope.chunkers import registry

    try:
        spec = registry.get(chunker_id)
    except KeyError as exc:
        return [str(exc)]
    return spec.check(params).problems


def changed_params(chunker_id: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved params that differ from the chunker's defaults (what makes a variant)."""
    from chunkscope.chunkers import registry

    spec = registry.get(chunker_id)
    resolved = spec.resolve_params(dict(params))
    return {p.name: resolved[p.name] for p in spec.params if resolved[p.name] != p.default}


def same_configuration(chunker_id: str, params: Mapping[str, Any],
                       others: Iterable[tuple[str, str, Mapping[str, Any]]]) -> str | None:
    """The name of the first of ``others`` (name, chunker id, params) that chunks exactly as
    ``chunker_id`` with ``params`` does: the same chunker and the same resolved parameters,
    defaults included (``recursive-1100@default`` is ``recursive-1100``). None when none does."""
    from chunkscope.chunkers.base import ParamError

    try:
        mine = canonical_params(resolve(chunker_id, params))
    except (ParamError, KeyError):
        return None
    for name, cid, ps in others:
        if cid != chunker_id:
            continue
        try:
            if canonical_params(resolve(cid, ps)) == mine:
                return name
        except (ParamError, KeyError):
            continue
    return None


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "|".join(map(str, v)) if len(v) <= 3 else f"{len(v)}seps"
    return str(v)


def variant_name(chunker_id: str, params: Mapping[str, Any]) -> str:
    """``recursive-1100@chunk_size=800`` (the defaults: ``recursive-1100@default``)."""
    diff = changed_params(chunker_id, params)
    if not diff:
        return f"{chunker_id}@default"
    return f"{chunker_id}@" + ",".join(f"{k}={_fmt_value(v)}" for k, v in diff.items())


def _llm_key(chunker_id: str, resources: Any) -> str:
    """The LLM endpoint a chunking depends on ("" for chunkers that use none): a changed
    endpoint, model or key must not return the result cached under the previous one, and a
    failure to read the settings gives a key equal to no other (never one that ignores the LLM)."""
    from chunkscope.chunkers import registry
    from chunkscope.llm import LLMSettings, cache_identity_of

    try:
        family = registry.get(chunker_id).family
    except KeyError:  # unknown chunker: chunk_one reports it; key it on the id alone
        return ""
    if family != "llm":
        return ""
    get = resources.llm_settings if resources is not None else LLMSettings.from_env
    return json.dumps(cache_identity_of(get), sort_keys=True, default=str)


def score_chunking(doc: Document, chunker_id: str, params: Mapping[str, Any] | None, settings: Settings,
                   resources: ResourcesProtocol | None = None, *, name: str | None = None,
                   cache: TuneCache | None = None) -> ChunkingResult:
    """One chunker with ``params`` on ``doc``, chunked and scored exactly as ``analyze()`` does.

    Returns a fresh ChunkingResult (safe to mutate) with ``score`` under ``settings.weights``.
    ``name``: report it under this id (a named variant, label says base + params). A bad
    parameter gives a ``failed`` result with the user-facing reason (never an exception).
    """
    from chunkscope.chunkers.base import ParamError

    cache = DEFAULT_CACHE if cache is None else cache
    params = dict(params or {})
    cid = name or chunker_id
    candidate = cid in settings.candidates
    try:
        resolved = resolve(chunker_id, params)
    except (ParamError, KeyError):
        return chunk_one(doc, cid, chunker_id, params, resources, candidate=candidate)
    key = _key(doc, chunker_id, resolved, settings, resources)
    hit = cache.get(key)
    if hit is None:
        if resources is None:
            resources = Resources(settings.embedder, settings.embedding_mode, backend=settings.embedding_backend)
        cr = chunk_one(doc, chunker_id, chunker_id, resolved, resources)
        if cr.ok:
            pairs, rc_reason, _ = cache.pairs(doc, settings)
            embed, _, emb_error = span_embedding(doc, resources)
            fill_metrics(doc, cr, settings, pairs, rc_reason, embed, emb_error)
        cache.put(key, cr)
        hit = cr
    out = copy.deepcopy(hit)
    out.candidate = candidate
    if name and name != chunker_id:
        from chunkscope.chunkers import registry

        out.id = name
        out.label = variant_label(registry.get(chunker_id).label, chunker_id, resolved,
                                  changed_params(chunker_id, resolved))
        out.info["variant_of"] = chunker_id
    out.score = metric_score(out.metrics, settings.weights) if out.ok else None
    return out


def _key(doc: Document, chunker_id: str, resolved: Mapping[str, Any], settings: Settings, resources: Any) -> tuple:
    return (doc.fingerprint, chunker_id, canonical_params(resolved), metric_key(settings),
            _llm_key(chunker_id, resources))


def seed_from_report(doc: Document, report: Report, settings: Settings, resources: ResourcesProtocol | None = None,
                     cache: TuneCache | None = None) -> int:
    """Put the chunkings ``report`` already scored into the cache, so Tune does not chunk and score
    them again (the same chunker and resolved params under the same metric settings). ``settings``
    must be the report's (``metric_key`` must match what scored them). Returns how many were added."""
    from chunkscope.chunkers import registry
    from chunkscope.chunkers.base import ParamError

    cache = DEFAULT_CACHE if cache is None else cache
    try:
        scored_with = Settings.of_report(report.settings)
    except (ValueError, TypeError):
        return 0
    if metric_key(settings) != metric_key(scored_with):
        return 0
    added = 0
    for c in report.chunkings:
        if not c.ok:
            continue
        base = str(c.info.get("variant_of") or c.id)
        try:
            spec = registry.get(base)
            resolved = spec.resolve_params(dict(c.params))
        except (KeyError, ParamError):
            continue
        r = copy.deepcopy(c)
        r.id, r.label, r.candidate, r.score = base, spec.label, False, None
        r.info.pop("variant_of", None)
        added += cache.seed(_key(doc, base, resolved, settings, resources), r)
    return added


def index_cost(c: ChunkingResult) -> int:
    """Total tokens embedded to index this chunking (overlapping text counted each time)."""
    return sum(ch.tokens for ch in c.chunks)


def row_of(value: Any, c: ChunkingResult) -> dict[str, Any]:
    """A sweep row of one value's chunking: chunks, tokens embedded, metrics, score (or its error)."""
    row: dict[str, Any] = {
        "value": value,
        "chunks": len(c.chunks) if c.ok else None,
        "tokens": index_cost(c) if c.ok else None,
        "metrics": {m: c.metrics.get(m) for m in METRICS},
        "score": c.score,
    }
    if not c.ok:
        row["error"] = c.reason or c.status
    return row


# ------------------------------------------------------------------ sweeps

def parse_range(text: str) -> list[int | float]:
    """``START:STOP:STEP`` (inclusive of STOP when it falls on a step), ``a,b,c`` or one value.

    Integers stay integers; floats are rounded to 10 decimals so 0.1 steps do not drift.
    """
    t = str(text).strip()
    if not t:
        raise ValueError("empty range: expected START:STOP:STEP, e.g. 200:1500:100")

    def num(s: str) -> int | float:
        s = s.strip()
        try:
            return int(s)
        except ValueError:
            try:
                v = float(s)
            except ValueError:
                raise ValueError(f"range: {s!r} is not a number (expected START:STOP:STEP)") from None
            if not math.isfinite(v):
                raise ValueError(f"range: {s!r} is not a finite number") from None
            return v

    if ":" in t:
        parts = t.split(":")
        if len(parts) != 3:
            raise ValueError(f"range {t!r}: expected START:STOP:STEP, e.g. 200:1500:100")
        start, stop, step = (num(p) for p in parts)
        if step <= 0:
            raise ValueError(f"range {t!r}: STEP must be > 0")
        if stop < start:
            raise ValueError(f"range {t!r}: STOP ({stop}) is below START ({start})")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        if n > MAX_SWEEP_POINTS:
            raise ValueError(f"range {t!r}: {n} points (at most {MAX_SWEEP_POINTS}); use a larger STEP")
        if all(isinstance(x, int) for x in (start, stop, step)):
            return [start + i * step for i in range(n)]
        return [round(start + i * step, 10) for i in range(n)]
    vals = [num(p) for p in t.split(",") if p.strip()]
    if len(vals) > MAX_SWEEP_POINTS:
        raise ValueError(f"at most {MAX_SWEEP_POINTS} values")
    return vals


def iter_sweep(doc: Document, chunker_id: str, param: str, values: Sequence[Any], settings: Settings,
               resources: ResourcesProtocol | None = None, base_params: Mapping[str, Any] | None = None,
               cache: TuneCache | None = None) -> Iterator[tuple[dict[str, Any], ChunkingResult]]:
    """(row, result) for each value of ``param`` (other params: ``base_params``), in order."""
    from chunkscope.chunkers import registry

    spec = registry.get(chunker_id)
    names = {p.name: p for p in spec.params}
    if param not in names:
        raise ValueError(f"{chunker_id} has no parameter {param!r} (parameters: {', '.join(names) or 'none'})")
    if resources is None:
        resources = Resources(settings.embedder, settings.embedding_mode, backend=settings.embedding_backend)
    for v in values:
        try:
            value = names[param].coerce(v)
        except ValueError:
            value = v
        c = score_chunking(doc, chunker_id, {**dict(base_params or {}), param: value}, settings, resources,
                           cache=cache)
        yield row_of(value, c), c


def sweep(doc: Document, chunker_id: str, param: str, values: Sequence[Any], settings: Settings,
          resources: ResourcesProtocol | None = None, progress: Progress | None = None,
          cancel: Callable[[], bool] | None = None, base_params: Mapping[str, Any] | None = None,
          cache: TuneCache | None = None) -> list[dict[str, Any]]:
    """One row per value; ``cancel()`` returning True stops before the next value (rows so far
    are returned). ``progress("sweep", fraction, message)`` after each value."""
    rows: list[dict[str, Any]] = []
    n = len(values)
    if progress:
        progress("sweep", 0.0, f"{chunker_id}: {param} over {n} values")
    it = iter_sweep(doc, chunker_id, param, values, settings, resources, base_params, cache)
    for i in range(n):
        if cancel is not None and cancel():
            break
        row, _ = next(it)
        rows.append(row)
        if progress:
            progress("sweep", (i + 1) / n, f"{param}={row['value']}: score "
                     + ("-" if row["score"] is None else f"{row['score']:.3f}"))
    return rows


def gain_stops(rows: Sequence[Mapping[str, Any]], tol: float = 0.005) -> Mapping[str, Any] | None:
    """The first row whose score is within ``tol`` of the sweep's best: beyond it the score
    stops gaining (more of the parameter buys less than ``tol``)."""
    scored = [r for r in rows if r.get("score") is not None]
    if not scored:
        return None
    best = max(r["score"] for r in scored)
    return next(r for r in scored if r["score"] >= best - tol)


def sweep_summary(rows: Sequence[Mapping[str, Any]], param: str, complete: bool = True,
                  tol: float = 0.005) -> str | None:
    """The one conclusion drawn from a sweep (Tune page and ``chunkscope sweep``); None without a score.

    A complete sweep: the best score and the value from which it stops gaining (``gain_stops``).
    A stopped one (cancelled, interrupted) cannot say where the score stops gaining: only the best
    among the values reached, and whether the score was still rising at the last of them."""
    scored = [r for r in rows if r.get("score") is not None]
    if not scored:
        return None
    best = max(scored, key=lambda r: r["score"])
    if complete:
        stop = gain_stops(rows, tol)
        assert stop is not None
        return (f"Best score {best['score']:.3f} at {param}={best['value']}; the score stops gaining "
                f"(within {tol:g} of the best) from {param}={stop['value']}.")
    reached = "the only value reached" if len(rows) == 1 else f"the {len(rows)} values reached"
    text = f"Best score so far {best['score']:.3f} at {param}={best['value']}, among {reached}; "
    if len(scored) >= 2 and scored[-1]["score"] > scored[-2]["score"]:
        return text + (f"the score was still rising at the last one ({param}={scored[-1]['value']}), so where it "
                       "stops gaining is not known: run the whole sweep.")
    return text + "where the score stops gaining is only known from the whole sweep."


def pareto_front(points: Sequence[Any]) -> list[int]:
    """Indices of the Pareto-optimal points (maximise score, minimise index cost), by cost.

    A point is a mapping with ``score`` and ``tokens`` (or ``cost``), or a (cost, score) pair.
    Points without a score are never optimal; equal points are all kept.
    """
    def cs(p: Any) -> tuple[float, float] | None:
        if isinstance(p, Mapping):
            cost, score = p.get("tokens", p.get("cost")), p.get("score")
        else:
            cost, score = p[0], p[1]
        if cost is None or score is None:
            return None
        return float(cost), float(score)

    vals = [cs(p) for p in points]
    order = sorted((i for i, v in enumerate(vals) if v is not None), key=lambda i: (vals[i][0], -vals[i][1]))  # type: ignore[index]
    front: list[int] = []
    best = -math.inf
    last: tuple[float, float] | None = None
    for i in order:
        c, s = vals[i]  # type: ignore[misc]  # order holds only indexes with a value
        if s > best or (last is not None and (c, s) == last):
            front.append(i)
            best = max(best, s)
            last = (c, s)
    return front


# ------------------------------------------------------------------ named variants

def add_variant(report: Report, result: ChunkingResult, candidate: bool = True) -> Report:
    """Put a named variant's result into a report (replacing one with the same id) and re-rank.

    The variant becomes a candidate unless ``candidate`` is False. Other chunkings are
    untouched, so this equals re-running analyze() with the variant added to the settings.
    """
    cands = list(report.settings.get("candidates") or [])
    if candidate and result.id not in cands:
        cands.append(result.id)
    report.chunkings = [c for c in report.chunkings if c.id != result.id] + [result]
    variants = dict(report.settings.get("variants") or {})
    variants[result.id] = {"chunker": result.info.get("variant_of", result.id),
                           "params": changed_params(result.info.get("variant_of", result.id), result.params)}
    report.settings["variants"] = variants
    return rescore(report, report.settings.get("weights"), cands)


# ------------------------------------------------------------------ configuration files
# One reader/writer for settings files: chunkscope.analysis.settings (config_dict, config_text,
# parse_config); tune's ``save_config`` adds the Tune table.

def save_config(settings: Settings, path: str | Path, tune: Mapping[str, Any] | None = None) -> Path:
    """Write TOML when the path ends in ``.toml``, else JSON."""
    return settings.to_file(path, tune)
