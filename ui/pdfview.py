"""Streamlit helpers for PDFs: the extraction-health panel and the page view's pieces."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from chunkscope.document import Document
from ui import keys
from ui.common import md_escape

PAGE_VIEW = "pages/5_Page_view.py"


def open_page_view(page: int | None, chunking: str | None = None, chunk: int | None = None) -> None:
    """Go to the page view at ``page`` with ``chunk`` of ``chunking`` selected (call it when a button
    returns True, not from a callback: ``st.switch_page`` stops the script)."""
    if page:
        st.session_state[keys.PV_PAGE] = int(page)
        st.session_state[keys.PV_ASKED] = True
    if chunking is not None and chunk is not None:
        st.session_state[keys.PV_FOCUS] = (chunking, int(chunk))
    try:
        st.switch_page(PAGE_VIEW)
    except StreamlitAPIException:  # run on its own (tests): nowhere to switch to
        pass


def health_rows(h: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for p in h.get("pages", []):
        rows.append({
            "page": p.get("page"), "chars": p.get("chars"),
            "mapped": None if p.get("coverage") is None else round(100 * p["coverage"], 1),
            "dropped": round(100 * p["missing_letters"] / p["letters"], 1) if p.get("letters") else None,
            "images %": round(100 * float(p.get("image_coverage") or 0)),
            "running lines": ", ".join(p.get("running", [])),
            "hyphenated": p.get("hyphenated"),
            "tables (found / as Markdown)": f"{p.get('tables_detected', 0)} / {p.get('tables_markdown', 0)}",
            "warnings": "; ".join(p.get("warnings", [])),
        })
    return pd.DataFrame(rows)


def render_health(doc: Document, expanded: bool = False, key: str = "cs_health") -> None:
    """Compact extraction-health panel of a PDF (nothing for other formats)."""
    h = doc.meta.get("health") if isinstance(doc.meta, dict) else None
    if not h:
        return
    t = h.get("totals", {})
    warns = h.get("warnings", [])
    cov = h.get("coverage")
    conv = list(doc.warnings)  # what the conversion said (text recovered, pages as plain text, ...)
    n = len(warns) + len(conv)
    head = f"Extraction health: {n} warning(s)" if n else "Extraction health: no warnings"
    with st.expander(head, expanded=expanded):
        c1, c5, c2, c3, c4 = st.columns(5)
        c1.metric("page boxes", "–" if cov is None else f"{cov:.1%}",
                  help="visible characters of the Markdown mapped back to a box on the page")
        letters = t.get("letters") or 0
        c5.metric("text dropped", f"{(t.get('missing_letters') or 0) / letters:.1%}" if letters else "–",
                  help="letters PyMuPDF finds on the pages that are not in the Markdown (the converter left "
                       "them out: text on shaded backgrounds taken for pictures); words left out at the same "
                       "place on a quarter of the pages (a slide template's navigation bar) are not counted")
        mode = (h.get("running_lines") or {}).get("mode", "mark")
        c2.metric("running lines", t.get("running_lines", 0),
                  help="running headers/footers found (page numbers, chapter titles); "
                  + ("removed at ingest" if mode == "strip" else "kept as layout comments, never glued to text"))
        c3.metric("tables", f"{t.get('tables_detected', 0)} / {t.get('tables_markdown', 0)}",
                  help="tables detected on the pages / tables that came out as Markdown tables")
        c4.metric("hyphenated breaks", t.get("hyphenated", 0), help="line breaks inside a word (word- / next line)")
        for w in conv[:8]:
            st.caption("⚠ conversion: " + md_escape(w))
        if len(conv) > 8:
            st.caption(f"… and {len(conv) - 8} more from the conversion (see the warnings under the document)")
        for w in warns[:12]:
            st.caption("⚠ " + md_escape(w))
        if len(warns) > 12:
            st.caption(f"… and {len(warns) - 12} more (see the table)")
        df = health_rows(h)
        if not df.empty:
            st.dataframe(df, hide_index=True, width="stretch", height=min(280, 38 + 35 * len(df)),
                         column_config={"mapped": st.column_config.NumberColumn("mapped %", format="%.1f"),
                                        "dropped": st.column_config.NumberColumn("dropped %", format="%.1f")})
        bad = [p["page"] for p in h.get("pages", []) if p.get("warnings")]
        if bad:
            cols = st.columns(min(8, len(bad)))
            for i, pg in enumerate(bad[:8]):
                if cols[i].button(f"page {pg}", key=f"{key}_go_{pg}", help="open this page in the page view"):
                    open_page_view(pg)
