"""Streamlit helpers of the Tune page: parameter widgets generated from ParamSpecs, the session's
tried configurations (frontier points), promotion of a point to a named candidate, config load.

Computation lives in ``chunkscope.tune``; this module only keeps widget and session state.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import streamlit as st

from chunkscope import tune
from chunkscope.analysis import Settings
from chunkscope.analysis.settings import parse_config
from chunkscope.chunkers.base import ChunkerSpec, ParamSpec
from chunkscope.document import Document
from chunkscope.metrics import score as metric_score
from chunkscope.report import ChunkingResult, Report
from ui import keys
from ui.analysis import (
    SETTINGS_KEY,
    VARIANTS_KEY,
    all_chunker_ids,
    analysis_key,
    current_report,
    restore_sidebar,
    session_resources,
    store_report,
)

# ------------------------------------------------------------------ widgets from ParamSpecs

def widget_key(chunker_id: str, name: str) -> str:
    return f"cs_tune_p_{chunker_id}_{name}"


def to_widget(p: ParamSpec, v: Any) -> Any:
    """A parameter value as its widget holds it (lists as '|'-separated text, or JSON when an item has '|')."""
    if p.type is list:
        items = [str(x) for x in (v or [])]
        return json.dumps(items, ensure_ascii=False) if any("|" in x for x in items) else "|".join(items)
    if p.choices:
        return v
    if p.type is bool:
        return bool(v)
    if p.type is int:
        return int(v)
    if p.type is float:
        return float(v)
    return "" if v is None else str(v)


def _step(p: ParamSpec) -> int | float:
    if p.type is float:
        return 1.0 if (p.default or 0) >= 10 or p.default == 0 else 0.05
    d = abs(int(p.default or 0))
    return 50 if d >= 500 else (10 if d >= 50 else 1)


def restore_widgets(spec: ChunkerSpec) -> None:
    """Give this chunker's widgets their kept values (or the declared defaults) before they render."""
    saved = st.session_state.setdefault(keys.TUNE_SAVED, {})
    for p in spec.params:
        key = widget_key(spec.id, p.name)
        if key not in st.session_state:
            st.session_state[key] = saved.get(key, to_widget(p, p.default))


def param_widgets(spec: ChunkerSpec, columns: int = 3) -> dict[str, Any]:
    """One widget per declared parameter (range-limited); returns {name: widget value}."""
    restore_widgets(spec)
    saved = st.session_state.setdefault(keys.TUNE_SAVED, {})
    values: dict[str, Any] = {}
    cols = st.columns(columns)
    for i, p in enumerate(spec.params):
        key = widget_key(spec.id, p.name)
        with cols[i % columns]:
            if p.choices:
                opts = list(p.choices)
                if st.session_state.get(key) not in opts:
                    st.session_state[key] = p.default
                v = st.selectbox(p.name, opts, key=key, help=p.help)
            elif p.type is bool:
                v = st.checkbox(p.name, key=key, help=p.help)
            elif p.type in (int, float):
                cast = p.type
                lo = None if p.min is None else cast(p.min)
                hi = None if p.max is None else cast(p.max)
                cur = st.session_state.get(key)
                slider = lo is not None and hi is not None and hi - lo <= 1000
                if cur is None or (slider and not lo <= cur <= hi):
                    st.session_state[key] = cast(p.default)
                if slider:
                    v = st.slider(p.name, lo, hi, step=cast(1 if cast is int else 0.5), key=key, help=p.help)
                else:
                    # no min/max on the box: a value out of the declared range reaches the engine's check
                    # and is refused with its message (the browser clamped it silently to the bound)
                    v = st.number_input(p.name, step=cast(_step(p)), key=key,
                                        help=p.help + (f" ({p.range_text()})" if p.range_text() else ""))
            elif p.type is list:
                v = st.text_input(p.name, key=key, help=p.help + " — items separated by |, or a JSON list")
            else:
                v = st.text_input(p.name, key=key, help=p.help)
        saved[key] = v
        values[p.name] = v
    return values


def set_widgets(spec: ChunkerSpec, params: dict[str, Any]) -> None:
    """Put resolved ``params`` into this chunker's widgets (call from a callback, before they render)."""
    saved = st.session_state.setdefault(keys.TUNE_SAVED, {})
    for p in spec.params:
        if p.name in params:
            key = widget_key(spec.id, p.name)
            st.session_state[key] = saved[key] = to_widget(p, params[p.name])


