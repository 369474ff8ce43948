"""Compare: two or three chunkings side by side, problems highlighted, next-problem navigation.

The question it answers: *where exactly* does a chunking break a table or split "it" from its
antecedent? Pick a problem kind, step through the problems with ◀ / ▶ and every column shows
the same stretch of the document, the current problem ringed in yellow.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from chunkscope.document import Document
from chunkscope.ingest.health import blame
from chunkscope.metrics import BrokenBlock, SplitPair
from chunkscope.present import figures, highlight, paging
from chunkscope.report import ChunkingResult, Report
from chunkscope.text.blocks import KIND_NOTES, kind_word
from ui import limits
from ui.analysis import keep_state, widget_default
from ui.common import MISSING, counted, counted_pairs, guard, md_escape, scroll_to_here
from ui.overview import radar_ids, swatch
from ui.page import require_ranked_report

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


Item = tuple[int, int, str, int]  # a problem: (start, end, chunking id, its place in that chunking's list)


@dataclass
class _Shown:
    """What the page shows: the chunkings side by side, their problems, the problem kind and the current problem."""

    doc: Document
    report: Report
    sel: list[str]
    chunkings: dict[str, ChunkingResult]
    problems: dict[str, highlight.Problems]
    kind: str = "broken"
    items: list[Item] = field(default_factory=list)  # every problem of this kind, in document order
    pi: int = -1  # the current problem's place in ``items`` (-1: none)

    @property
    def current(self) -> Item | None:
        """The current problem, if any."""
        return self.items[self.pi] if self.items and self.pi >= 0 else None

    def place(self, item: Item) -> int:
        """Where a problem is: a broken block's cut (its start is often a screen or a page before:
        blocks go on over page breaks), else its start."""
        if self.kind == "broken":
            return self.problems[item[2]].broken[item[3]].boundary
        return int(item[0])


def _selection(report: Report, ok_ids: list[str]) -> list[str]:
    """The chunkings picked to be shown side by side (the winner and the runner-up first)."""
    if any(i not in ok_ids for i in st.session_state.get("cs_cmp_sel", [])):
        st.session_state.pop("cs_cmp_sel", None)
    return st.multiselect("Chunkings side by side (up to 3; the winner and the runner-up first)", ok_ids,
                          default=widget_default("cs_cmp_sel", radar_ids(report)), max_selections=3, key="cs_cmp_sel")


def _pick_kind(col: Any, sh: _Shown) -> str:
    """The problem kind radio, each kind with its count (split pairs "not computed" without RC); its label."""
    counts: dict[str, int | str] = {k: sum(len(sh.problems[cid].positions(v, sh.chunkings[cid])) for cid in sh.sel)
                                    for k, v in KINDS.items()}
    if _no_pairs(sh):
        counts["split pairs"] = "not computed"
    return col.radio("Problem kind", list(KINDS), key="cs_cmp_kind", format_func=lambda k: f"{k} ({counts[k]})")


def _no_pairs(sh: _Shown) -> bool:
    """RC was computed for none of the chunkings shown: no pair was looked for."""
    return not any(sh.problems[cid].pairs_checked for cid in sh.sel)


def _find_problems(sh: _Shown) -> None:
    """Every problem of the kind in the chunkings shown, in document order, and the current one (the first when
    the kind or the chunkings changed)."""
    sh.items = sorted(((a, b, cid, n) for cid in sh.sel
                       for n, (a, b) in enumerate(sh.problems[cid].spans(sh.kind, sh.chunkings[cid]))),
                      key=lambda x: (x[0], sh.sel.index(x[2])))
    sig = (sh.doc.sha256, sh.kind, tuple(sh.sel))
    if st.session_state.get("cs_cmp_sig") != sig:
        st.session_state["cs_cmp_sig"] = sig
        st.session_state["cs_cmp_pi"] = 0 if sh.items else -1
    sh.pi = st.session_state.get("cs_cmp_pi", -1)
    if sh.pi >= len(sh.items):
        sh.pi = st.session_state["cs_cmp_pi"] = len(sh.items) - 1


def _strip(sh: _Shown, around: bool, here: int | None) -> tuple[int, int] | None:
    """The boundary strip (zoomed on the current problem's surroundings when ``around``); those surroundings."""
    a_view = None
    current = sh.current
    if current is not None and around:
        a_view = _focus_range(sh.doc.text, current[0], current[1])
        if here is not None and not a_view[0] <= here < a_view[1]:  # a huge block cut far from its start
            a_view = _focus_range(sh.doc.text, here, here + 1)
    with guard("The boundary strip"):
        st.plotly_chart(figures.boundary_strip_figure(sh.report, sh.sel, len(sh.doc.text), view=a_view, focus=here),
                        width="stretch", key="cs_strip")
        st.caption("Ticks: chunk boundaries (one row per chunking, in its colour) · ✕ a boundary that breaks a block "
                   "· ◆ a boundary that splits an entity–pronoun pair · yellow line: the current problem. "
                   "Where the rows' ticks line up, the chunkings agree.")
    return a_view


def _problem_line(sh: _Shown, item: Item, here: int) -> str:
    """"Problem i of n (page, chars): what it is." for the current problem."""
    cid, n = item[2], item[3]
    page = sh.doc.page_of(here)
    # the page of "▶ here": where the cut falls (a block's characters may start pages before it)
    where = (f"page {page}, " if sh.kind == "size" else f"cut on page {page}, ") if page else ""
    if sh.kind == "broken":
        what = _broken_what(sh, cid, sh.problems[cid].broken[n])
    elif sh.kind == "split":
        what = _split_what(sh, cid, sh.problems[cid].split[n], n)
    else:
        i = sorted(sh.problems[cid].out_of_size)[n]
        o = sh.problems[cid].out_of_size[i]
        what = (f"**{md_escape(cid)}** chunk #{i + 1} has {sh.chunkings[cid].chunks[i].tokens:,} tokens "
                f"({o.kind or 'out of'}-size)")
    return f"Problem {sh.pi + 1} of {len(sh.items)} ({where}chars {item[0]:,}–{item[1]:,}): {what}."


def _broken_what(sh: _Shown, cid: str, x: BrokenBlock) -> str:
    """What a broken block is: the chunking, the block's kind, number and characters, where it is cut."""
    kinds = [b.kind for b in sh.doc.blocks]
    j = x.index or 0
    k = kinds[j] if j < len(kinds) else ""
    return (f"**{md_escape(cid)}** cuts {kind_word(k) if k else 'a'} block #{j + 1} "
            + (f"({KIND_NOTES[k]}, " if k in KIND_NOTES else "(")
            + f"chars {x.block[0]:,}–{x.block[1]:,}) at character {x.boundary:,}" + held_note(x))


def _split_what(sh: _Shown, cid: str, x: SplitPair, n: int) -> str:
    """What a split pair is: the chunking, the pair's tag, its two mentions, where it is cut."""
    ent = sh.doc.text[x.entity[0]:x.entity[1]]
    pro = sh.doc.text[x.pronoun[0]:x.pronoun[1]]
    conf = _confidence(sh.report, x)
    return (f"**{md_escape(cid)}** splits pair **{highlight.pair_tag(x, n)}**: “{md_escape(pro[:40])}” from its "
            f"antecedent “{md_escape(ent[:60])}” at character {x.boundary:,}"
            + (f" (pair confidence {conf['confidence']:.2f})" if conf else "") + held_note(x))


def _whole_part(sh: _Shown, kind_label: str, line: str | None, here: int | None) -> tuple[int, int]:
    """The part of the document picked (a page, or a part of a document without pages), opening on the current
    problem's; its character range."""
    views = paging.document_views(sh.doc)
    marks = {paging.view_index(views, sh.place(it)) for it in sh.items}
    at = (st.session_state.get("cs_cmp_sig"), sh.pi)
    if here is not None and st.session_state.get("cs_cmp_view_for") != at:
        # opening the whole page: the one holding the current problem (then the reader may move on)
        st.session_state["cs_cmp_view_for"] = at
        st.session_state["cs_cmp_view"] = paging.view_index(views, here)
    labels = [v.label + ("  ⚠" if i in marks else "") for i, v in enumerate(views)]
    if st.session_state.get("cs_cmp_view", 0) >= len(views):
        st.session_state["cs_cmp_view"] = 0
    vi = st.selectbox("Part of the document", range(len(views)), format_func=lambda i: labels[i], key="cs_cmp_view")
    a, b = views[vi].start, views[vi].end
    if line and here is not None and a <= here < b:
        st.info(line, icon="🎯")  # ◀ / ▶ step through the problems page by page
    if sh.kind == "split" and _no_pairs(sh):
        why = (sh.report.coref or {}).get("reason") or "no coreference backend ran"
        st.caption(f"Split pairs are not computed for this document: {md_escape(why)}.")
    else:
        st.caption(f"{len(marks)} of {len(views)} parts hold {kind_label} for the selected chunkings (marked ⚠).")
    return a, b


def _columns(sh: _Shown, a: int, b: int, here: int | None) -> None:
    """One column per chunking shown: ``[a, b)`` highlighted, the current problem ringed in its chunking's."""
    kinds = [bl.kind for bl in sh.doc.blocks]
    current = sh.current
    for col, cid in zip(st.columns(len(sh.sel)), sh.sel):
        with col, guard(f"The {cid} column"):
            column(sh.doc, sh.report, cid, sh.chunkings[cid], sh.problems[cid], kinds, a, b, show=(sh.kind, "size"),
                   focus=(current[0], current[1]) if current is not None and current[2] == cid else None, here=here)
    if current is not None and here is not None:
        scroll_to_here(here, (a, b), sh.sel, current[2])  # every column to the problem's place (a whole page is long)
    st.caption("Chunks alternate two tints; a bar in the chunker's colour and `#n` mark where chunk n starts "
               "(red with ✂ when that boundary breaks a block, purple with ⛓ when it splits a pair, ⚠ when the "
               "chunk is out of size). A broken block is outlined and hatched in red and tagged “✂ broken <kind>”. "
               "The entity and the pronoun of a split pair share a colour and a P-tag. The problem kind chosen above "
               "is the one highlighted. Hover anything for details.")


def main() -> None:
    """The page: pick chunkings and a problem kind, step through the problems, every column at the same place."""
    got = require_ranked_report()
    if got is None:
        return
    doc, report, ok_ids = got
    sel = _selection(report, ok_ids)
    if not sel:
        st.info("Pick at least one chunking.")
        return
    chunkings = {cid: c for cid in sel if (c := report.get(cid)) is not None}
    sh = _Shown(doc, report, sel, chunkings, {cid: highlight.Problems.of(c) for cid, c in chunkings.items()})
    c1, c2, c3, c4 = st.columns([1.5, 1.6, 0.8, 0.8])
    kind_label = _pick_kind(c1, sh)
    sh.kind = KINDS[kind_label]
    _find_problems(sh)
    n = len(sh.items)
    c3.button("◀ previous problem", disabled=not n, key="cs_prev_problem", on_click=_step, args=(n, -1),
              width="stretch")
    c4.button("next problem ▶", disabled=not n, key="cs_next_problem", on_click=_step, args=(n, 1), width="stretch")
    mode = c2.radio("Show", ["around the current problem", "a whole page / part"], key="cs_cmp_mode",
                    horizontal=True, disabled=not n)
    current = sh.current
    here = sh.place(current) if current is not None else None  # the "▶ here" tag, the scroll, the strip's line
    around = current is not None and mode.startswith("around")
    a_view = _strip(sh, around, here)
    line = _problem_line(sh, current, here) if current is not None and here is not None else None
    if around and a_view is not None:
        st.session_state.pop("cs_cmp_view_for", None)  # the next "whole page" opens this problem's page
        a, b = a_view
        st.info(line, icon="🎯")
    else:
        a, b = _whole_part(sh, kind_label, line, here)
    _columns(sh, a, b, here)
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


def column(doc: Document, report: Report, cid: str, c: ChunkingResult, p: highlight.Problems, kinds: list[str],
           a: int, b: int, show: tuple[str, ...], focus: tuple[int, int] | None, here: int | None = None) -> None:
    """One chunking's column: its name and counts, ``[a, b)`` highlighted, the problems shown there in tables."""
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
    _problems_here(doc, report, p, kinds, a, b)


def _problems_here(doc: Document, report: Report, p: highlight.Problems, kinds: list[str], a: int, b: int) -> None:
    """The broken blocks and split pairs of ``p`` shown in ``[a, b)``, in an expander with a table for each."""
    here_b = [(n, x) for n, x in enumerate(p.broken) if x.block[0] < b and x.block[1] > a]
    here_s = [(n, x) for n, x in enumerate(p.split)
              if a <= x.start < b or a <= max(x.entity[0], x.pronoun[0]) < b]
    if here_b or here_s:
        with st.expander(f"Problems shown here: {counted(len(here_b), 'broken block')}, "
                         f"{counted_pairs(len(here_s) if p.pairs_checked else None)}"):
            if here_b:
                st.dataframe(pd.DataFrame([{
                    "block": f"#{(x.index or 0) + 1}", "kind": kind_word(kinds[x.index]) if x.index is not None
                    and x.index < len(kinds) else "", **held_column(x, here_b),
                    "chars": f"{x.block[0]:,}–{x.block[1]:,}", "cut at": x.boundary,
                    "page": doc.page_of(x.boundary), "boundaries inside": x.boundaries_inside,
                    "blame": blame(doc, x.block, x.boundary) or "chunker"}
                    for _, x in here_b]),
                    hide_index=True, width="stretch", column_config={
                        "whole in": st.column_config.TextColumn(
                            help="The chunk that holds the whole block (overlapping chunks); the cut still counts"),
                        "blame": st.column_config.TextColumn(
                            help="Who cut the block: the chunker, or the extraction (a running page header or "
                                 "footer the PDF put in the middle of it)")}, **MISSING)
            if here_s:
                st.dataframe(pd.DataFrame([{
                    "pair": highlight.pair_tag(x, n), "pronoun": doc.text[x.pronoun[0]:x.pronoun[1]].strip(),
                    **held_column(x, here_s), "entity": doc.text[x.entity[0]:x.entity[1]].strip()[:80],
                    "cut at": x.boundary, "page": doc.page_of(x.pronoun[0])} | _confidence(report, x)
                    for n, x in here_s]),
                    hide_index=True, width="stretch", **MISSING)


def held_note(x) -> str:
    """For an overlapping chunking: the chunk that holds the problem whole (``held_by``, checked by
    ``highlight.Problems.of``), and that it is still counted (the paper's BI and RC count every boundary
    inside, overlap or not)."""
    h = x.held_by
    if h is None:
        return ""
    return f" — chunk #{h + 1} holds it whole thanks to the overlap, but the paper's metric still counts the cut"


def held_column(x, rows) -> dict[str, str]:
    """The "whole in" cell of a problem table: the chunk holding the problem whole; no column when none does."""
    if all(y.held_by is None for _, y in rows):
        return {}
    h = x.held_by
    return {"whole in": f"#{h + 1}" if h is not None else ""}


def _confidence(report, x) -> dict[str, float]:
    """The coreference backend's confidence in a split pair, when it gives one (learned heuristic)."""
    scores = (report.coref or {}).get("scores") or []
    j = x.pair
    return {"confidence": scores[j]} if isinstance(j, int) and j < len(scores) and scores[j] is not None else {}


with guard("The Compare page"):
    main()
