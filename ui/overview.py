"""Overview views of a report: winner card, leaderboard, radar, sizes, runtime, exports."""

from __future__ import annotations

import html
import json

import pandas as pd
import streamlit as st

from core import viz
from core.document import Document
from core.report import METRICS, Report, chunk_records


def _shade(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    v = max(0.0, min(1.0, float(v)))
    # low = orange-red, high = green; translucent so both light and dark themes read well
    r, g, b = int(213 * (1 - v) + 0 * v), int(94 * (1 - v) + 158 * v), int(0 * (1 - v) + 115 * v)
    return f"background-color: rgba({r},{g},{b},0.28)"


def winner_card(report: Report) -> None:
    if report.winner is None:
        st.warning(report.explanation)
        return
    best = report.get(report.winner)
    ranked = report.ranked
    cands = [c for c in ranked if c.candidate]
    runner = cands[1] if len(cands) > 1 else None
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns([2.2, 1, 1, 1])
        c1.markdown(f"### 🏆 {html.escape(best.id)}")
        c1.caption(best.label)
        c2.metric("score", f"{best.score:.3f}",
                  delta=f"{best.score - runner.score:+.3f} vs {runner.id}" if runner else None)
        c3.metric("chunks", len(best.chunks))
        st_ = best.token_stats()
        c4.metric("mean tokens", f"{st_['mean']:.0f}", help=f"min {st_['min']}, max {st_['max']}")
        st.write(report.explanation)
        for f in report.flags:
            if f in ("single-chunk", "metrics-missing", "tie", "single-candidate"):
                st.warning({"single-chunk": "Degenerate win: the winner is one chunk.",
                            "metrics-missing": "The winner's score averages fewer than five metrics.",
                            "tie": "Tie on score: decided by fewer chunks, then id.",
                            "single-candidate": "Only one candidate produced a score."}[f])


def leaderboard(report: Report) -> None:
    rows = viz.leaderboard_rows(report)
    df = pd.DataFrame(rows)
    df.insert(0, "", ["🏆" if w else ("◆" if c else "") for w, c in zip(df["winner"], df["candidate"])])
    df = df.drop(columns=["winner"])
    styled = df.style.map(_shade, subset=[*METRICS, "score"]).format(
        {m: (lambda v: "–" if v is None or v != v else f"{v:.3f}") for m in (*METRICS, "score")})
    st.dataframe(styled, hide_index=True, width="stretch",
                 column_config={"candidate": st.column_config.CheckboxColumn("candidate"),
                                "note": st.column_config.TextColumn("note", width="medium")})
    st.caption("🏆 adaptive winner · ◆ candidate · click a column header to sort · "
               "metric cells shaded from red (0) to green (1)")


def charts(report: Report) -> None:
    ok_ids = [c.id for c in report.ranked]
    if not ok_ids:
        st.info("No chunking produced spans, so there is nothing to chart.")
        return
    default = ([report.winner] if report.winner else []) + [i for i in ok_ids if i != report.winner][:1]
    sel = st.multiselect("Chunkings on the radar", ok_ids, default=default, key="cs_radar_sel")
    left, right = st.columns(2)
    with left:
        st.plotly_chart(viz.radar_figure(report, sel or default), width="stretch", key="cs_radar")
    with right:
        st.plotly_chart(viz.size_figure(report, ok_ids), width="stretch", key="cs_sizes")
    st.plotly_chart(viz.runtime_figure(report, [c.id for c in report.chunkings]), width="stretch", key="cs_runtime")


@st.cache_data(show_spinner="Building the HTML report…", max_entries=8)
def _html(key: str, _report: Report) -> str:
    return viz.html_report(_report)


def exports(report: Report, doc: Document) -> None:
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in doc.name)[:80] or "document"
    c1, c2, c3 = st.columns(3)
    c1.download_button("Report (JSON)", data=report.to_json(), file_name=f"{stem}.chunkscope.json",
                       mime="application/json", key="cs_dl_json")
    if report.winner:
        recs = chunk_records(report, doc.text, heading_path=doc.heading_path, page_of=doc.page_of)
        jsonl = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
        c2.download_button(f"Winning chunks (JSONL, {len(recs)})", data=jsonl,
                           file_name=f"{stem}.{report.winner}.jsonl", mime="application/jsonl", key="cs_dl_jsonl")
    else:
        c2.button("Winning chunks (JSONL)", disabled=True, help="no winner", key="cs_dl_jsonl_off")
    key = json.dumps([doc.sha256, report.settings.get("weights"), report.settings.get("candidates"),
                      report.timings.get("total")], sort_keys=True, default=str)
    c3.download_button("HTML report (offline)", data=lambda: _html(key, report), file_name=f"{stem}.report.html",
                       mime="text/html", key="cs_dl_html")
