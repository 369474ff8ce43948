"""Overview views of a report: winner card, leaderboard, radar, sizes, runtime, exports.

Every section runs inside ``guard()``: an error becomes one line where the section was.
Document-derived text goes through ``md_escape`` (Markdown) or ``html.escape`` (HTML).
"""

from __future__ import annotations

import html
import json
from typing import Any

import pandas as pd
import streamlit as st

from chunkscope import chunk_table
from chunkscope.analysis import selection, uncertainty, wording
from chunkscope.analysis.settings import size_bounds
from chunkscope.document import Document
from chunkscope.integrations.export import pipeline_snippet, winner_settings_text
from chunkscope.present import figures, highlight, html_report
from chunkscope.report import METRIC_GUIDE, METRICS, ChunkingResult, Report, chunk_records, record_embed_text
from ui.common import MISSING, file_stem, guard, md_escape


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
    from chunkscope.analysis.wording import apart

    color = "#009E73" if sign == "+" else "#D55E00"
    return " ".join(
        f'<span style="display:inline-block;border:1px solid {color};border-radius:10px;padding:0 8px;margin:2px;'
        f'font-size:.85rem"><b>{html.escape(x["metric"])}</b> {a} vs {b} '
        f'<span style="color:{color}">({d})</span></span>'
        for x in items for a, b, d in [apart(x["winner"], x["runner"])])


def verdict_badge(v: dict | None, score_interval: list[float] | None, narrow: bool = False) -> str:
    """The verdict as one HTML line: clear winner (green) or tie with the tie-break (amber).
    ``narrow``: the score margin is small (``narrow-win``): a clear winner is then said to be
    consistently but narrowly ahead, as the narrow-win warning below it says."""
    if not v:
        return ""
    ci = (f' · score 95% interval <b>{score_interval[0]:.3f}–{score_interval[1]:.3f}</b>'
          if score_interval else "")
    n = v["resamples"]
    if v["kind"] == "clear":
        worst = min(v["rivals"], key=lambda r: r["ahead"])
        color, head = "#009E73", "✅ Clear winner, by a narrow margin" if narrow else "✅ Clear winner"
        body = (f"ahead of every other candidate in ≥ {v['clear_share']:.0%} of {n} resamples of the document "
                f"(the one it beats least often, {html.escape(worst['id'])}, in {worst['ahead']:.0%}){ci}")
    else:
        tied = [r for r in v["rivals"] if r["tied"]]
        color = "#E69F00"
        head = "⚖️ Too close to call: " + ", ".join(html.escape(x) for x in [v["top"], *[r["id"] for r in tied]])
        firsts = ", ".join([f"{html.escape(v['top'])} {v['top_first']:.0%}"]
                           + [f"{html.escape(r['id'])} {r['first']:.0%}" for r in tied])
        rule = uncertainty.RULE_WORDS.get(v["tie_break"]["rule"], v["tie_break"]["rule"])
        body = (f"none is ahead of the others in ≥ {v['clear_share']:.0%} of {n} resamples (first: {firsts}); "
                f"<b>{html.escape(v['winner'])}</b> picked by {rule}{ci}")
    return (f'<div class="cs-verdict" style="border-left:4px solid {color};padding:.25rem .6rem;margin:.1rem 0 .4rem 0;'
            f'background:{figures.rgba(color, 0.10)}"><b style="color:{color}">{head}</b> — {body}</div>')


