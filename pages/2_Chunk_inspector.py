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

from chunkscope.analysis.settings import size_bounds
from chunkscope.document import Document
from chunkscope.present import figures, highlight, inspector
from chunkscope.report import ChunkingResult, ChunkRow, Report
from chunkscope.text.blocks import kind_word
from ui import limits
from ui.analysis import keep_state, widget_default
from ui.common import MISSING, counted, guard, md_escape
from ui.overview import swatch
from ui.page import require_ranked_report

st.set_page_config(page_title="Chunk inspector · ChunkScope", page_icon="🔎", layout="wide")
keep_state()
st.title("Chunk inspector")

CONTEXT = 400  # characters of dimmed context shown around the chunk


@st.cache_data(show_spinner=False, max_entries=16)
def chunk_table(key: str, _doc: Document, _c: ChunkingResult) -> pd.DataFrame:
    """One row per chunk (cached per document, chunking and what scored it)."""
    return pd.DataFrame([{
        "#": r.number, "tokens": r.chunk.tokens, "pages": r.pages, "heading": r.heading,
        "cohesion": r.cohesion,  # NaN: "–" (MISSING)
        "flags": " ".join(_flags(r)), "starts with": r.starts_with, "start": r.chunk.start, "end": r.chunk.end,
    } for r in inspector.chunk_rows(_doc, _c)])


def _flags(r: inspector.InspectorRow) -> list[str]:
    """A row's flags: ⚠ out of size, ✂ blocks cut at its edges, ⛓ pairs split there."""
    flags = [f"⚠ {r.size}"] if r.size else []
    if r.blocks_cut:
        flags.append(f"✂ {counted(r.blocks_cut, 'block')} cut" + (f" ({r.cut_by})" if r.cut_by else ""))
    if r.pairs_split:
        flags.append(f"⛓ {counted(r.pairs_split, 'pair')} split")
    return flags


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


def _pick(report: Report, ok_ids: list[str], text_length: int) -> tuple[str, ChunkingResult, int]:
    """The chunking and chunk picked (chunking box, ◀ / ▶, chunk number, character offset): (id, chunking, index)."""
    if st.session_state.get("cs_insp_chunking") not in ok_ids:
        st.session_state.pop("cs_insp_chunking", None)
    c1, c2, c3 = st.columns([1.4, 1.6, 1.2])
    cid = c1.selectbox("Chunking", ok_ids, index=widget_default(
                       "cs_insp_chunking", ok_ids.index(report.winner) if report.winner in ok_ids else 0),
                       key="cs_insp_chunking", format_func=lambda i: i + (" 🏆" if i == report.winner else ""),
                       on_change=_chunking_changed, args=(report,),
                       help="Switching keeps your place in the document: the chunk holding the same text opens.")
    c = report.get(cid)
    assert c is not None  # one of ok_ids
    n = len(c.chunks)
    st.session_state["cs_insp_no"] = max(1, min(int(st.session_state.get("cs_insp_no", 1)), n))
    c3.number_input("…or the chunk holding character", 0, max(0, text_length - 1), 0, key="cs_insp_offset",
                    on_change=_jump, args=(c,))
    with c2:
        b1, b2, b3 = st.columns([1, 2, 1], vertical_alignment="bottom")
        b1.button("◀", key="cs_insp_prev", on_click=_step, args=(n, -1), disabled=n < 2, help="previous chunk")
        idx = int(b2.number_input(f"Chunk (1–{n})", 1, max(1, n), key="cs_insp_no")) - 1
        b3.button("▶", key="cs_insp_next", on_click=_step, args=(n, 1), disabled=n < 2, help="next chunk")
    return cid, c, idx


