"""Overview views of a report: winner card, leaderboard, radar, sizes, runtime, exports.

Every section runs inside ``guard()``: an error becomes one line where the section was.
Document-derived text goes through ``md_escape`` (Markdown) or ``html.escape`` (HTML).
"""

from __future__ import annotations

import html
import json

import pandas as pd
import streamlit as st

from chunkscope.analysis import selection
from chunkscope.document import Document
from chunkscope.present import figures, highlight, html_report
from chunkscope.report import METRICS, Report, chunk_records
from ui.common import guard, md_escape


def _shade(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    v = max(0.0, min(1.0, float(v)))
    # low = orange-red, high = green; translucent so both light and dark themes read well
    r, g, b = int(213 * (1 - v) + 0 * v), int(94 * (1 - v) + 158 * v), int(0 * (1 - v) + 115 * v)
    return f"background-color: rgba({r},{g},{b},0.28)"


def swatch(cid: str) -> str:
    """A small square in the chunker's colour followed by its (escaped) id, as HTML."""
    return (f'<span style="display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.35em;'
            f'background:{figures.chunker_color(cid)}"></span>{html.escape(cid)}')


def _chips(items: list[dict], sign: str) -> str:
    if not items:
        return '<span style="opacity:.7">none</span>'
    color = "#009E73" if sign == "+" else "#D55E00"
    return " ".join(
        f'<span style="display:inline-block;border:1px solid {color};border-radius:10px;padding:0 8px;margin:2px;'
        f'font-size:.85rem"><b>{html.escape(x["metric"])}</b> {x["winner"]:.3f} vs {x["runner"]:.3f} '
        f'<span style="color:{color}">({x["delta"]:+.3f})</span></span>'
        for x in items)


def winner_card(report: Report) -> None:
    if report.winner is None:
        st.warning(md_escape(report.explanation))
        return
    best = report.get(report.winner)
    ws = selection.winner_summary(report)
    with st.container(border=True, key="cs_winner_card"):
        c1, c2, c3, c4 = st.columns([2.2, 1, 1, 1])
        c1.html(f'<div style="font-size:1.6rem;font-weight:700">🏆 {swatch(best.id)}</div>'
                f'<div style="opacity:.75;font-size:.9rem">{html.escape(best.label)}</div>')
        c2.metric("score", f"{best.score:.3f}",
                  delta=f"{ws['margin']:+.3f} vs {ws['runner']}" if ws["runner"] else None)
        c3.metric("chunks", len(best.chunks))
        st_ = best.token_stats()
        c4.metric("mean tokens", f"{st_['mean']:.0f}", help=f"min {st_['min']}, max {st_['max']}")
        if ws["runner"]:
            st.html(f'<div style="margin:.2rem 0"><b>Leads {html.escape(ws["runner"])} on</b> '
                    f'{_chips(ws["leads"], "+")}</div>'
                    f'<div style="margin:.2rem 0"><b>Trails it on</b> {_chips(ws["trails"], "-")}</div>')
        st.caption(md_escape(report.explanation))
        for w in ws["warnings"]:
            st.warning(md_escape(w), icon="⚠️")


def leaderboard(report: Report) -> None:
    rows = html_report.leaderboard_rows(report)
    order = report.ranked + [c for c in report.chunkings if c not in report.ranked]
    for row, c in zip(rows, order):
        row.update(highlight.problem_counts(c))
    df = pd.DataFrame(rows)
    df.insert(0, "", ["🏆" if w else ("◆" if c else "") for w, c in zip(df["winner"], df["candidate"])])
    df.insert(1, "●", "●")
    df = df.drop(columns=["winner"])
    if report.retrieval:  # the retrieval check's budgeted recall, when one was run
        from chunkscope.retrieval.run import recall_by_chunking

        rec = recall_by_chunking(report.retrieval)
        df.insert(df.columns.get_loc("score") + 1, f"recall@{report.retrieval['budget']}",
                  [rec.get(c.id) for c in order])

    def colours(row):
        return [f"color: {figures.chunker_color(row['chunking'])}" if col == "●" else "" for col in row.index]

    styled = (df.style.apply(colours, axis=1).map(_shade, subset=[*METRICS, "score"])
              .format({**{m: (lambda v: "–" if v is None or v != v else f"{v:.3f}") for m in (*METRICS, "score")},
                       "seconds": "{:.2f}"}))
    extra = [col for col in df.columns if str(col).startswith("recall@")]
    if extra:
        styled = styled.map(_shade, subset=extra).format(lambda v: "–" if v is None or v != v else f"{v:.3f}",
                                                         subset=extra)
    st.dataframe(styled, hide_index=True, width="stretch", key="cs_leaderboard",
                 column_config={"candidate": st.column_config.CheckboxColumn("candidate"),
                                "●": st.column_config.TextColumn("", width=28),
                                "note": st.column_config.TextColumn("note", width="medium")})
    st.caption("🏆 adaptive winner · ◆ candidate · ● the chunker's colour in every chart and page · click a column "
               "header to sort · metric cells shaded from red (0) to green (1) · problem counts: see Compare")


def radar_ids(report: Report) -> list[str]:
    """Default radar selection: the winner and the runner-up candidate (else the next ranked)."""
    ok_ids = [c.id for c in report.ranked]
    ws = selection.winner_summary(report)
    out = [i for i in (ws["winner"], ws["runner"]) if i]
    for i in ok_ids:
        if len(out) >= 2:
            break
        if i not in out:
            out.append(i)
    return out


def charts(report: Report) -> None:
    ok_ids = [c.id for c in report.ranked]
    if not ok_ids:
        st.info("No chunking produced spans, so there is nothing to chart.")
        return
    default = radar_ids(report)
    left, right = st.columns(2)
    with left, guard("The radar chart"):
        who = f"{report.document.get('sha256')}:{':'.join(default)}"
        if st.session_state.get("cs_radar_for") != who or any(i not in ok_ids for i in
                                                               st.session_state.get("cs_radar_sel", [])):
            st.session_state["cs_radar_for"] = who  # new document or new winner/runner-up: back to them
            st.session_state.pop("cs_radar_sel", None)
        sel = st.multiselect("Chunkings on the radar (winner and runner-up first)", ok_ids, default=default,
                             key="cs_radar_sel")
        st.plotly_chart(figures.radar_figure(report, sel or default), width="stretch", key="cs_radar")
    with right, guard("The chunk-size chart"):
        st.plotly_chart(figures.size_figure(report, ok_ids), width="stretch", key="cs_sizes")
        lo, hi = report.settings.get("min_tokens", 100), report.settings.get("max_tokens", 1100)
        st.caption(f"Every chunk is a dot; dashed lines: the size bounds {lo} and {hi} tokens (log scale).")
    with guard("The runtime chart"):
        st.plotly_chart(figures.runtime_figure(report, [c.id for c in report.chunkings]), width="stretch",
                        key="cs_runtime")
        t = report.timings
        st.caption("Whole analysis: " + " · ".join(f"{k} {t[k]:.2f} s" for k in ("chunk", "coref", "embed", "metrics",
                                                                               "total") if k in t)
                   + " (embedding and coreference are shared by all chunkings; a re-run reuses them)")


@st.cache_data(show_spinner="Building the HTML report…", max_entries=8)
def _html(key: str, _report: Report) -> str:
    return html_report.html_report(_report)


def _jsonl_text(report: Report, doc: Document) -> str:
    """The winning chunks as JSONL (built when the button is clicked, not on every rerun)."""
    recs = chunk_records(report, doc.text, heading_path=doc.heading_path, page_of=doc.page_of)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


def exports(report: Report, doc: Document) -> None:
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in doc.name)[:80] or "document"
    key = json.dumps([doc.sha256, report.winner, report.settings.get("weights"), report.settings.get("candidates"),
                      report.timings.get("total")], sort_keys=True, default=str)
    c1, c2, c3 = st.columns(3)
    with c1, guard("The JSON export"):
        c1.download_button("Report (JSON)", data=report.to_json, file_name=f"{stem}.chunkscope.json",
                           mime="application/json", key="cs_dl_json", on_click="ignore",
                           help="schema chunkscope.report/1: every chunking, its spans, metrics and diagnostics")
    with c2, guard("The JSONL export"):
        if report.winner:
            n = len(report.get(report.winner).chunks)
            c2.download_button(f"Winning chunks (JSONL, {n})", data=lambda: _jsonl_text(report, doc),
                               file_name=f"{stem}.{report.winner}.jsonl",
                               mime="application/jsonl", key="cs_dl_jsonl", on_click="ignore",
                               help="one line per chunk: id, text, start, end, tokens, pages, heading path, chunker, "
                                    "document sha256, checksum")
        else:
            c2.button("Winning chunks (JSONL)", disabled=True, help="no winner", key="cs_dl_jsonl_off")
    with c3, guard("The HTML report"):
        c3.download_button("HTML report (offline)", data=lambda: _html(key, report), file_name=f"{stem}.report.html",
                           mime="text/html", key="cs_dl_html", on_click="ignore",
                           help="self-contained: winner, leaderboard, radar, problem counts, settings")
