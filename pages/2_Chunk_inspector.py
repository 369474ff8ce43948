"""Chunk inspector: one chunk's text, tokens, pages, heading path, blocks, cohesion and coherence.

Select a row of the chunk table (or type a chunk number, step with ◀ / ▶, or jump to the chunk
holding a character offset) to see everything about that chunk.
"""

from __future__ import annotations

import bisect
import hashlib
import html

import pandas as pd
import streamlit as st

from chunkscope.ingest.health import blame
from chunkscope.present import figures, highlight
from chunkscope.text.blocks import kind_word
from ui import limits
from ui.analysis import keep_state, widget_default
from ui.common import MISSING, counted, guard, md_escape
from ui.overview import swatch
from ui.page import require_report

st.set_page_config(page_title="Chunk inspector · ChunkScope", page_icon="🔎", layout="wide")
keep_state()
st.title("Chunk inspector")

CONTEXT = 400  # characters of dimmed context shown around the chunk


@st.cache_data(show_spinner=False, max_entries=16)
def chunk_table(key: str, _doc, _c, lo: int, hi: int) -> pd.DataFrame:
    """One row per chunk (cached per document, chunking and size bounds)."""
    p = highlight.Problems.of(_c)
    cuts = {}
    artefact = {}  # boundary -> "extraction: running header" when the cut sits on an extraction artefact
    for x in p.broken:
        cuts.setdefault(x["boundary"], 0)
        cuts[x["boundary"]] += 1
        why = blame(_doc, x["block"], x["boundary"])
        if why:
            artefact[x["boundary"]] = why
    splits = {}
    for x in p.split:
        splits[x["boundary"]] = splits.get(x["boundary"], 0) + 1
    icc = {x["chunk"]: x["cohesion"] for x in _c.diagnostics.get("ICC", {}).get("per_chunk", [])}
    rows = []
    for i, ch in enumerate(_c.chunks):
        pages = sorted({q for q in (_doc.page_of(ch.start), _doc.page_of(max(ch.start, ch.end - 1))) if q})
        path = _doc.chunk_heading_path(ch.start, ch.end)
        flags = []
        if ch.tokens < lo or ch.tokens > hi:
            flags.append("⚠ under" if ch.tokens < lo else "⚠ over")
        nb = cuts.get(ch.start, 0) + cuts.get(ch.end, 0)
        if nb:
            why = artefact.get(ch.start) or artefact.get(ch.end)
            flags.append(f"✂ {counted(nb, 'block')} cut" + (f" ({why})" if why else ""))
        ns = splits.get(ch.start, 0) + splits.get(ch.end, 0)
        if ns:
            flags.append(f"⛓ {counted(ns, 'pair')} split")
        rows.append({
            "#": i + 1, "tokens": ch.tokens, "pages": "–" if not pages else "–".join(map(str, dict.fromkeys(pages))),
            "heading": path[-1].title[:60] if path else "", "cohesion": icc.get(i, float("nan")),  # "–" (MISSING)
            "flags": " ".join(flags),
            "starts with": " ".join(_doc.text[ch.start:ch.start + 90].split())[:80],
            "start": ch.start, "end": ch.end,
        })
    return pd.DataFrame(rows)


def _picked(table_key: str) -> None:
    sel = st.session_state.get(table_key)
    rows = getattr(getattr(sel, "selection", None), "rows", None) or (sel or {}).get("selection", {}).get("rows", [])
    if rows:
        st.session_state["cs_insp_no"] = int(rows[0]) + 1


def _step(n: int, delta: int) -> None:
    st.session_state["cs_insp_no"] = max(1, min(n, int(st.session_state.get("cs_insp_no", 1)) + delta))


def _index_at(c, pos: int) -> int:
    """The chunk of ``c`` holding character ``pos`` (the last one starting at or before it)."""
    return max(0, bisect.bisect_right([ch.start for ch in c.chunks], pos) - 1)


