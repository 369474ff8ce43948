"""Tune: one chunker's parameters live against a pinned baseline, sweeps, the quality–cost
frontier with promotion to named candidates, semantic thresholds, save/load configurations."""

from __future__ import annotations

import bisect
import copy
import time
from typing import Any

import pandas as pd
import streamlit as st

from chunkscope import tune
from chunkscope.analysis import Settings
from chunkscope.analysis.resources import ResourcesProtocol
from chunkscope.analysis.selection import missing_metrics
from chunkscope.analysis.settings import config_text
from chunkscope.analysis.wording import fewer_metrics_warning
from chunkscope.chunkers import registry
from chunkscope.chunkers.base import ChunkerSpec
from chunkscope.document import Document
from chunkscope.present import figures, highlight, paging
from chunkscope.report import METRICS, ChunkingResult, Report
from ui import keys
from ui import tune as T
from ui.analysis import VARIANTS_KEY, keep_state, session_resources
from ui.common import MISSING, file_stem, md_escape
from ui.page import require_report

st.set_page_config(page_title="Tune · ChunkScope", page_icon="🎛️", layout="wide")

BASELINE = "cs_tune_baseline"


def pick_chunker(report: Report) -> tuple[str, str | None]:
    """The chunker to tune and the pinned baseline's id (None when no chunking ran), as the two selectboxes say."""
    ok_ids = [c.id for c in report.ranked]
    chunker_ids = registry.ids()
    kept = st.session_state.setdefault(keys.TUNE_SAVED, {})
    for k in (keys.TUNE_CHUNKER, BASELINE):  # widgets forget their value while other pages run
        if k not in st.session_state and k in kept:
            st.session_state[k] = kept[k]
    if keys.TUNE_CHUNKER not in st.session_state or st.session_state[keys.TUNE_CHUNKER] not in chunker_ids:
        w = report.get(report.winner) if report.winner else None
        base = (w.info.get("variant_of", w.id) if w else None) or "recursive-1100"
        st.session_state[keys.TUNE_CHUNKER] = base if base in chunker_ids else chunker_ids[0]
    pref = st.session_state.pop(keys.TUNE_BASELINE_PREF, None)
    if pref in ok_ids:
        st.session_state[BASELINE] = pref
    if st.session_state.get(BASELINE) not in ok_ids and ok_ids:
        st.session_state[BASELINE] = report.winner if report.winner in ok_ids else ok_ids[0]
    c1, c2 = st.columns([1.3, 1])
    cid = c1.selectbox("Chunker", chunker_ids, key=keys.TUNE_CHUNKER,
                       format_func=lambda i: f"{i} — {registry.get(i).label}")
    baseline_id = c2.selectbox("Pinned baseline", ok_ids, key=BASELINE,
                               help="default: the adaptive winner of the current analysis") if ok_ids else None
    kept[keys.TUNE_CHUNKER], kept[BASELINE] = cid, baseline_id
    return cid, baseline_id


def parameters(spec: ChunkerSpec) -> tuple[dict[str, Any], list[str]]:
    """The parameter widgets' values and what is wrong with them (each shown as an error)."""
    with st.container(border=True):
        st.markdown("**Parameters** (from the chunker's declarations; ranges enforced)")
        values = T.param_widgets(spec) if spec.params else {}
        if not spec.params:
            st.caption("This chunker has no parameters.")
    problems = tune.problems(spec.id, values)
    for p in problems:
        st.error(f"Invalid: {p}")
    return values, problems


def score_current(doc: Document, cid: str, values: dict[str, Any], settings: Settings,
                  res: ResourcesProtocol) -> tuple[ChunkingResult | None, float]:
    """The tuned configuration's chunking, scored (None after an error line when it failed), and the seconds taken."""
    t0 = time.perf_counter()
    with st.spinner("Re-chunking…"):
        current = tune.score_chunking(doc, cid, values, settings, res)
    dt = time.perf_counter() - t0
    if not current.ok:
        st.error(f"{cid}: {current.status}: {current.reason}")
        return None, dt
    T.record(doc, settings, current, cid, "tuned")
    return current, dt


