"""ChunkScope: Streamlit entry point (`make run`).

Layout: sidebar = document input (upload or bundled sample); main = document summary,
warnings, then two sections: "Document" (blocks outlined, page by page) and "Analyze"
(chunkers and metrics, filled in by the analysis issue). The engine is `core/`; this file
only calls it. Bad input shows one `st.error` line and the app stays usable.
"""

from __future__ import annotations

import html

import streamlit as st

from core.blocks import blocks_by_kind
from core.document import Document
from ui.analysis import keep_state
from ui.common import document_picker, render_summary, render_warnings
from ui.render import blocks_html, legend_html, views

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


def section_analyze(doc: Document) -> None:
    """Chunkers, metrics and the adaptive winner: winner card, leaderboard, charts, exports."""
    from ui.analysis import current_report, latest_report, run_analysis, settings_sidebar
    from ui.overview import charts, exports, leaderboard, winner_card

    settings, problem = settings_sidebar()
    if problem:
        st.error(f"Settings: {problem}")
    report = current_report(doc, settings)
    label = "Analyze" if report is None else "Re-run analysis"
    if st.button(label, type="primary", disabled=settings is None, key="cs_analyze"):
        report = run_analysis(doc, settings)
    if report is None:
        stale = latest_report(doc)
        if stale is None:
            st.caption("Press Analyze to run every chunker on this document and score the chunkings.")
            return
        st.warning("Settings changed since the last analysis: these are the last results; press Analyze to update.")
        report = stale
    winner_card(report)
    st.subheader("Leaderboard")
    leaderboard(report)
    charts(report)
    st.subheader("Export")
    exports(report, doc)


def main() -> None:
    keep_state()
    doc = document_picker()
    st.title("ChunkScope")
    st.caption("Which chunker suits this document, and why: structure, size, references and coherence.")
    if doc is None:
        st.info("Pick a bundled sample or upload a document (PDF, Markdown, text or JSON) in the sidebar.")
        return
    render_summary(doc)
    render_warnings(doc)
    tab_analyze, tab_doc = st.tabs(["Analyze", "Document and blocks"])
    with tab_analyze:
        section_analyze(doc)
    with tab_doc:
        section_document(doc)


main()
