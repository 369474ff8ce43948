"""Page scaffolding shared by the pages: document + settings + report, or a helpful stop."""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from chunkscope.analysis import Settings
from chunkscope.document import Document
from chunkscope.report import Report
from ui.analysis import (
    current_report,
    forget_places_of_other_documents,
    latest_report,
    provisional_banner,
    settings_sidebar,
)


def _link_home() -> None:
    try:
        st.page_link("app.py", label="Go to Overview", icon="🏠")
    except StreamlitAPIException:  # the page runs on its own (tests): there is no Overview to link to
        pass


def panel_settings() -> tuple[Settings | None, str]:
    """The settings panel drawn in the sidebar: (settings, "") or (None, what is wrong), as ``settings_sidebar``."""
    try:
        return settings_sidebar()
    except Exception as exc:  # a page's boundary, never a traceback: the page falls back to the last results
        from ui.common import short_error

        return None, f"settings panel: {short_error(exc)}"


def require_document() -> Document:
    """The current document; without one, say where to pick it and stop the page."""
    from ui.common import current_document, md_escape

    doc = current_document()
    if doc is None:
        st.info("No document yet: pick a sample or upload a file on the Overview page.")
        _link_home()
        st.stop()
    st.sidebar.caption(f"Document: **{md_escape(doc.name)}** (change it on the Overview page)")
    return doc


def require_report() -> tuple[Document, Report]:
    """The current document and its analysis (the last one when the settings changed); without one, stop the page."""
    from ui.common import md_escape

    doc = require_document()
    forget_places_of_other_documents(doc)
    settings, problem = panel_settings()
    if problem:
        st.sidebar.error(md_escape(problem))
    report = current_report(doc, settings)
    if report is None:
        report = latest_report(doc)
        if report is None:
            st.info(f"“{md_escape(doc.name)}” has not been analyzed yet: press Analyze on the Overview page.")
            _link_home()
            st.stop()
        st.warning("Settings changed since the last analysis: showing the last results. "
                   "Press Analyze on the Overview page to update them.")
    provisional_banner(report)
    return doc, report


def require_ranked_report() -> tuple[Document, Report, list[str]] | None:
    """``require_report`` and the ids of the chunkings that produced spans, best first; None (with a message)
    when none did."""
    doc, report = require_report()
    ok_ids = [c.id for c in report.ranked]
    if not ok_ids:
        st.info("No chunking produced spans for this document.")
        return None
    return doc, report, ok_ids