def winner_card(report: Report, key: str | None = "cs_winner_card") -> list[str]:
    """The winner card; returns the cautions it showed (``analysis_notes`` does not repeat them)."""
    best = report.get(report.winner) if report.winner is not None else None
    if best is None:
        st.warning(md_escape(report.explanation))
        return []
    ws = selection.winner_summary(report)
    with st.container(border=True, key=key):
        if report.provisional:
            st.html('<div class="cs-provisional" style="font-weight:600;color:#b26b00">⏳ '
                    f'{html.escape(wording.provisional_note(report))}</div>')
        if ws.get("verdict"):
            st.html(verdict_badge(ws["verdict"], best.score_interval, "narrow-win" in (ws.get("flags") or [])))
        c1, c2, c3, c4 = st.columns([1.9, 1.7, 0.7, 0.8])  # "0.890 ± 0.010" needs the room
        c1.html(f'<div style="font-size:1.6rem;font-weight:700">🏆 {swatch(best.id)}</div>'
                f'<div style="opacity:.75;font-size:.9rem">{html.escape(best.label)}</div>')
        ci = best.score_interval
        known = ([m for m in METRICS if m not in report.pending_metrics and best.metrics.get(m) is not None]
                 if report.provisional else [])  # not RC that is not computed (a non-English document)
        runner = report.get(ws["runner"]) if ws["runner"] else None
        tie = runner is not None and ws["margin"] == 0  # no lead to point up at: "tie with …", in grey
        c2.metric(f"score on {', '.join(known)} so far" if known else "score",
                  f"{best.score:.3f}" + (f" ± {(ci[1] - ci[0]) / 2:.3f}" if ci else ""),
                  delta=(f"tie with {ws['runner']}" if tie else
                         f"{wording.margin_text(ws['margin'], signed=True, scores=(best.score or 0.0, runner.score or 0.0))}"
                         f" vs {ws['runner']}") if runner is not None else None,
                  delta_color="off" if tie else "normal", delta_arrow="off" if tie else "auto",
                  help=f"95% interval {ci[0]:.3f}–{ci[1]:.3f} (bootstrap over the document's blocks)" if ci else None)
        c3.metric("chunks", len(best.chunks))
        st_ = best.token_stats()
        c4.metric("mean tokens", f"{st_['mean']:.0f}", help=f"min {st_['min']}, max {st_['max']}")
        if ws["runner"]:
            st.html(f'<div style="margin:.2rem 0"><b>Leads {html.escape(ws["runner"])} on</b> '
                    f'{_chips(ws["leads"], "+")}</div>'
                    f'<div style="margin:.2rem 0"><b>Trails it on</b> {_chips(ws["trails"], "-")}</div>')
        st.caption(md_escape(report.explanation))
        for w in ws["cautions"]:  # a warning the explanation already says is not repeated
            st.warning(md_escape(w), icon="⚠️")
    return list(ws["cautions"])


def analysis_notes(report: Report, doc: Document, cautions: list[str]) -> None:
    """What the analysis warned about beyond the document's own warnings (shown above the tabs) and the winner
    card's ``cautions``: an embedding model that cannot read the document, texts truncated in exact mode, pairs a
    mentions file could not place, ..."""
    shown = set(doc.warnings) | set(cautions)
    for w in report.warnings:
        if w not in shown:
            shown.add(w)
            st.warning(md_escape(w), icon="⚠️")


PROBLEM_COLUMNS = ("broken blocks", "split pairs", "out-of-size chunks")


def column_order(columns: list[str]) -> list[str]:
    """Leaderboard columns, the ones to read first on the left: chunking, score, the metrics, the
    problem counts behind them, then sizes, status, time and notes (any other column at the end)."""
    first = ["chunking", "score", *METRICS, *PROBLEM_COLUMNS, "over model limit", "chunks", "mean tokens", "min",
             "max"]
    head = [c for c in first if c in columns]
    return head + [c for c in columns if c not in head]


# The leaderboard's first columns, up to the problem counts, fit a 1500-px window without scrolling
# sideways (the table is ~1,040 px wide there, beside the sidebar): fixed widths (px) and short labels,
# the full name in the header's tooltip. The chunking's name takes what it needs (about 125 px).
# Sizes, status, time and notes follow to the right (the caption says so).
BOARD_TABLE_PX = 1040  # the table's width in a 1500-px window (measured in Chromium)
BOARD_CHUNKING_PX = 125  # "recursive-1100+pp", the longest built-in name
BOARD_WIDTHS = {"": 32, "●": 28, "score": 92, **{m: 92 for m in METRICS},
                "broken blocks": 64, "split pairs": 52, "out-of-size chunks": 80, "over model limit": 72}
