"""Compare: two or three chunkings side by side, problems highlighted, next-problem navigation.

The question it answers: *where exactly* does a chunking break a table or split "it" from its
antecedent? Pick a problem kind, step through the problems with ◀ / ▶ and every column shows
the same stretch of the document, the current problem ringed in yellow.
"""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from chunkscope.ingest.health import blame
from chunkscope.present import figures, highlight, paging
from chunkscope.text.blocks import KIND_NOTES, kind_word
from ui import limits
from ui.analysis import keep_state, widget_default
from ui.common import MISSING, counted, counted_pairs, guard, md_escape, scroll_to_here
from ui.overview import radar_ids, swatch
from ui.page import require_report

st.set_page_config(page_title="Compare · ChunkScope", page_icon="🔬", layout="wide")
keep_state()
st.title("Compare chunkings")

KINDS = {"broken blocks": "broken", "split pairs": "split", "out-of-size chunks": "size"}
BEFORE, AFTER = 300, 1500  # characters shown before and after the current problem
MAX_FOCUS = 6000  # a huge broken block is shown from its start up to this many characters


def _step(n: int, delta: int) -> None:
    """◀ / ▶: move to the previous / next problem (wrapping), in the view shown (its surroundings, or the
    page holding it)."""
    if n:
        i = st.session_state.get("cs_cmp_pi", -1)
        st.session_state["cs_cmp_pi"] = (i + delta) % n if i >= 0 else (0 if delta > 0 else n - 1)


def _focus_range(text: str, a: int, b: int) -> tuple[int, int]:
    """Characters to show around a problem [a, b): some context on both sides, starting and
    ending on a line break when one is in the context."""
    lo, hi = max(0, a - BEFORE), min(len(text), min(b, a + MAX_FOCUS) + AFTER)
    nl = text.find("\n", lo, a)
    if lo > 0 and nl != -1:
        lo = nl + 1
    nl = text.rfind("\n", min(b, a + MAX_FOCUS), hi)
    if hi < len(text) and nl != -1:
        hi = nl
    return lo, hi