def metric_tiles(current: ChunkingResult, baseline: ChunkingResult | None) -> None:
    """The five metrics, the score, chunks and tokens, each with its delta against the baseline."""
    cols = st.columns(8)
    for col, m in zip(cols, (*METRICS, "score")):
        v = current.score if m == "score" else current.metrics.get(m)
        b = None if baseline is None else (baseline.score if m == "score" else baseline.metrics.get(m))
        same = v is not None and b is not None and round(v - b, 3) == 0
        col.metric(m, "–" if v is None else f"{v:.3f}",
                   delta=None if v is None or b is None else ("±0.000" if same else f"{v - b:+.3f}"),
                   delta_color="off" if same else "normal", delta_arrow="off" if same else "auto",
                   help=current.metric_reasons.get(m) if v is None else None)
    cols[6].metric("chunks", len(current.chunks),
                   delta=None if baseline is None else f"{len(current.chunks) - len(baseline.chunks):+,}",
                   delta_color="off", delta_arrow="off")  # "+83" like the tokens' delta: a count, no arrow
    cols[7].metric("tokens", f"{tune.index_cost(current):,}",  # "tokens embedded" did not fit an eighth
                   delta=None if baseline is None else f"{tune.index_cost(current) - tune.index_cost(baseline):+,}",
                   delta_color="off", delta_arrow="off",
                   help="tokens embedded, the index cost: total tokens of all chunks (overlap counts twice)")


def missing_metrics_warning(current: ChunkingResult, baseline: ChunkingResult | None, settings: Settings) -> None:
    """The Overview's warning about metrics not computed, plus what it means for the deltas."""
    miss = missing_metrics(current, settings.weights)
    bmiss = missing_metrics(baseline, settings.weights) if baseline is not None else miss
    if not miss and bmiss == miss:
        return
    why = "; ".join(f"{m}: {current.metric_reasons.get(m) or 'not computed'}" for m in miss)
    text = fewer_metrics_warning("This configuration's", miss) + f" {why}." if miss else ""
    if bmiss != miss and baseline is not None:
        text += (f" The baseline {baseline.id} " + (f"is missing {', '.join(bmiss)}" if bmiss else "has all five")
                 + ", so the score delta compares means over different metrics.")
    st.warning(md_escape(text.strip()))


def charts(doc: Document, report: Report, spec: ChunkerSpec, current: ChunkingResult,
           pair: list[ChunkingResult]) -> None:
    """The radar of the tuned chunking and the baseline, their boundary strips, the semantic curve."""
    left, right = st.columns([1, 1.4])
    with left:
        st.plotly_chart(figures.radar_results_figure(pair), width="stretch", key="cs_tune_radar")
    with right:
        mini = Report(document=report.document, settings=report.settings, chunkings=pair, winner=None,
                      explanation="", timings={})
        st.plotly_chart(figures.boundary_strip_figure(mini, [x.id for x in pair], len(doc.text)), width="stretch",
                        key="cs_tune_strip")
        if spec.family == "semantic" and current.info.get("distances"):
            st.plotly_chart(figures.semantic_curve_figure(current.info, len(doc.text)), width="stretch",
                            key="cs_tune_semantic")
            st.caption("Each point is a candidate cut between neighbouring sentences; a cut is made where the "
                       "compared value rises above the threshold. Change threshold_type / threshold_amount "
                       "above to re-cut.")


