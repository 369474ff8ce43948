"""ChunkScope: Streamlit entry point (`make run`).

Layout: sidebar = document input (upload or bundled sample) and analysis settings; main =
document summary, warnings, then two tabs: "Analyze" (progress by stage, winner card,
leaderboard, radar / size / runtime charts, exports) and "Document and blocks" (blocks
outlined, page by page). The engine is `core/`; this file only calls it. Every section runs
in ``guard()``: an error is one `st.error` line where it happened, the rest stays usable.
"""

from __future__ import annotations

import html

import streamlit as st

from chunkscope.analysis import Settings
from chunkscope.document import Document
from chunkscope.ingest import FORMATS_IN_BRIEF
from chunkscope.report import Report
from chunkscope.text.blocks import blocks_by_kind
from ui.analysis import (
    current_report,
    follow_analysis,
    keep_state,
    latest_report,
    provisional_banner,
    running_job,
    seed_from_query,
    settings_sidebar,
    start_analysis,
)
from ui.common import (
    document_picker,
    guard,
    language_effect,
    md_escape,
    render_summary,
    render_warnings,
    take_language_change,
)
from ui.nav import inside_page
from ui.nav import run as run_navigation
from ui.overview import analysis_notes, charts, exports, leaderboard, metric_legend, pipeline_export, winner_card
from ui.render import blocks_html, legend_html, views
from ui.retrieval import apply_weight
from ui.retrieval import section as retrieval_section

st.set_page_config(page_title="ChunkScope", page_icon="🔎", layout="wide")


def section_document(doc: Document) -> None:
    """The document as its blocks (what Block Integrity protects), one page or window at a time."""
    st.html(legend_html(blocks_by_kind(doc.blocks)))
    with st.expander(f"Headings ({len(doc.headings)})", expanded=False):
        if doc.headings:
            outline = "".join(
                f'<div style="margin-left:{(min(h.level, 6) - 1) * 1.2}em">{html.escape(h.title) or "&nbsp;"}'
                f' <span style="color:#888">(h{h.level}, page {doc.page_of(h.start) or "-"})</span></div>'
                for h in doc.headings[:500]
            )
            st.html(outline)
        else:
            st.caption("No headings found.")
    vs = views(doc)
    if not vs:
        st.caption("The document has no blocks.")
        return
    if len(vs) > 1:
        labels = [v.label for v in vs]
        choice = st.select_slider("Show", options=labels, value=labels[0], key=f"cs_view_{doc.sha256[:12]}")
        view = vs[labels.index(choice)]
    else:
        view = vs[0]
    st.caption(f"{view.label} · blocks {view.first + 1}–{view.last + 1} of {len(doc.blocks)}")
    st.html(blocks_html(doc, view))


def rerun_on_language_change(doc: Document, settings: Settings | None, report: Report | None) -> None:
    """The user set the language: re-run what depends on it (RC), or say the analysis already made with it shows."""
    if not take_language_change(doc):
        return
    from chunkscope.text.language import language_name

    if report is None and settings is not None and running_job(doc) is None and latest_report(doc) is not None:
        start_analysis(doc, settings)
        st.info(f"Language set to {language_name(doc.language)}: re-running the analysis "
                f"({md_escape(language_effect(doc.language))})", icon="🔁")
    elif report is not None:
        st.info(f"Language set to {language_name(doc.language)}: showing the analysis already made with it.",
                icon="🔁")


def analyze_button(doc: Document, settings: Settings | None, report: Report | None) -> None:
    """Analyze (or Re-run analysis): starts the analysis in the background; disabled while the settings are wrong."""
    label = "Analyze" if report is None or running_job(doc) is not None else "Re-run analysis"
    if st.button(label, type="primary", disabled=settings is None, key="cs_analyze",
                 help="Run every chunker on this document, score the chunkings and pick the adaptive winner. "
                      "The structure scores (SC, BI) show first; RC, ICC and DCC join as they are computed.") \
            and settings is not None:
        start_analysis(doc, settings)


def report_to_show(doc: Document, settings: Settings | None, report: Report | None) -> Report | None:
    """``report`` (the analysis for these settings) or, after following a running one here until it ends, its
    result; else the last one with a warning that the settings changed; None (with what to do) when the document
    was never analyzed."""
    job = running_job(doc)
    if job is not None:  # running (or just finished): follow it here until it ends
        follow_analysis(job, settings)
        report = current_report(doc, settings)
    if report is not None:
        return report
    stale = latest_report(doc)
    if stale is None:
        st.caption("Press Analyze to run every chunker on this document and score the chunkings "
                   "(settings in the sidebar). Then: the winner and why, the leaderboard, charts, exports; "
                   "the Compare and Chunk inspector pages show where each chunking cuts.")
        metric_legend(None)
        return None
    st.warning("Settings changed since the last analysis: these are the last results; press Analyze to update.")
    return stale


def section_results(doc: Document, report: Report) -> None:
    """The winner card, the leaderboard, the charts, the retrieval check and the exports."""
    apply_weight(report)  # the Retrieval section's weight (0 = off) re-ranks before the winner card
    provisional_banner(report)
    with guard("The winner card"):
        analysis_notes(report, doc, winner_card(report))
    st.subheader("Leaderboard", anchor=False)
    with guard("The leaderboard"):
        leaderboard(report, doc)
        metric_legend(report)
    charts(report)
    with guard("The retrieval check"):
        retrieval_section(doc, report)
    st.subheader("Export", anchor=False)
    exports(report, doc)
    pipeline_export(report)


def section_analyze(doc: Document) -> None:
    """Chunkers, metrics and the adaptive winner: winner card, leaderboard, charts, exports."""
    settings, problem = settings_sidebar()
    if problem:
        st.error(f"Settings: {md_escape(problem)}")
    report = current_report(doc, settings)
    rerun_on_language_change(doc, settings, report)
    analyze_button(doc, settings, report)
    report = report_to_show(doc, settings, report)
    if report is not None:
        section_results(doc, report)


def main() -> None:
    keep_state()
    for problem in seed_from_query():
        st.sidebar.warning(md_escape(problem))
    with guard("Loading the document"):
        doc = None
        doc = document_picker()
    st.title("ChunkScope")
    st.caption("Which chunker suits this document, and why: structure, size, references and coherence.")
    if doc is None:
        st.info(f"Pick a bundled sample or upload a document ({FORMATS_IN_BRIEF}) in the sidebar.")
        return
    with guard("The document summary"):
        render_summary(doc)
        render_warnings(doc)
    tab_analyze, tab_doc = st.tabs(["Analyze", "Document and blocks"])
    with tab_analyze, guard("The analysis"):
        section_analyze(doc)
    with tab_doc, guard("The document view"):
        section_document(doc)


if inside_page():  # the navigation chose the Overview: draw it
    main()
else:  # the entry run: navigation ("Overview" first, then pages/), then the chosen page
    run_navigation(__file__)