def main() -> None:
    doc, report = require_report()
    ok_ids = [c.id for c in report.ranked]
    if not ok_ids:
        st.info("No chunking produced spans for this document.")
        return
    if any(i not in ok_ids for i in st.session_state.get("cs_cmp_sel", [])):
        st.session_state.pop("cs_cmp_sel", None)
    sel = st.multiselect("Chunkings side by side (up to 3; the winner and the runner-up first)", ok_ids,
                         default=widget_default("cs_cmp_sel", radar_ids(report)), max_selections=3, key="cs_cmp_sel")
    if not sel:
        st.info("Pick at least one chunking.")
        return
    chunkings = {cid: report.get(cid) for cid in sel}
    problems = {cid: highlight.Problems.of(c) for cid, c in chunkings.items()}
    kinds = [b.kind for b in doc.blocks]
    views = paging.document_views(doc)

    c1, c2, c3, c4 = st.columns([1.5, 1.6, 0.8, 0.8])
    counts: dict[str, int | str] = {k: sum(len(problems[cid].positions(v, chunkings[cid])) for cid in sel)
                                    for k, v in KINDS.items()}
    no_pairs = not any(problems[cid].pairs_checked for cid in sel)  # RC not computed: no pair was looked for
    if no_pairs:
        counts["split pairs"] = "not computed"
    kind_label = c1.radio("Problem kind", list(KINDS), key="cs_cmp_kind",
                          format_func=lambda k: f"{k} ({counts[k]})")
    kind = KINDS[kind_label]
    # every problem of this kind in the selected chunkings, in document order
    items = sorted(((a, b, cid, n) for cid in sel
                    for n, (a, b) in enumerate(problems[cid].spans(kind, chunkings[cid]))),
                   key=lambda x: (x[0], sel.index(x[2])))
    sig = (doc.sha256, kind, tuple(sel))
    if st.session_state.get("cs_cmp_sig") != sig:
        st.session_state["cs_cmp_sig"] = sig
        st.session_state["cs_cmp_pi"] = 0 if items else -1
    pi = st.session_state.get("cs_cmp_pi", -1)
    if pi >= len(items):
        pi = st.session_state["cs_cmp_pi"] = len(items) - 1
    c3.button("◀ previous problem", disabled=not items, key="cs_prev_problem", on_click=_step,
              args=(len(items), -1), width="stretch")
    c4.button("next problem ▶", disabled=not items, key="cs_next_problem", on_click=_step,
              args=(len(items), 1), width="stretch")
    mode = c2.radio("Show", ["around the current problem", "a whole page / part"], key="cs_cmp_mode",
                    horizontal=True, disabled=not items)
    current = items[pi] if items and pi >= 0 else None
    def at(item) -> int:
        """Where a problem is: a broken block's cut (its start is often a screen or a page before:
        blocks go on over page breaks), else its start."""
        if kind == "broken":
            return int(problems[item[2]].broken[item[3]].get("boundary", item[0]))
        return int(item[0])

    here = at(current) if current is not None else None  # the "▶ here" tag, the scroll, the strip's line

    with guard("The boundary strip"):
        a_view = None
        if current is not None and mode.startswith("around"):
            a_view = _focus_range(doc.text, current[0], current[1])
            if here is not None and not a_view[0] <= here < a_view[1]:  # a huge block cut far from its start
                a_view = _focus_range(doc.text, here, here + 1)
        st.plotly_chart(figures.boundary_strip_figure(report, sel, len(doc.text), view=a_view,
                                                  focus=here),
                        width="stretch", key="cs_strip")
        st.caption("Ticks: chunk boundaries (one row per chunking, in its colour) · ✕ a boundary that breaks a block "
                   "· ◆ a boundary that splits an entity–pronoun pair · yellow line: the current problem. "
                   "Where the rows' ticks line up, the chunkings agree.")

    line = None
    if current is not None:
        cid, n = current[2], current[3]
        page = doc.page_of(here)
        # the page of "▶ here": where the cut falls (a block's characters may start pages before it)
        where = (f"page {page}, " if kind == "size" else f"cut on page {page}, ") if page else ""
        if kind == "broken":
            x = problems[cid].broken[n]
            j = x.get("index", 0)
            k = kinds[j] if j < len(kinds) else ""
            what = (f"**{md_escape(cid)}** cuts {kind_word(k) if k else 'a'} block #{j + 1} "
                    + (f"({KIND_NOTES[k]}, " if k in KIND_NOTES else "(")
                    + f"chars {x['block'][0]:,}–{x['block'][1]:,}) at character {x['boundary']:,}" + held_note(x))
        elif kind == "split":
            x = problems[cid].split[n]
            ent = doc.text[x["entity"][0]:x["entity"][1]]
            pro = doc.text[x["pronoun"][0]:x["pronoun"][1]]
            conf = _confidence(report, x)
            what = (f"**{md_escape(cid)}** splits pair **{highlight.pair_tag(x, n)}**: “{md_escape(pro[:40])}” from its antecedent "
                    f"“{md_escape(ent[:60])}” at character {x['boundary']:,}"
                    + (f" (pair confidence {conf['confidence']:.2f})" if conf else "") + held_note(x))
        else:
            i = sorted(problems[cid].out_of_size)[n]
            o = problems[cid].out_of_size[i]
            what = (f"**{md_escape(cid)}** chunk #{i + 1} has {chunkings[cid].chunks[i].tokens:,} tokens "
                    f"({o.get('kind', 'out of')}-size)")
        line = f"Problem {pi + 1} of {len(items)} ({where}chars {current[0]:,}–{current[1]:,}): {what}."
    if current is not None and mode.startswith("around"):
        st.session_state.pop("cs_cmp_view_for", None)  # the next "whole page" opens this problem's page
        a, b = a_view
        st.info(line, icon="🎯")
    else:
        marks = {paging.view_index(views, at(it)) for it in items}
        if current is not None and st.session_state.get("cs_cmp_view_for") != (sig, pi):
            # opening the whole page: the one holding the current problem (then the reader may move on)
            st.session_state["cs_cmp_view_for"] = (sig, pi)
            st.session_state["cs_cmp_view"] = paging.view_index(views, here)
        labels = [v.label + ("  ⚠" if i in marks else "") for i, v in enumerate(views)]
        if st.session_state.get("cs_cmp_view", 0) >= len(views):
            st.session_state["cs_cmp_view"] = 0
        vi = st.selectbox("Part of the document", range(len(views)), format_func=lambda i: labels[i],
                          key="cs_cmp_view")
        a, b = views[vi].start, views[vi].end
        if line and a <= here < b:
            st.info(line, icon="🎯")  # ◀ / ▶ step through the problems page by page
        if kind == "split" and no_pairs:
            why = (report.coref or {}).get("reason") or "no coreference backend ran"
            st.caption(f"Split pairs are not computed for this document: {md_escape(why)}.")
        else:
            st.caption(f"{len(marks)} of {len(views)} parts hold {kind_label} for the selected chunkings (marked ⚠).")

    cols = st.columns(len(sel))
    for col, cid in zip(cols, sel):
        with col, guard(f"The {cid} column"):
            column(doc, report, cid, chunkings[cid], problems[cid], kinds, a, b, show=(kind, "size"),
                   focus=(current[0], current[1]) if current is not None and current[2] == cid else None, here=here)
    if current is not None:
        scroll_to_here(here, (a, b), sel, current[2])  # every column to the problem's place (a whole page is long)
    st.caption("Chunks alternate two tints; a bar in the chunker's colour and `#n` mark where chunk n starts "
               "(red with ✂ when that boundary breaks a block, purple with ⛓ when it splits a pair, ⚠ when the "
               "chunk is out of size). A broken block is outlined and hatched in red and tagged “✂ broken <kind>”. "
               "The entity and the pronoun of a split pair share a colour and a P-tag. The problem kind chosen above "
               "is the one highlighted. Hover anything for details.")
    with guard("The per-question retrieval view"):
        from ui.retrieval import per_question

        per_question(doc, report, sel)