def boundaries(doc: Document, cid: str, current: ChunkingResult, baseline: ChunkingResult | None) -> None:
    """The tuned chunks highlighted in the text, one page or part at a time (opened where it differs most)."""
    views = paging.windows(len(doc.text), [[p.start, p.end] for p in doc.pages], cuts=[c.start for c in current.chunks])
    labels = [f"page {i + 1}" if doc.pages else f"part {i + 1} (chars {a:,}–{b:,})" for i, (a, b) in enumerate(views)]
    differ = [0] * len(views)  # boundaries that differ from the baseline's, per view
    if baseline is not None:
        mine, theirs = {x.start for x in current.chunks}, {x.start for x in baseline.chunks}
        starts = [a for a, _ in views]
        for pos in mine ^ theirs:
            differ[max(0, bisect.bisect_right(starts, pos) - 1)] += 1
        labels = [lab + (f"  ({n} boundar{'y' if n == 1 else 'ies'} differ)" if n else "") for lab, n in zip(labels, differ)]
    shown_for = (cid, repr(current.params), baseline.id if baseline is not None else None)
    if st.session_state.get("cs_tune_view_for") != shown_for:  # another configuration: open where it differs most
        st.session_state["cs_tune_view_for"] = shown_for
        st.session_state["cs_tune_view"] = max(range(len(views)), key=lambda i: (differ[i], -i)) if any(differ) else 0
    st.session_state["cs_tune_view"] = min(st.session_state.get("cs_tune_view", 0), len(views) - 1)
    view = st.selectbox("Chunk boundaries in", range(len(views)), format_func=lambda i: labels[i], key="cs_tune_view")
    a, b = views[view]
    with st.container(height=420):
        st.html(highlight.highlight_html(doc.text, current, a, b))


def live(doc: Document, report: Report, spec: ChunkerSpec, current: ChunkingResult, dt: float,
         values: dict[str, Any], settings: Settings, baseline: ChunkingResult | None) -> None:
    """The tuned chunking against the baseline: tiles, warnings, charts, boundaries in the text."""
    name = tune.variant_name(spec.id, values)
    shown = copy.copy(current)
    shown.id = name if baseline is None or name != baseline.id else f"{name} (tuned)"
    metric_tiles(current, baseline)
    st.caption(f"**{shown.id}** · {dt * 1000:.0f} ms (cached configurations are instant)"
               + (f" · deltas against **{baseline.id}**" if baseline is not None else ""))
    missing_metrics_warning(current, baseline, settings)
    charts(doc, report, spec, current, [x for x in (shown, baseline) if x is not None])
    boundaries(doc, spec.id, current, baseline)


def run_sweep(doc: Document, cid: str, pname: str, vals: list[Any], values: dict[str, Any], settings: Settings,
              res: ResourcesProtocol) -> None:
    """Sweep ``pname`` over ``vals`` (the other parameters fixed) into the session's sweep, with a progress bar."""
    fixed = {k: v for k, v in values.items() if k != pname}
    rows: list[dict] = []
    st.session_state[keys.TUNE_SWEEP] = {"doc": doc.sha256, "chunker": cid, "param": pname, "rows": rows,
                                 "n": len(vals), "done": False, "fixed": fixed}
    bar = st.progress(0.0, text=f"sweeping {pname} over {len(vals)} values")
    for i, (row, c) in enumerate(tune.iter_sweep(doc, cid, pname, vals, settings, res, fixed)):
        rows.append(row)
        T.record(doc, settings, c, cid, "sweep")
        bar.progress((i + 1) / len(vals), text=f"{pname}={row['value']} ({i + 1}/{len(vals)})")
        if st.session_state.get(keys.TUNE_CANCEL):
            break
    st.session_state[keys.TUNE_SWEEP]["done"] = len(rows) == len(vals)
    bar.empty()


def sweep_results(doc: Document) -> None:
    """The last sweep of this document: the quality–cost chart, its summary and its table."""
    sw = st.session_state.get(keys.TUNE_SWEEP)
    if not (sw and sw["doc"] == doc.sha256 and sw["rows"]):
        return
    rows = sw["rows"]
    if not sw.get("done"):
        st.warning(f"Sweep stopped after {len(rows)} of {sw['n']} values (cancelled).")
    second = st.radio("Second axis", ["tokens", "chunks"], horizontal=True, key="cs_tune_sw_axis",
                      format_func=lambda x: "total tokens embedded" if x == "tokens" else "chunks")
    st.plotly_chart(figures.sweep_cost_figure(rows, f"{sw['chunker']} {sw['param']}", second), width="stretch",
                    key="cs_tune_sweep_fig")
    summary = tune.sweep_summary(rows, sw["param"], complete=bool(sw.get("done")))
    if summary:
        st.info(summary)
    table = pd.DataFrame([{sw["param"]: r["value"], "chunks": r["chunks"], "tokens": r["tokens"],
                           **{m: r["metrics"].get(m) for m in METRICS}, "score": r["score"],
                           "note": r.get("error", "")} for r in rows])
    st.dataframe(table, hide_index=True, width="stretch", **MISSING)  # RC not computed: "–", as on the tiles


