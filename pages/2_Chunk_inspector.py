"""Chunk inspector: one chunk's text, tokens, pages, heading path, blocks, cohesion and coherence."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import viz
from ui.analysis import keep_state
from ui.page import require_report

st.set_page_config(page_title="Chunk inspector · ChunkScope", page_icon="🔎", layout="wide")
keep_state()
st.title("Chunk inspector")

doc, report = require_report()
ok_ids = [c.id for c in report.ranked]
if not ok_ids:
    st.info("No chunking produced spans for this document.")
    st.stop()
c1, c2, c3 = st.columns([1.3, 1, 1.3])
cid = c1.selectbox("Chunking", ok_ids, index=ok_ids.index(report.winner) if report.winner in ok_ids else 0,
                   key="cs_insp_chunking")
c = report.get(cid)
n = len(c.chunks)
offset = c3.number_input("…or jump to the chunk holding character", 0, max(0, len(doc.text) - 1), 0,
                         key="cs_insp_offset")
if st.session_state.get("cs_insp_last_offset") != offset:
    st.session_state["cs_insp_last_offset"] = offset
    hit = next((i for i, ch in enumerate(c.chunks) if ch.start <= offset < ch.end), None)
    if hit is not None and offset:
        st.session_state["cs_insp_idx"] = hit
st.session_state["cs_insp_idx"] = min(st.session_state.get("cs_insp_idx", 0), n - 1)
idx = c2.number_input(f"Chunk (0–{n - 1})", 0, n - 1, key="cs_insp_idx")
ch = c.chunks[idx]
problems = viz.Problems.of(c)

pages = sorted({p for p in (doc.page_of(ch.start), doc.page_of(max(ch.start, ch.end - 1))) if p})
path = " › ".join(h.title for h in doc.heading_path(ch.start)) or "—"
m1, m2, m3, m4 = st.columns(4)
lo, hi = report.settings.get("min_tokens", 100), report.settings.get("max_tokens", 1100)
m1.metric("tokens", ch.tokens, help=f"size bounds {lo}–{hi}")
m2.metric("characters", ch.end - ch.start)
m3.metric("pages", "–" if not pages else (f"{pages[0]}" if len(pages) == 1 or pages[0] == pages[-1] else f"{pages[0]}–{pages[-1]}"))
m4.metric("span", f"{ch.start:,}–{ch.end:,}")
st.markdown(f"**Heading path:** {path}")
if ch.tokens < lo or ch.tokens > hi:
    st.warning(f"Out of size: {ch.tokens} tokens is {'under' if ch.tokens < lo else 'over'} the {lo}–{hi} bounds.")

left, right = st.columns([3, 2])
with left:
    st.subheader("Text")
    with st.container(height=520):
        st.html(viz.highlight_html(doc.text, c, ch.start, ch.end, problems))
with right:
    st.subheader("Blocks")
    inside, cut = [], []
    for j, bl in enumerate(doc.blocks):
        if bl.end <= ch.start or bl.start >= ch.end:
            continue
        (inside if ch.start <= bl.start and bl.end <= ch.end else cut).append((j, bl))
    broken_here = [x for x in problems.broken if x["chunk"] in (idx, idx + 1) and ch.start <= x["boundary"] <= ch.end]
    st.write(f"{len(inside)} whole blocks inside; {len(cut)} blocks cut at this chunk's edges.")
    if cut:
        st.dataframe(pd.DataFrame([{"block": j, "kind": bl.kind, "start": bl.start, "end": bl.end,
                                    "broken (beyond tolerance)": any(x["index"] == j for x in broken_here)}
                                   for j, bl in cut]), hide_index=True, width="stretch")
    st.subheader("Cohesion (ICC)")
    icc = next((x for x in c.diagnostics.get("ICC", {}).get("per_chunk", []) if x["chunk"] == idx), None)
    if icc is None:
        st.caption("Not scored: the chunk holds fewer than two gold blocks.")
    else:
        st.metric("cohesion", f"{icc['cohesion']:.3f}", help="mean cosine of each block piece with the whole chunk")
        st.bar_chart(pd.DataFrame({"cosine": icc["piece_cosines"]}), height=160)
    st.subheader("Window coherence (DCC)")
    wins = [w for w in c.diagnostics.get("DCC", {}).get("windows", []) if w["first"] <= idx <= w["last"]]
    if not wins:
        st.caption("In no DCC window (one chunk only, or windows too small).")
    else:
        st.dataframe(pd.DataFrame([{"window": f"chunks {w['first']}–{w['last']}", "tokens": w.get("tokens"),
                                    "window coherence": round(w["coherence"], 3),
                                    "this chunk's cosine": round(w["chunk_cosines"][idx - w["first"]], 3)}
                                   for w in wins]), hide_index=True, width="stretch")
    splits = [x for x in problems.split if x["chunk"] in (idx, idx + 1) and ch.start <= x["boundary"] <= ch.end]
    if splits:
        st.subheader("Split entity–pronoun pairs at this chunk's edges")
        for x in splits:
            ent = doc.text[x["entity"][0]:x["entity"][1]].strip()
            pro = doc.text[x["pronoun"][0]:x["pronoun"][1]].strip()
            st.markdown(f"- “{ent[:80]}” ← “{pro}” (boundary at `{x['boundary']}`)")