BOARD_LABELS = {
    "broken blocks": ("broken", "broken blocks: paragraphs, tables, lists or code blocks a chunk boundary cuts"),
    "split pairs": ("split", "split pairs: a pronoun in another chunk than the name it refers to "
                             "(– when RC is not computed)"),
    "out-of-size chunks": ("out of size", "out-of-size chunks: shorter than the minimum or longer than the maximum "
                                       "size in tokens"),
    "over model limit": ("over limit", "over model limit: chunks longer than your embedding model's input limit "
                                    "(see the note under the table)"),
}


def board_columns(columns: list[str]) -> dict[str, Any]:
    """``st.dataframe``'s column_config for the leaderboard's ``columns``: widths, short labels with
    the full name as help, the metric legend as the metrics' help. (Not pinned: a pinned column's
    text is drawn faded, the ● would no longer be the chunker's colour.)"""
    cfg: dict[str, Any] = {
        "": st.column_config.TextColumn("", width=BOARD_WIDTHS[""]),
        "●": st.column_config.TextColumn("", width=BOARD_WIDTHS["●"]),
        "chunking": st.column_config.TextColumn("chunking"),
        "score": st.column_config.Column("score", width=BOARD_WIDTHS["score"]),
        "candidate": st.column_config.CheckboxColumn("candidate"),
        "note": st.column_config.TextColumn("note", width="medium"),
        **{m: st.column_config.Column(m, help=f"{name}: {text}", width=BOARD_WIDTHS[m])
           for m, (name, text) in METRIC_GUIDE.items()},
        **{col: st.column_config.NumberColumn(label, help=why, width=BOARD_WIDTHS[col])
           for col, (label, why) in BOARD_LABELS.items()},
    }
    return {k: v for k, v in cfg.items() if k in columns}


def columns_to_the_right(columns: list[str]) -> list[str]:
    """The leaderboard's columns past what a 1500-px window shows (scrolled to reach)."""
    used = BOARD_CHUNKING_PX
    for i, col in enumerate(columns):
        if col == "chunking":
            continue
        used += BOARD_WIDTHS.get(col, 92)
        if used > BOARD_TABLE_PX:
            return list(columns[i:])
    return []


def metric_legend(report: Report | None = None) -> None:
    """The five metrics spelled out, one plain sentence each (visible: no hovering needed)."""
    lo, hi = size_bounds(report.settings if report else None)
    items = "".join(
        f'<li><b>{m}</b> · <b>{html.escape(name)}</b>: {html.escape(text)}'
        + (f" Here: {lo:,} to {hi:,} tokens." if m == "SC" else "") + "</li>"
        for m, (name, text) in METRIC_GUIDE.items())
    st.html(f'<div class="cs-metric-legend" style="font-size:.9rem"><b>What the scores mean</b> (each from 0, '
            f'poor, to 1, good; the score is their weighted mean, weights in the sidebar)'
            f'<ul style="margin:.3rem 0 .2rem 1.2rem;padding:0">{items}</ul></div>')


def _three_places(v: Any) -> str:
    """A metric cell: three decimals, "–" when missing (None or NaN)."""
    return "–" if v is None or v != v else f"{v:.3f}"


def board_frame(report: Report, rows: list[dict[str, Any]], order: list[ChunkingResult],
                doc: Document | None) -> tuple[pd.DataFrame, list[Any]]:
    """The leaderboard's table (marks, columns in reading order, problem counts, the over-limit count and the
    budgeted recall when known) and the model-limit checks made for it (None where a chunking was not checked)."""
    from ui import limits

    target = limits.current_target() if doc is not None else None
    checks = []
    for row, c in zip(rows, order):
        row.update(highlight.problem_counts(c))
        if target is not None and doc is not None:
            chk = limits.check(doc, c, target)
            row[limits.COLUMN] = None if chk is None else len(chk.over)
            checks.append(chk)
    df = pd.DataFrame(rows)
    if limits.COLUMN in df.columns:  # whole counts (a missing one would make the column float: "66.000000")
        df[limits.COLUMN] = df[limits.COLUMN].astype("Int64")
    df = df[column_order(list(df.columns))]
    df.insert(0, "", ["🏆" if w else ("◆" if c else "") for w, c in zip(df["winner"], df["candidate"])])
    df.insert(1, "●", "●")
    df = df.drop(columns=["winner"])
    if report.retrieval:  # the retrieval check's budgeted recall, when one was run
        from chunkscope.retrieval.run import recall_by_chunking

        rec = recall_by_chunking(report.retrieval)
        df.insert(df.columns.get_loc("score") + 1, f"recall@{report.retrieval['budget']}",
                  [rec.get(c.id) for c in order])
    return df, checks