def sweep(doc: Document, spec: ChunkerSpec, values: dict[str, Any], problems: list[str], settings: Settings,
          res: ResourcesProtocol) -> None:
    """The Sweep section: a numeric parameter's range, Run / Cancel, then the results."""
    st.subheader("Sweep")
    cid = spec.id
    numeric = [p for p in spec.params if p.type in (int, float) and not p.choices]
    if not numeric:
        st.caption("This chunker has no numeric parameter to sweep.")
        return
    s1, s2, s3, s4 = st.columns([1.4, 1, 1, 1])
    pname = s1.selectbox("Parameter", [p.name for p in numeric], key=f"cs_tune_sw_param_{cid}")
    param = next(x for x in numeric if x.name == pname)
    d0, d1, d2 = T.sweep_defaults(param)
    cast = param.type
    start = s2.number_input("start", value=cast(d0), key=f"cs_tune_sw_start_{cid}_{pname}")
    stop = s3.number_input("stop", value=cast(d1), key=f"cs_tune_sw_stop_{cid}_{pname}")
    step = s4.number_input("step", value=cast(d2), min_value=cast(1) if cast is int else 1e-6,
                           key=f"cs_tune_sw_step_{cid}_{pname}")
    b1, b2, _ = st.columns([1, 1, 3])
    run = b1.button("Run sweep", type="primary", key="cs_tune_sweep_run", disabled=bool(problems))
    b2.button("Cancel", key="cs_tune_sweep_cancel", on_click=lambda: st.session_state.__setitem__(keys.TUNE_CANCEL, True))
    if problems:
        st.caption("Fix the parameters above first: the other parameters stay fixed during the sweep.")
    if run:
        st.session_state[keys.TUNE_CANCEL] = False
        try:
            vals = tune.parse_range(f"{start}:{stop}:{step}")
        except ValueError as exc:
            st.error(str(exc))
            vals = []
        if vals:
            run_sweep(doc, cid, pname, vals, values, settings, res)
    sweep_results(doc)


def frontier(doc: Document, settings: Settings, report: Report, cur_name: str | None) -> None:
    """The Quality–cost frontier of every configuration of the session, and the promotion of a point."""
    st.subheader("Quality–cost frontier")
    points = T.frontier_points(doc, settings, report)
    front = tune.pareto_front(points)
    st.session_state[keys.TUNE_FRONTIER_NOW] = points
    st.plotly_chart(figures.frontier_figure(points, front, highlight=cur_name), width="stretch",
                    key="cs_tune_frontier")
    st.caption("Every configuration of this session for this document (analysis ● · tuned ◆ · sweep ■ · "
               "promoted ★). Ringed points (◎ in the list below) are Pareto-optimal: nothing else scores higher for "
               "fewer tokens embedded.")
    if not points:
        return
    order = sorted(range(len(points)), key=lambda i: (i not in front, -(points[i]["score"] or 0)))
    now = next((i for i in order if points[i]["name"] == cur_name), None)
    if st.session_state.get("cs_tune_promote_for") != cur_name:  # another configuration: the box follows it
        st.session_state["cs_tune_promote_for"] = cur_name
        if now is not None:
            st.session_state[keys.TUNE_PROMOTE_PICK] = now
    if st.session_state.get(keys.TUNE_PROMOTE_PICK) not in order:
        st.session_state[keys.TUNE_PROMOTE_PICK] = order[0] if now is None else now
    p1, p2, p3 = st.columns([2.2, 1.6, 1])
    p1.selectbox("Point", order, key=keys.TUNE_PROMOTE_PICK,
                 format_func=lambda i: f"{'◎ ' if i in front else ''}{points[i]['name']} · score "
                                       f"{points[i]['score']:.3f} · {points[i]['tokens']:,} tokens")
    p2.text_input("Name (blank: the configuration's name)", key=keys.TUNE_PROMOTE_NAME,
                  placeholder=points[st.session_state[keys.TUNE_PROMOTE_PICK]]["name"])
    p3.button("Promote to candidate", key="cs_tune_promote", on_click=T.promote, args=(doc, settings, report),
              type="primary")


