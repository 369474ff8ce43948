"""Compare: two or three chunkings side by side, problems highlighted, next-problem navigation."""

from __future__ import annotations

import streamlit as st

from core import viz
from ui.analysis import keep_state
from ui.page import require_report

st.set_page_config(page_title="Compare · ChunkScope", page_icon="🔬", layout="wide")
keep_state()
st.title("Compare chunkings")

doc, report = require_report()
ok_ids = [c.id for c in report.ranked]
if not ok_ids:
    st.info("No chunking produced spans for this document.")
    st.stop()
default = ([report.winner] if report.winner else []) + [i for i in ok_ids if i != report.winner][:1]
sel = st.multiselect("Chunkings side by side (up to 3)", ok_ids, default=default, max_selections=3, key="cs_cmp_sel")
if not sel:
    st.info("Pick at least one chunking.")
    st.stop()

st.plotly_chart(viz.boundary_strip_figure(report, sel, len(doc.text)), width="stretch", key="cs_strip")
st.caption("Ticks: chunk boundaries · ✕ a boundary that breaks a block · ◆ a boundary that splits an "
           "entity–pronoun pair. Where the rows' ticks line up, the chunkings agree.")

views = viz.windows(len(doc.text), [[p.start, p.end] for p in doc.pages], cuts=doc.split_points)
labels = [f"page {i + 1}" if doc.pages else f"part {i + 1} (chars {a:,}–{b:,})" for i, (a, b) in enumerate(views)]
problems = {cid: viz.Problems.of(report.get(cid)) for cid in sel}

KINDS = {"broken blocks": "broken", "split pairs": "split", "out-of-size chunks": "size"}
c1, c2, c3, c4 = st.columns([1.4, 2, 1, 1])
kind_label = c1.radio("Problem kind", list(KINDS), horizontal=False, key="cs_cmp_kind")
kind = KINDS[kind_label]


def positions(cid: str) -> list[int]:
    if kind == "size":
        c = report.get(cid)
        return [c.chunks[i].start for i in problems[cid].out_of_size]
    return problems[cid].positions(kind)


def view_of(pos: int) -> int:
    for i, (a, b) in enumerate(views):
        if a <= pos < b:
            return i
    return len(views) - 1


marks = sorted({view_of(p) for cid in sel for p in positions(cid)})
st.session_state.setdefault("cs_cmp_view", 0)
st.session_state["cs_cmp_view"] = min(st.session_state["cs_cmp_view"], len(views) - 1)
if c3.button("◀ previous problem", disabled=not marks, key="cs_prev_problem"):
    before = [m for m in marks if m < st.session_state["cs_cmp_view"]]
    st.session_state["cs_cmp_view"] = before[-1] if before else marks[-1]
if c4.button("next problem ▶", disabled=not marks, key="cs_next_problem"):
    after = [m for m in marks if m > st.session_state["cs_cmp_view"]]
    st.session_state["cs_cmp_view"] = after[0] if after else marks[0]
view = c2.selectbox("Part of the document", range(len(views)), format_func=lambda i: labels[i]
                    + ("  ⚠" if i in marks else ""), key="cs_cmp_view")
a, b = views[view]
st.caption(f"{len(marks)} of {len(views)} parts hold {kind_label} for the selected chunkings (marked ⚠).")

cols = st.columns(len(sel))
for col, cid in zip(cols, sel):
    c = report.get(cid)
    p = problems[cid]
    with col:
        st.markdown(f"**{cid}** · score {c.score:.3f}" if c.score is not None else f"**{cid}**")
        st.caption(f"{len(c.chunks)} chunks · {len(p.broken)} broken blocks · {len(p.split)} split pairs · "
                   f"{len(p.out_of_size)} out-of-size chunks")
        with st.container(height=640):
            st.html(viz.highlight_html(doc.text, c, a, b, p))
        here_b = [x for x in p.broken if x["block"][0] < b and x["block"][1] > a]
        here_s = [x for x in p.split if a <= min(x["entity"][0], x["pronoun"][0]) < b]
        if here_b or here_s:
            with st.expander(f"Problems in this part ({len(here_b)} blocks, {len(here_s)} pairs)"):
                for x in here_b:
                    st.markdown(f"- block `{x['block'][0]}–{x['block'][1]}` broken at `{x['boundary']}` "
                                f"(chunk {x['chunk']} {x['side']})")
                for n, x in enumerate(here_s):
                    ent = doc.text[x["entity"][0]:x["entity"][1]].strip()
                    pro = doc.text[x["pronoun"][0]:x["pronoun"][1]].strip()
                    st.markdown(f"- pair **P{p.split.index(x) + 1}**: “{ent[:60]}” ← “{pro}” split at `{x['boundary']}`")
st.caption("Chunks alternate two tints; `#n` marks where chunk n starts (red when that boundary breaks a block "
           "or the chunk is out of size ⚠). Wavy red underline: a broken block. Pink: the entity and the pronoun "
           "of a split pair, tagged P1, P2… at both ends. Hover anything for details.")