def nice_step(x: float) -> float:
    if x <= 0:
        return 1
    e = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if x <= m * e * 1.5:
            return m * e
    return 10 * e


def sweep_defaults(p: ParamSpec) -> tuple[float, float, float]:
    """A sensible START, STOP, STEP for sweeping a numeric parameter (14 points around the default)."""
    lo = p.min if p.min is not None else -math.inf
    hi = p.max if p.max is not None else math.inf
    d = p.default or 0
    if p.type is float:
        if d == 0 and "threshold" in p.name:
            return 85.0, 99.0, 2.0
        start, stop, step = (0.0, 1.0, 0.1) if d == 0 else (d * 0.5, d * 1.5, nice_step(d / 10))
    elif d == 0:
        start, stop, step = 0, 200, 50
    else:
        step = max(1, int(nice_step(abs(d) / 10)))
        start = 2 * step if abs(d) >= 20 else 1
        stop = start + 13 * step
    start, stop = max(lo, start), min(hi, stop)
    if p.type is int:
        return int(start), int(stop), int(step)
    return float(start), float(stop), float(step)


# ------------------------------------------------------------------ settings, points

def report_settings(report: Report) -> Settings:
    """The settings a report was computed with (metric settings, weights, candidates, variants)."""
    return Settings.of_report(report.settings)


def sidebar_settings() -> Settings | None:
    return st.session_state.get(SETTINGS_KEY)


def record(doc: Document, settings: Settings, c: ChunkingResult, chunker_id: str, source: str) -> dict | None:
    """Remember a tried configuration for the frontier (per document and metric settings)."""
    if not c.ok:
        return None
    params = tune.changed_params(chunker_id, c.params)
    name = tune.variant_name(chunker_id, c.params)
    p = {"name": name, "chunker": chunker_id, "params": params, "tokens": tune.index_cost(c),
         "chunks": len(c.chunks), "metrics": dict(c.metrics), "source": source}
    st.session_state.setdefault(keys.TUNE_POINTS, {})[(doc.fingerprint, tune.metric_key(settings), name)] = p
    return p