def named_candidates() -> None:
    """The variants promoted so far, each with a Remove button."""
    variants = st.session_state.get(VARIANTS_KEY, {})
    if not variants:
        return
    st.markdown("**Named candidates** (run by Analyze under their name; shown on the leaderboard and in Compare)")
    for vname, v in variants.items():
        v1, v2 = st.columns([5, 1])
        changed = ", ".join(f"{k} = {val}" for k, val in (v.get("params") or {}).items()) or "its defaults"
        v1.markdown(f"- `{vname}` = `{v['chunker']}` with {md_escape(changed)}")
        v2.button("Remove", key=f"cs_tune_rm_{vname}", on_click=T.remove_variant, args=(vname,))


def save_and_load(doc: Document, settings: Settings, cid: str, values: dict[str, Any], problems: list[str],
                  baseline_id: str | None) -> None:
    """Save and reproduce: the configuration as TOML / JSON with the command that reproduces it; loading one."""
    st.subheader("Save and reproduce")
    base_settings = T.sidebar_settings() or settings
    if problems:
        st.caption("Fix the parameters to save this configuration.")
    else:
        to_save = T.save_settings(base_settings, cid, values)
        meta = {"chunker": cid, "baseline": baseline_id}
        toml_text = config_text(to_save, "toml", meta)
        stem = file_stem(doc) + ".tune"  # not the Overview's "<stem>.chunkscope.json" report: a download replaced it
        b1, b2, _ = st.columns([1, 1, 2])
        b1.download_button("Save configuration (TOML)", toml_text, file_name=f"{stem}.toml",
                           mime="application/toml", key="cs_tune_save_toml")
        b2.download_button("Save configuration (JSON)", config_text(to_save, "json", meta),
                           file_name=f"{stem}.json", mime="application/json", key="cs_tune_save_json")
        with st.expander("Configuration file"):
            st.code(toml_text, language="toml")
            source = str(doc.meta.get("filename") or doc.name).replace("`", "")  # the file, with its extension
            lang = f" --language {doc.language}" if "language_detected" in doc.meta else ""  # set by hand
            st.caption(f"Reproduce: `chunkscope analyze {source} --config {stem}.toml{lang}` gives the same "
                       "chunks and numbers (the tuned chunker under its id, promoted candidates under their names).")
    st.file_uploader("Load configuration (TOML or JSON)", type=["toml", "json"], key=keys.TUNE_LOAD,
                     on_change=T.apply_config)


def main() -> None:
    keep_state()
    st.title("Tune a chunker")
    st.caption("Edit one chunker's parameters and see its chunks and five metrics against a pinned baseline; "
               "sweep a parameter; compare every configuration on the quality–cost frontier and promote the ones "
               "you like to named candidates.")
    doc, report = require_report()
    settings = T.report_settings(report)
    res = session_resources(settings.embedder, settings.embedding_mode)
    tune.seed_from_report(doc, report, settings, res)  # what the analysis scored is not scored again
    T.show_message()
    cid, baseline_id = pick_chunker(report)
    spec = registry.get(cid)
    st.caption(spec.description)
    values, problems = parameters(spec)  # parameters -> live chunking
    current = None
    baseline = report.get(baseline_id) if baseline_id else None
    if not problems:
        current, dt = score_current(doc, cid, values, settings, res)
        if current is not None:
            live(doc, report, spec, current, dt, values, settings, baseline)
    sweep(doc, spec, values, problems, settings, res)
    frontier(doc, settings, report, tune.variant_name(cid, values) if current is not None else None)
    named_candidates()
    save_and_load(doc, settings, cid, values, problems, baseline_id)


main()