def _jump(c) -> None:
    pos = int(st.session_state.get("cs_insp_offset") or 0)
    st.session_state["cs_insp_no"] = _index_at(c, pos) + 1
    st.session_state["cs_insp_pos"] = pos  # the place kept for a switch of chunking: the offset asked for


def _chunking_changed(report) -> None:
    """Another chunking: stay at the same place in the document (the chunk holding the offset
    jumped to, or else the start of the chunk shown until now), not at the same chunk number."""
    c = report.get(st.session_state.get("cs_insp_chunking"))
    pos = st.session_state.get("cs_insp_pos")
    if c is not None and c.chunks and pos is not None:
        st.session_state["cs_insp_no"] = _index_at(c, int(pos)) + 1


def main() -> None:
    doc, report = require_report()
    ok_ids = [c.id for c in report.ranked]
    if not ok_ids:
        st.info("No chunking produced spans for this document.")
        return
    if st.session_state.get("cs_insp_chunking") not in ok_ids:
        st.session_state.pop("cs_insp_chunking", None)
    c1, c2, c3 = st.columns([1.4, 1.6, 1.2])
    cid = c1.selectbox("Chunking", ok_ids, index=widget_default(
                       "cs_insp_chunking", ok_ids.index(report.winner) if report.winner in ok_ids else 0),
                       key="cs_insp_chunking", format_func=lambda i: i + (" 🏆" if i == report.winner else ""),
                       on_change=_chunking_changed, args=(report,),
                       help="Switching keeps your place in the document: the chunk holding the same text opens.")
    c = report.get(cid)
    n = len(c.chunks)
    lo, hi = report.settings.get("min_tokens", 100), report.settings.get("max_tokens", 1100)
    st.session_state["cs_insp_no"] = max(1, min(int(st.session_state.get("cs_insp_no", 1)), n))
    c3.number_input("…or the chunk holding character", 0, max(0, len(doc.text) - 1), 0, key="cs_insp_offset",
                    on_change=_jump, args=(c,))
    with c2:
        b1, b2, b3 = st.columns([1, 2, 1], vertical_alignment="bottom")
        b1.button("◀", key="cs_insp_prev", on_click=_step, args=(n, -1), disabled=n < 2, help="previous chunk")
        idx = b2.number_input(f"Chunk (1–{n})", 1, max(1, n), key="cs_insp_no") - 1
        b3.button("▶", key="cs_insp_next", on_click=_step, args=(n, 1), disabled=n < 2, help="next chunk")

    with guard("The chunk table"):
        # the flags and cohesion come from the diagnostics: key on what they depend on too
        # (same spans under another BI tolerance, mentions file or embedder flag differently)
        scored_by = {k: report.settings.get(k) for k in ("bi_tolerance", "coref", "mentions", "embedder",
                                                          "embedding_mode")}
        key = hashlib.sha256(repr((doc.sha256, cid, [(x.start, x.end) for x in c.chunks], sorted(scored_by.items()),
                                   sorted(c.metrics.items(), key=lambda kv: kv[0]))).encode()).hexdigest()
        df = chunk_table(key, doc, c, lo, hi)
        chk = limits.check(doc, c)  # the user's embedding model (sidebar), if one is set
        if chk is not None:
            df = df.copy()
            df.insert(2, "model tokens", chk.counts)
            over = set(chk.over)
            df["flags"] = [(f + " " if f else "") + (f"⛔ over {chk.model.max_tokens:,}" if i in over else "")
                           for i, f in enumerate(df["flags"])]
            df["flags"] = df["flags"].str.strip()
        tkey = f"cs_insp_table_{key[:12]}"
        st.dataframe(df, hide_index=True, width="stretch", height=min(260, 38 + 35 * len(df)), key=tkey, on_select=lambda: _picked(tkey),
                     selection_mode="single-row",
                     column_config={"cohesion": st.column_config.NumberColumn(
                         format="%.3f", help="ICC's cohesion of the chunk; – where the chunk lies within one "
                         "block (ICC scores only chunks that span two or more blocks)"),
                                    "starts with": st.column_config.TextColumn(width="large")}, **MISSING)
        st.caption(f"{n} chunks of {md_escape(cid)}: click a row to inspect it · ⚠ out of the {lo}–{hi} token "
                   "bounds · ✂ a boundary of this chunk breaks a block · ⛓ it splits an entity–pronoun pair"
                   + ("" if chk is None else f" · ⛔ longer than the {chk.model.max_tokens:,}-token input limit of "
                      f"{md_escape(chk.model.name)} (“model tokens”: {md_escape(chk.tokenizer)}"
                      + ("" if chk.exact else ", an estimate") + ")"))

    ch = c.chunks[idx]
    pos = st.session_state.get("cs_insp_pos")
    if pos is None or not ch.start <= pos < ch.end:  # where we are, for a switch of chunking (a jump's offset
        st.session_state["cs_insp_pos"] = ch.start   # stays while its chunk is shown)
    problems = highlight.Problems.of(c)
    with guard("The chunk facts"):
        pages = sorted({p for p in (doc.page_of(ch.start), doc.page_of(max(ch.start, ch.end - 1))) if p})
        path = doc.chunk_heading_path(ch.start, ch.end)
        st.html(f'<div style="font-size:1.15rem;font-weight:700">{swatch(cid)} · chunk #{idx + 1} of {n}</div>')
        m1, m2, m3 = st.columns(3)
        m1.metric("tokens", ch.tokens, help=f"size bounds {lo}–{hi} (o200k tokens)")
        m2.metric("characters", f"{ch.end - ch.start:,}", help=f"characters {ch.start:,}–{ch.end:,} of the text")
        m3.metric("pages", "–" if not pages else (f"{pages[0]}" if pages[0] == pages[-1] else f"{pages[0]}–{pages[-1]}"))
        st.caption(f"Characters {ch.start:,}–{ch.end:,} of the document's text.")  # too long for a metric: it was cut
        if doc.geometry is not None and st.button("📄 Show on the page", key="cs_insp_page_view",
                                                  help="open the page view with this chunk selected"):
            from chunkscope.present.pdfpages import first_page_of
            from ui.pdfview import open_page_view

            open_page_view(first_page_of(doc, ch.start, ch.end), cid, idx)
        crumbs = " › ".join(html.escape(h.title) or "(untitled)" for h in path) or "— (before the first heading)"
        st.html(f'<div style="margin:.2rem 0 .6rem 0"><b>Heading path:</b> {crumbs}</div>')
        if ch.tokens < lo or ch.tokens > hi:
            st.warning(f"Out of size: {ch.tokens} tokens is {'under' if ch.tokens < lo else 'over'} the "
                       f"{lo}–{hi} bounds.")
        chk = limits.check(doc, c)
        if chk is not None and idx in set(chk.over):
            st.warning(f"⛔ Over the input limit of {md_escape(chk.model.name)}: {chk.counts[idx]:,} "
                       f"{md_escape(chk.tokenizer)} > {chk.model.max_tokens:,}; the model embeds only the beginning "
                       "of this chunk.")
        elif chk is not None:
            st.caption(f"Fits {md_escape(chk.model.name)}: {chk.counts[idx]:,} of {chk.model.max_tokens:,} "
                       f"{md_escape(chk.tokenizer)}.")

    left, right = st.columns([3, 2])
    with left, guard("The chunk text"):
        st.subheader("Text", anchor=False)
        a, b = max(0, ch.start - CONTEXT), min(len(doc.text), ch.end + CONTEXT)
        with st.container(height=560):
            st.html(highlight.highlight_html(doc.text, c, a, b, problems, block_kinds=[bl.kind for bl in doc.blocks],
                                       color=figures.chunker_color(cid), dim_outside=(ch.start, ch.end)))
        st.caption("The chunk with a little dimmed context on both sides; marks as on the Compare page.")
    with right:
        with guard("The blocks table"):
            st.subheader("Blocks", anchor=False)
            starts = [bl.start for bl in doc.blocks]
            j0 = max(0, bisect.bisect_right(starts, ch.start) - 1)
            inside, cut = [], []
            for j in range(j0, len(doc.blocks)):
                bl = doc.blocks[j]
                if bl.start >= ch.end:
                    break
                if bl.end <= ch.start:
                    continue
                (inside if ch.start <= bl.start and bl.end <= ch.end else cut).append((j, bl))
            broken_at = {x["index"] for x in problems.broken if x["boundary"] in (ch.start, ch.end)}
            st.write(f"{counted(len(inside), 'whole block')} inside; {counted(len(cut), 'block')} cut at this "
                     f"chunk's edges ({len(broken_at)} beyond the BI tolerance).")
            rows = [{"block": f"#{j + 1}", "kind": kind_word(bl.kind), "chars": f"{bl.start:,}–{bl.end:,}",
                     "here": ("cut, broken" if j in broken_at else "cut") if (j, bl) in cut else "inside"}
                    for j, bl in cut + inside]
            if rows:  # widths that fit the right-hand column at 1400 px ("paragraph group", "17,144–17,647")
                st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=min(300, 38 + 35 * len(rows)),
                             column_config={
                                 "block": st.column_config.TextColumn(width=50),
                                 "kind": st.column_config.TextColumn(width=115),
                                 "chars": st.column_config.TextColumn(width=105, help="character offsets in the text"),
                                 "here": st.column_config.TextColumn(width=85, help=(
                                     "inside the chunk, or cut at one of its edges; broken: the cut is beyond the BI "
                                     "tolerance"))}, **MISSING)
        with guard("Cohesion"):
            st.subheader("Cohesion (ICC)", anchor=False)
            icc = next((x for x in c.diagnostics.get("ICC", {}).get("per_chunk", []) if x["chunk"] == idx), None)
            if icc is None:
                st.caption("Not scored: the chunk holds fewer than two gold blocks (or embeddings were off).")
            else:
                st.metric("cohesion", f"{icc['cohesion']:.3f}",
                          help="mean cosine of each block piece of the chunk with the whole chunk")
                pieces = icc["piece_cosines"]
                st.bar_chart(pd.DataFrame({"cosine": pieces}, index=range(1, len(pieces) + 1)), height=170,
                             x_label="block piece of the chunk, in order", y_label="cosine")
        with guard("Window coherence"):
            st.subheader("Window coherence (DCC)", anchor=False)
            wins = [w for w in c.diagnostics.get("DCC", {}).get("windows", []) if w["first"] <= idx <= w["last"]]
            if not wins:
                st.caption("In no DCC window (one chunk only, windows too small, or embeddings off).")
            else:
                st.dataframe(pd.DataFrame([{"window": f"chunks {w['first'] + 1}–{w['last'] + 1}", "tokens": w.get("tokens"),
                                            "coherence": round(w["coherence"], 3),
                                            "chunk cosine": round(w["chunk_cosines"][idx - w["first"]], 3)}
                                           for w in wins[:200]]), hide_index=True, width="stretch",
                             height=min(180, 38 + 35 * len(wins[:200])),  # no empty grid rows under one window
                             column_config={
                                 "window": st.column_config.TextColumn(width=105),
                                 "tokens": st.column_config.NumberColumn(width=60),
                                 "coherence": st.column_config.NumberColumn(width=80, help="the window's coherence"),
                                 "chunk cosine": st.column_config.NumberColumn(width=90, help=(
                                     "this chunk's cosine with the window"))}, **MISSING)
        with guard("Split pairs"):
            splits = [(k, x) for k, x in enumerate(problems.split) if x["boundary"] in (ch.start, ch.end)]
            if splits:
                st.subheader("Entity–pronoun pairs split at this chunk's edges", anchor=False)
                st.dataframe(pd.DataFrame([{
                    "pair": highlight.pair_tag(x, k), "entity": doc.text[x["entity"][0]:x["entity"][1]].strip()[:80],
                    "pronoun": doc.text[x["pronoun"][0]:x["pronoun"][1]].strip(), "cut at": x["boundary"]}
                    for k, x in splits]), hide_index=True, width="stretch", **MISSING)


with guard("The Chunk inspector"):
    main()