def over_limit_line(doc, c) -> None:
    """Chunks longer than the input limit of the user's embedding model (sidebar), if one is set."""
    chk = limits.check(doc, c)
    if chk is None:
        return
    where = ", ".join(f"#{i + 1}" for i in chk.over[:12]) + (" …" if len(chk.over) > 12 else "")
    (st.warning if chk.over else st.caption)(
        f"⛔ **{len(chk.over)}** chunks over the {chk.model.max_tokens:,}-token limit of {md_escape(chk.model.name)}"
        + (f" ({where})" if chk.over else "") + f" · counted in {md_escape(chk.tokenizer)}"
        + ("" if chk.exact else " (estimate)"))


def column(doc, report, cid, c, p: highlight.Problems, kinds, a: int, b: int, show, focus, here=None) -> None:
    score = f" · score {c.score:.3f}" if c.score is not None else ""
    win = " 🏆" if cid == report.winner else ""
    st.html(f'<div style="font-weight:700;font-size:1.05rem">{swatch(cid)}{win}'
            f'<span style="font-weight:400;opacity:.8">{html.escape(score)}</span></div>')
    st.caption(" · ".join([counted(len(c.chunks), "chunk"), counted(len(p.broken), "broken block"),
                           counted_pairs(p.split_count()), counted(len(p.out_of_size), "out-of-size chunk")]))
    over_limit_line(doc, c)
    cov = c.audit.get("summary") if c.audit else None
    if cov:
        (st.caption if c.audit.get("ok", True) else st.warning)(f"Coverage: {cov}")
    with st.container(height=600):
        st.html(highlight.highlight_html(doc.text, c, a, b, p, show=show, block_kinds=kinds, focus=focus,
                                         color=figures.chunker_color(cid), here=here))
    here_b = [(n, x) for n, x in enumerate(p.broken) if x["block"][0] < b and x["block"][1] > a]
    here_s = [(n, x) for n, x in enumerate(p.split)
              if a <= min(x["entity"][0], x["pronoun"][0]) < b or a <= max(x["entity"][0], x["pronoun"][0]) < b]
    if here_b or here_s:
        with st.expander(f"Problems shown here: {counted(len(here_b), 'broken block')}, "
                         f"{counted_pairs(len(here_s) if p.pairs_checked else None)}"):
            if here_b:
                st.dataframe(pd.DataFrame([{
                    "block": f"#{x.get('index', 0) + 1}", "kind": kind_word(kinds[x["index"]]) if x.get("index") is not None
                    and x["index"] < len(kinds) else "", **held_column(x, here_b),
                    "chars": f"{x['block'][0]:,}–{x['block'][1]:,}", "cut at": x["boundary"],
                    "page": doc.page_of(x["boundary"]), "boundaries inside": x.get("boundaries_inside"),
                    "blame": blame(doc, x["block"], x["boundary"]) or "chunker"}
                    for _, x in here_b]),
                    hide_index=True, width="stretch", column_config={
                        "whole in": st.column_config.TextColumn(
                            help="The chunk that holds the whole block (overlapping chunks); the cut still counts"),
                        "blame": st.column_config.TextColumn(
                            help="Who cut the block: the chunker, or the extraction (a running page header or "
                                 "footer the PDF put in the middle of it)")}, **MISSING)
            if here_s:
                st.dataframe(pd.DataFrame([{
                    "pair": highlight.pair_tag(x, n), "pronoun": doc.text[x["pronoun"][0]:x["pronoun"][1]].strip(),
                    **held_column(x, here_s), "entity": doc.text[x["entity"][0]:x["entity"][1]].strip()[:80],
                    "cut at": x["boundary"], "page": doc.page_of(x["pronoun"][0])} | _confidence(report, x)
                    for n, x in here_s]),
                    hide_index=True, width="stretch", **MISSING)


def held_note(x) -> str:
    """For an overlapping chunking: the chunk that holds the problem whole (``held_by``, checked by
    ``highlight.Problems.of``), and that it is still counted (the paper's BI and RC count every boundary
    inside, overlap or not)."""
    h = x.get("held_by")
    if h is None:
        return ""
    return f" — chunk #{h + 1} holds it whole thanks to the overlap, but the paper's metric still counts the cut"


def held_column(x, rows) -> dict[str, str]:
    """The "whole in" cell of a problem table: the chunk holding the problem whole; no column when none does."""
    if all(y.get("held_by") is None for _, y in rows):
        return {}
    h = x.get("held_by")
    return {"whole in": f"#{h + 1}" if h is not None else ""}


def _confidence(report, x) -> dict[str, float]:
    """The coreference backend's confidence in a split pair, when it gives one (learned heuristic)."""
    scores = (report.coref or {}).get("scores") or []
    j = x.get("pair")
    return {"confidence": scores[j]} if isinstance(j, int) and j < len(scores) and scores[j] is not None else {}


with guard("The Compare page"):
    main()