def board_style(df: pd.DataFrame, order: list[ChunkingResult]) -> Any:
    """The table styled: the ● in each chunker's colour, metric cells shaded, ± half the 95% interval."""
    def colours(row):
        return [f"color: {figures.chunker_color(row['chunking'])}" if col == "●" else "" for col in row.index]

    styled = (df.style.apply(colours, axis=1).map(_shade, subset=[*METRICS, "score"])
              .format({**{m: _three_places for m in (*METRICS, "score")}, "seconds": "{:.2f}"}, na_rep="–"))
    for i, c in enumerate(order):  # ± half the 95% interval in each cell that has one
        for col, ci in [*((m, c.metric_intervals.get(m)) for m in METRICS), ("score", c.score_interval)]:
            if ci and ci[1] > ci[0]:
                styled = styled.format(lambda v, h=(ci[1] - ci[0]) / 2: f"{v:.3f} ± {h:.3f}",
                                       subset=pd.IndexSlice[[df.index[i]], [col]])
    extra = [col for col in df.columns if str(col).startswith("recall@")]
    if extra:
        styled = styled.map(_shade, subset=extra).format(_three_places, subset=extra)
    return styled


def board_notes(report: Report, right: list[str], not_run: list[ChunkingResult], checks: list[Any],
                key: str | None) -> None:
    """What the leaderboard's marks mean, the chunkings not run, the model limit, the score intervals."""
    st.caption("🏆 adaptive winner · ◆ candidate · ● the chunker's colour in every chart and page · click a column "
               "header to sort · metric cells shaded from red (0) to green (1) · ± half the 95% interval "
               "(bootstrap over the document's blocks) · problem counts (hover a header for what it counts): where "
               "they are, see Compare"
               + (f" · scroll the table sideways for {md_escape(', '.join(right))}" if right else "")
               + (f" · **{wording.provisional_note(report)}** (– = not known yet)" if report.provisional else ""))
    if not_run:
        st.caption("Not run, so not ranked: " + md_escape("; ".join(
            f"{c.id} ({c.reason or c.status})" for c in not_run)))
    done = next((x for x in checks if x is not None), None)
    if done is not None:
        st.caption(f"“over limit” (over model limit): chunks longer than the {done.model.max_tokens:,}-token input limit of "
                   f"{md_escape(done.model.name)}, counted in {md_escape(done.tokenizer)}"
                   + (f" ({md_escape(done.note)})" if done.note else "")
                   + ": the model embeds only their beginning.")
    if key is not None and any(c.score_interval for c in report.ranked):
        with guard("The score intervals"), st.expander("Scores with their 95% intervals", expanded=False):
            st.plotly_chart(figures.score_interval_figure(report), width="stretch", key="cs_score_ci")
            st.caption("Where two bars overlap a lot, the document cannot tell the two chunkings apart: the verdict "
                       "above compares them resample by resample (paired), which is sharper than comparing bars.")


def leaderboard(report: Report, doc: Document | None = None, key: str | None = "cs_leaderboard") -> None:
    """The leaderboard of the chunkings that ran (those that did not are named under it)."""
    every = report.leaderboard
    # chunkings that did not run (no LLM endpoint, a failure) are listed under the table, not shown as zeros
    pairs = [(row, c) for row, c in zip(html_report.leaderboard_rows(report), every) if c.ok]
    rows, order = [r for r, _ in pairs], [c for _, c in pairs]
    not_run = [c for c in every if not c.ok]
    if not rows:
        st.warning("No chunking ran: " + md_escape("; ".join(f"{c.id}: {c.reason or c.status}" for c in not_run)))
        return
    df, checks = board_frame(report, rows, order, doc)
    cols = [str(c) for c in df.columns]
    st.dataframe(board_style(df, order), hide_index=True, width="stretch", key=key, **MISSING,
                 column_config=board_columns(cols))
    board_notes(report, columns_to_the_right(cols), not_run, checks, key)