def _table_section(doc: Document, report: Report, cid: str, c: ChunkingResult, lo: int, hi: int) -> None:
    """The chunk table (click a row to inspect it), with the user's embedding model's token counts when set."""
    # the flags and cohesion come from the diagnostics: key on what they depend on too
    # (same spans under another BI tolerance, mentions file or embedder flag differently)
    scored_by = {k: report.settings.get(k) for k in ("bi_tolerance", "coref", "mentions", "embedder",
                                                      "embedding_mode", "min_tokens", "max_tokens")}
    key = hashlib.sha256(repr((doc.sha256, cid, [(x.start, x.end) for x in c.chunks], sorted(scored_by.items()),
                               sorted(c.metrics.items(), key=lambda kv: kv[0]))).encode()).hexdigest()
    df = chunk_table(key, doc, c)
    chk = limits.check(doc, c)  # the user's embedding model (sidebar), if one is set
    if chk is not None:
        df = df.copy()
        df.insert(2, "model tokens", chk.counts)
        over = set(chk.over)
        df["flags"] = [(f + " " if f else "") + (f"⛔ over {chk.model.max_tokens:,}" if i in over else "")
                       for i, f in enumerate(df["flags"])]
        df["flags"] = df["flags"].str.strip()
    tkey = f"cs_insp_table_{key[:12]}"
    st.dataframe(df, hide_index=True, width="stretch", height=min(260, 38 + 35 * len(df)), key=tkey,
                 on_select=lambda: _picked(tkey), selection_mode="single-row",
                 column_config={"cohesion": st.column_config.NumberColumn(
                     format="%.3f", help="ICC's cohesion of the chunk; – where the chunk lies within one "
                     "block (ICC scores only chunks that span two or more blocks)"),
                                "starts with": st.column_config.TextColumn(width="large")}, **MISSING)
    st.caption(f"{len(c.chunks)} chunks of {md_escape(cid)}: click a row to inspect it · ⚠ out of the {lo}–{hi} "
               "token bounds · ✂ a boundary of this chunk breaks a block · ⛓ it splits an entity–pronoun pair"
               + ("" if chk is None else f" · ⛔ longer than the {chk.model.max_tokens:,}-token input limit of "
                  f"{md_escape(chk.model.name)} (“model tokens”: {md_escape(chk.tokenizer)}"
                  + ("" if chk.exact else ", an estimate") + ")"))


def _facts_section(doc: Document, cid: str, c: ChunkingResult, idx: int, problems: highlight.Problems,
                   bounds: tuple[int, int]) -> None:
    """The chunk's number, tokens, characters, pages, heading path, size and model-limit warnings."""
    ch, n, (lo, hi) = c.chunks[idx], len(c.chunks), bounds
    st.html(f'<div style="font-size:1.15rem;font-weight:700">{swatch(cid)} · chunk #{idx + 1} of {n}</div>')
    m1, m2, m3 = st.columns(3)
    m1.metric("tokens", ch.tokens, help=f"size bounds {lo}–{hi} (o200k tokens)")
    m2.metric("characters", f"{ch.end - ch.start:,}", help=f"characters {ch.start:,}–{ch.end:,} of the text")
    m3.metric("pages", inspector.pages_label(doc.pages_of(ch.start, ch.end)))
    st.caption(f"Characters {ch.start:,}–{ch.end:,} of the document's text.")  # too long for a metric: it was cut
    if doc.geometry is not None and st.button("📄 Show on the page", key="cs_insp_page_view",
                                              help="open the page view with this chunk selected"):
        from chunkscope.present.pdfpages import first_page_of
        from ui.pdfview import open_page_view

        open_page_view(first_page_of(doc, ch.start, ch.end), cid, idx)
    path = doc.chunk_heading_path(ch.start, ch.end)
    crumbs = " › ".join(html.escape(h.title) or "(untitled)" for h in path) or "— (before the first heading)"
    st.html(f'<div style="margin:.2rem 0 .6rem 0"><b>Heading path:</b> {crumbs}</div>')
    oos = problems.out_of_size.get(idx)
    if oos is not None:
        st.warning(f"Out of size: {ch.tokens} tokens is {oos.kind} the {lo}–{hi} bounds.")
    chk = limits.check(doc, c)
    if chk is not None and idx in set(chk.over):
        st.warning(f"⛔ Over the input limit of {md_escape(chk.model.name)}: {chk.counts[idx]:,} "
                   f"{md_escape(chk.tokenizer)} > {chk.model.max_tokens:,}; the model embeds only the beginning "
                   "of this chunk.")
    elif chk is not None:
        st.caption(f"Fits {md_escape(chk.model.name)}: {chk.counts[idx]:,} of {chk.model.max_tokens:,} "
                   f"{md_escape(chk.tokenizer)}.")


def _text_section(doc: Document, cid: str, c: ChunkingResult, ch: ChunkRow, problems: highlight.Problems) -> None:
    """The chunk's text, highlighted as on the Compare page, with a little dimmed context on both sides."""
    st.subheader("Text", anchor=False)
    a, b = max(0, ch.start - CONTEXT), min(len(doc.text), ch.end + CONTEXT)
    with st.container(height=560):
        st.html(highlight.highlight_html(doc.text, c, a, b, problems, block_kinds=[bl.kind for bl in doc.blocks],
                                         color=figures.chunker_color(cid), dim_outside=(ch.start, ch.end)))
    st.caption("The chunk with a little dimmed context on both sides; marks as on the Compare page.")