def frontier_points(doc: Document, settings: Settings, report: Report) -> list[dict[str, Any]]:
    """Every configuration of the session for this document: the analysis' chunkings, then the
    tuned and swept ones (scores under the current weights)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in report.chunkings:
        if not c.ok or c.score is None:
            continue
        base = c.info.get("variant_of", c.id)
        try:
            params = tune.changed_params(base, c.params)
        except ValueError:  # ParamError, UnknownChunker: a chunker or parameter this version does not know
            params = {}
        out.append({"name": c.id, "chunker": base, "params": params, "tokens": tune.index_cost(c),
                    "chunks": len(c.chunks), "score": c.score, "metrics": dict(c.metrics),
                    "source": "variant" if c.id in (report.settings.get("variants") or {}) else "analysis"})
        seen.add(c.id)
    mk = tune.metric_key(settings)
    for (fp, key, name), p in st.session_state.get(keys.TUNE_POINTS, {}).items():
        if fp != doc.fingerprint or key != mk or name in seen:
            continue
        out.append({**p, "score": metric_score(p["metrics"], settings.weights)})
        seen.add(name)
    return out


# ------------------------------------------------------------------ promotion

def promote(doc: Document, report_settings_: Settings, report: Report | None = None) -> None:
    """Callback: the picked frontier point becomes a named variant and a candidate.

    The variant goes into the sidebar's settings (Settings.variants via session state) and, when
    the current analysis is up to date, straight into a copy of it, stored under the new
    settings' key, so the Overview leaderboard and Compare show it without re-running. A point
    that chunks exactly like a chunking of ``report`` or a named candidate is refused (it would
    only be a copy of it, tied with it on every metric).
    """
    points = st.session_state.get(keys.TUNE_FRONTIER_NOW) or []
    i = st.session_state.get(keys.TUNE_PROMOTE_PICK)
    if i is None or not 0 <= i < len(points):
        st.session_state[keys.TUNE_MSG] = ("error", "Pick a point to promote.")
        return
    p = points[i]
    name = (st.session_state.get(keys.TUNE_PROMOTE_NAME) or "").strip() or p["name"]
    from chunkscope.chunkers.registry import is_registered

    if is_registered(name):
        st.session_state[keys.TUNE_MSG] = ("error", f"“{name}” is a built-in chunker id: choose another name.")
        return
    variants = dict(st.session_state.get(VARIANTS_KEY, {}))
    existing = [(c.id, str(c.info.get("variant_of") or c.id), c.params) for c in (report.chunkings if report else [])]
    existing += [(n, v["chunker"], v.get("params") or {}) for n, v in variants.items()]
    same = tune.same_configuration(p["chunker"], p["params"], existing)
    if same is not None:
        st.session_state[keys.TUNE_MSG] = ("error", f"Not promoted: {p['name']} is the same configuration as “{same}” "
                                 f"({p['chunker']} with the same parameters, defaults included).")
        return
    variants[name] = {"chunker": p["chunker"], "params": dict(p["params"])}
    before = sidebar_settings()
    st.session_state[VARIANTS_KEY] = variants
    cands = list(st.session_state.get("cs_candidates") or [])
    if name not in cands:
        cands.append(name)
    st.session_state["cs_candidates"] = cands
    st.session_state[keys.TUNE_PROMOTE_NAME] = ""
    injected = False
    if before is not None:
        rep = current_report(doc, before)
        if rep is not None:
            res = session_resources(report_settings_.embedder, report_settings_.embedding_mode,
                                    report_settings_.embedding_backend)
            c = tune.score_chunking(doc, p["chunker"], p["params"], report_settings_, res, name=name)
            if c.ok:
                after = before.with_(variants=variants, candidates=tuple(cands))
                rep2 = copy.deepcopy(rep)
                tune.add_variant(rep2, c)
                store_report(analysis_key(doc, after), rep2)
                injected = True
    st.session_state[keys.TUNE_MSG] = ("success", f"Promoted “{name}” ({p['chunker']} {p['params'] or 'defaults'}): it is a "
                             "candidate on the leaderboard and in Compare"
                             + ("." if injected else " after the next Analyze."))


def remove_variant(name: str) -> None:
    variants = dict(st.session_state.get(VARIANTS_KEY, {}))
    variants.pop(name, None)
    st.session_state[VARIANTS_KEY] = variants
    for k in ("cs_candidates", "cs_chunkers"):
        if k in st.session_state:
            st.session_state[k] = [c for c in st.session_state[k] if c != name]


# ------------------------------------------------------------------ configuration files

def save_settings(base: Settings, chunker_id: str, values: dict[str, Any]) -> Settings:
    """The sidebar settings with this chunker's tuned params (those differing from its defaults)."""
    params = {k: dict(v) for k, v in base.params.items()}
    changed = tune.changed_params(chunker_id, values)
    if changed:
        params[chunker_id] = changed
    else:
        params.pop(chunker_id, None)
    chunkers = base.chunkers
    if chunkers is not None and chunker_id not in chunkers:
        chunkers = (*chunkers, chunker_id)
    return base.with_(params=params, chunkers=chunkers)


def apply_config() -> None:
    """Callback of the config uploader: restore the sidebar settings and the tuned chunker's widgets."""
    from chunkscope.chunkers import registry

    up = st.session_state.get(keys.TUNE_LOAD)
    if up is None:
        return
    fmt = "toml" if up.name.lower().endswith(".toml") else "json"
    try:
        s, meta = parse_config(up.getvalue().decode("utf-8"), fmt)
        cid = meta.get("chunker") or next(iter(s.params), None)
        spec = registry.get(cid) if cid else None
        resolved = spec.resolve_params(s.params.get(cid, {})) if spec and cid else {}
        for c, ps in s.params.items():
            registry.get(c).resolve_params(ps)
    except (ValueError, UnicodeDecodeError, KeyError) as exc:
        st.session_state[keys.TUNE_MSG] = ("error", f"{up.name}: {' '.join(str(exc).split())}")
        return
    ss = st.session_state
    ss[VARIANTS_KEY] = dict(s.variants)
    ss[keys.PARAMS] = {k: dict(v) for k, v in s.params.items()}
    restore_sidebar(s, all_chunker_ids())
    if spec is not None:
        ss[keys.TUNE_CHUNKER] = spec.id
        set_widgets(spec, resolved)
    if meta.get("baseline"):
        ss[keys.TUNE_BASELINE_PREF] = meta["baseline"]
    note = " (re-attach the mentions file: uploads are not saved)" if s.coref == "precomputed" else ""
    ss[keys.TUNE_MSG] = ("success", f"Loaded {up.name}: {spec.id if spec else 'settings'} and the metric settings restored; "
               f"press Analyze on the Overview page to re-run with them{note}.")


def show_message() -> None:
    msg = st.session_state.pop(keys.TUNE_MSG, None)
    if msg:
        (st.success if msg[0] == "success" else st.error)(msg[1])