def provisional_view(report: Report) -> None:
    """What a running analysis shows as soon as the structure stage is done: the winner so far and
    the leaderboard, marked provisional (no keys: drawn again after each stage in one page run)."""
    with guard("The provisional winner card"):
        winner_card(report, key=None)
    with guard("The provisional leaderboard"):
        leaderboard(report, key=None)


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
        # new document, new chunkings or a new winner/runner-up (weights): back to them. The
        # selection is set through session state (not ``default=``), so the list shown and the
        # chunkings plotted are always the same ones.
        who = json.dumps([report.document.get("sha256"), ok_ids, default])
        held = st.session_state.get("cs_radar_sel")
        if st.session_state.get("cs_radar_for") != who or not isinstance(held, list) or \
                any(i not in ok_ids for i in held):
            st.session_state["cs_radar_for"] = who
            st.session_state["cs_radar_sel"] = list(default)
        sel = st.multiselect("Chunkings on the radar (winner and runner-up first)", ok_ids, key="cs_radar_sel")
        bands = st.toggle("95% bands", value=True, key="cs_radar_bands",
                          help="shade each metric's 95% interval (bootstrap over the document's blocks)")
        st.plotly_chart(figures.radar_figure(report, sel, bands=bands), width="stretch", key="cs_radar")
        note = figures.radar_note(report, sel, bands=bands)
        if note:
            st.caption(note)
    with right, guard("The chunk-size chart"):
        st.plotly_chart(figures.size_figure(report, ok_ids), width="stretch", key="cs_sizes")
        lo, hi = size_bounds(report.settings)
        st.caption(f"Every chunk is a dot; dashed lines: the size bounds {lo} and {hi} tokens (log scale).")
    with guard("The runtime chart"):
        st.plotly_chart(figures.runtime_figure(report, [c.id for c in report.leaderboard]), width="stretch",
                        key="cs_runtime")
        st.caption(timings_line(report.timings))


TIMING_LABELS = {"parse": "reading the file", "chunk": "chunking", "coref": "coreference",
                 "embed": "embedding model", "metrics": "scoring", "other": "other"}


def timings_line(t: dict[str, float]) -> str:
    """The whole analysis' time by stage; the stages are disjoint, so they add up to the total."""
    parts = [f"{label} {t[k]:.2f} s" for k, label in TIMING_LABELS.items() if t.get(k)]
    if "other" not in t and "total" in t:  # a report from before "other" existed: show the remainder
        rest = t["total"] - sum(t.get(k, 0.0) for k in TIMING_LABELS)
        if rest > 0.005:
            parts.append(f"other {rest:.2f} s")
    total = f" = {t['total']:.2f} s in all" if "total" in t else ""
    return ("Whole analysis: " + " + ".join(parts) + total
            + " (the embedding model and coreference are shared by all chunkings; a re-run reuses them)")


@st.cache_data(show_spinner="Building the HTML report…", max_entries=8)
def _html(key: str, _report: Report, _doc: Document | None = None) -> str:
    return html_report.html_report(_report, _doc)


def _jsonl_text(report: Report, doc: Document, embed_text: str = "raw") -> str:
    """The winning chunks as JSONL (built when the button is clicked, not on every rerun)."""
    recs = chunk_records(report, doc.text, heading_path=doc.chunk_heading_path, pages_of=doc.pages_of,
                          boxes=doc.boxes if doc.geometry is not None else None, embed_text=embed_text)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


def _report_json(report: Report, embed_text: str) -> str:
    """The report's JSON with the text chosen for embedding in its provenance (the report itself unchanged)."""
    copy = Report.from_dict(report.to_dict())
    record_embed_text(copy, embed_text)
    return copy.to_json()


