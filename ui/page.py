"""Page scaffolding shared by the pages: document + settings + report, or a helpful stop."""

from __future__ import annotations

import streamlit as st

from core.document import Document
from core.report import Report
from ui.analysis import current_report, latest_report, settings_sidebar


def require_document() -> Document:
    from ui.common import current_document

    doc = current_document()
    if doc is None:
        st.info("No document yet: pick a sample or upload a file on the Overview page.")
        st.page_link("app.py", label="Go to Overview", icon="🏠")
        st.stop()
    return doc


def require_report() -> tuple[Document, Report]:
    doc = require_document()
    settings, problem = settings_sidebar()
    if problem:
        st.sidebar.error(problem)
    report = current_report(doc, settings)
    if report is None:
        report = latest_report(doc)
        if report is None:
            st.info(f"“{doc.name}” has not been analyzed yet: press Analyze on the Overview page.")
            st.page_link("app.py", label="Go to Overview", icon="🏠")
            st.stop()
        st.warning("Settings changed since the last analysis: showing the last results. "
                   "Press Analyze on the Overview page to update them.")
    return doc, report