def _blocks_section(doc: Document, ch: ChunkRow, problems: highlight.Problems) -> None:
    """The blocks inside the chunk and those its edges cut (broken: beyond the BI tolerance)."""
    st.subheader("Blocks", anchor=False)
    inside, cut = inspector.blocks_of(doc, ch)
    broken_at = inspector.broken_at_edges(problems, ch)
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


def _cohesion_section(c: ChunkingResult, idx: int) -> None:
    """ICC's cohesion of the chunk and the cosine of each of its block pieces."""
    st.subheader("Cohesion (ICC)", anchor=False)
    icc = inspector.cohesion_of(c, idx)
    if icc is None:
        st.caption("Not scored: the chunk holds fewer than two gold blocks (or embeddings were off).")
        return
    st.metric("cohesion", f"{icc.cohesion:.3f}", help="mean cosine of each block piece of the chunk with the whole chunk")
    pieces = icc.piece_cosines
    st.bar_chart(pd.DataFrame({"cosine": pieces}, index=range(1, len(pieces) + 1)), height=170,
                 x_label="block piece of the chunk, in order", y_label="cosine")


def _coherence_section(c: ChunkingResult, idx: int) -> None:
    """The DCC windows holding the chunk: each window's coherence and the chunk's cosine with it."""
    st.subheader("Window coherence (DCC)", anchor=False)
    wins = inspector.windows_of(c, idx)[:200]
    if not wins:
        st.caption("In no DCC window (one chunk only, windows too small, or embeddings off).")
        return
    st.dataframe(pd.DataFrame([{"window": f"chunks {w.first + 1}–{w.last + 1}", "tokens": w.tokens,
                                "coherence": round(w.coherence, 3),
                                "chunk cosine": round(w.chunk_cosines[idx - w.first], 3)}
                               for w in wins]), hide_index=True, width="stretch",
                 height=min(180, 38 + 35 * len(wins)),  # no empty grid rows under one window
                 column_config={
                     "window": st.column_config.TextColumn(width=105),
                     "tokens": st.column_config.NumberColumn(width=60),
                     "coherence": st.column_config.NumberColumn(width=80, help="the window's coherence"),
                     "chunk cosine": st.column_config.NumberColumn(width=90, help=(
                         "this chunk's cosine with the window"))}, **MISSING)


def _pairs_section(doc: Document, ch: ChunkRow, problems: highlight.Problems) -> None:
    """The entity–pronoun pairs split at the chunk's edges."""
    splits = inspector.split_at_edges(problems, ch)
    if splits:
        st.subheader("Entity–pronoun pairs split at this chunk's edges", anchor=False)
        st.dataframe(pd.DataFrame([{
            "pair": highlight.pair_tag(x, k), "entity": doc.text[x.entity[0]:x.entity[1]].strip()[:80],
            "pronoun": doc.text[x.pronoun[0]:x.pronoun[1]].strip(), "cut at": x.boundary}
            for k, x in splits]), hide_index=True, width="stretch", **MISSING)


def main() -> None:
    """The page: pick a chunking and a chunk, then the table, the facts, the text and the chunk's metrics."""
    got = require_ranked_report()
    if got is None:
        return
    doc, report, ok_ids = got
    cid, c, idx = _pick(report, ok_ids, len(doc.text))
    lo, hi = size_bounds(report.settings)
    with guard("The chunk table"):
        _table_section(doc, report, cid, c, lo, hi)
    ch = c.chunks[idx]
    pos = st.session_state.get("cs_insp_pos")
    if pos is None or not ch.start <= pos < ch.end:  # where we are, for a switch of chunking (a jump's offset
        st.session_state["cs_insp_pos"] = ch.start   # stays while its chunk is shown)
    problems = highlight.Problems.of(c)
    with guard("The chunk facts"):
        _facts_section(doc, cid, c, idx, problems, (lo, hi))
    left, right = st.columns([3, 2])
    with left, guard("The chunk text"):
        _text_section(doc, cid, c, ch, problems)
    with right:
        with guard("The blocks table"):
            _blocks_section(doc, ch, problems)
        with guard("Cohesion"):
            _cohesion_section(c, idx)
        with guard("Window coherence"):
            _coherence_section(c, idx)
        with guard("Split pairs"):
            _pairs_section(doc, ch, problems)


with guard("The Chunk inspector"):
    main()