EMBED_TEXT_LABELS = {"raw": "as in the document", "clean": "clean (no layout comments, page marks, empty markup)",
                     "context": "heading path + clean text"}


def _table_downloads(col: Any, report: Report, doc: Document, stem: str) -> None:
    """Every chunk of every chunking as one table, CSV or Parquet (chunkscope.chunk_table)."""
    n = sum(len(c.chunks) for c in report.chunkings if c.ok)
    tip = ("one row per chunk of every chunking: id, chunking, chunk index, span, tokens, pages, heading path, "
           "SC/BI/RC flags (out of size, breaks a block, splits a pair), cohesion")
    col.download_button(f"All chunks (CSV, {n})", data=lambda: chunk_table.table_bytes(report, doc, "csv"),
                        file_name=f"{stem}.chunks.csv", mime="text/csv", key="cs_dl_table_csv", on_click="ignore",
                        help=tip)
    col.download_button("All chunks (Parquet)", data=lambda: chunk_table.table_bytes(report, doc, "parquet"),
                        file_name=f"{stem}.chunks.parquet", mime="application/vnd.apache.parquet",
                        key="cs_dl_table_parquet", on_click="ignore", help=tip)


def exports(report: Report, doc: Document) -> None:
    stem = file_stem(doc)
    key = json.dumps([doc.sha256, report.winner, report.settings.get("weights"), report.settings.get("candidates"),
                      report.timings.get("total")], sort_keys=True, default=str)
    embed_text = str(st.radio("Text to embed", list(EMBED_TEXT_LABELS), format_func=EMBED_TEXT_LABELS.__getitem__,
                              horizontal=True, key="cs_embed_text",
                              help="which text of each chunk the JSONL export marks for embedding (its "
                                   "`embed_text`; every line carries text, text_clean and text_context); "
                                   "recorded in the report's provenance. The metrics score the spans either way.")
                     or "raw")
    c1, c2, c3, c4 = st.columns(4)
    with c1, guard("The JSON export"):
        c1.download_button("Report (JSON)", data=lambda: _report_json(report, embed_text),
                           file_name=f"{stem}.chunkscope.json",
                           mime="application/json", key="cs_dl_json", on_click="ignore",
                           help="schema chunkscope.report/1: every chunking, its spans, metrics and diagnostics")
    with c2, guard("The JSONL export"):
        won = report.get(report.winner) if report.winner else None
        if won is not None:
            n = len(won.chunks)
            c2.download_button(f"Winning chunks (JSONL, {n})", data=lambda: _jsonl_text(report, doc, embed_text),
                               file_name=f"{stem}.{report.winner}.jsonl",
                               mime="application/jsonl", key="cs_dl_jsonl", on_click="ignore",
                               help="one line per chunk: id, text, text_clean, text_context, embed_text, start, end, "
                                    "tokens, pages, heading path, chunker, document sha256, checksum")
        else:
            c2.button("Winning chunks (JSONL)", disabled=True, help="no winner", key="cs_dl_jsonl_off")
    with c3, guard("The HTML report"):
        c3.download_button("HTML report (offline)", data=lambda: _html(key, report, doc), file_name=f"{stem}.report.html",
                           mime="text/html", key="cs_dl_html", on_click="ignore",
                           help="self-contained: winner, leaderboard, radar, problem counts, settings")
    with c4, guard("The chunk table"):
        _table_downloads(c4, report, doc, stem)


def pipeline_export(report: Report) -> None:
    """"Use it in your pipeline": the winner's settings file and a snippet that uses it."""
    if not report.winner:
        return
    with st.expander(f"Use it in your pipeline: {report.winner}"), guard("The pipeline export"):
        fname = "chunkscope-winner.toml"
        st.caption("The winner's settings file and a snippet: `chunkscope.chunk` or the LangChain "
                   "`ChunkScopeSplitter` cut exactly the chunks scored here.")
        st.download_button("Winner's settings (TOML)", data=winner_settings_text(report), file_name=fname,
                           mime="application/toml", key="cs_dl_winner_toml", on_click="ignore")
        st.code(pipeline_snippet(report, fname), language="python")
