"""The retrieval check in the app: the Overview's Retrieval section (questions, run, leaderboard,
recall-vs-budget chart, weight in the adaptive score) and the Compare page's per-question view.

The engine computes everything (``chunkscope.retrieval``); this module asks for questions, calls
``evaluate`` on the report's chunkings (no re-chunking, no re-embedding of the document), stores
the block on the report (``report.retrieval``: exports include it) and draws it.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import streamlit as st

from chunkscope.analysis import rescore
from chunkscope.document import Document
from chunkscope.present import figures
from chunkscope.report import Report
from ui import keys
from ui.common import MISSING, guard, md_escape, short_error
from ui.overview import swatch

WEIGHT_KEY = "cs_ret_weight"


def _run(doc: Document, report: Report, qs: Any, retriever: str, k: int, budget: int) -> None:
    from chunkscope.retrieval.retrievers import dense_from_resources
    from chunkscope.retrieval.run import Config, chunkings_from_report, evaluate
    from ui.analysis import session_resources

    cfg = Config(retriever=retriever, k=int(k), budget=int(budget))
    dense = None
    if retriever in ("dense", "hybrid"):
        s = report.settings
        dense = dense_from_resources(session_resources(s.get("embedder"), s.get("embedding_mode", "composed")), doc)
    with st.spinner(f"Retrieving for {len(qs.questions)} questions × {len(report.ranked)} chunkings…"):
        res = evaluate(doc.text, chunkings_from_report(report), qs, cfg, dense, doc.language)
    report.retrieval = res.to_dict()
    apply_weight(report)


def apply_weight(report: Report) -> None:
    """Re-rank with the section's retrieval weight (0 = off: the metrics alone)."""
    w = float(st.session_state.get(WEIGHT_KEY, 0.0) or 0.0)
    if report.retrieval is None:
        w = 0.0
    if float(report.settings.get("retrieval_weight") or 0.0) != w:
        rescore(report, retrieval_weight=w)


def _questions(doc: Document, source: str, n: int, upload: Any) -> Any:
    """The QuestionSet asked for, or None after one st.error line."""
    from chunkscope.llm import LLMError
    from chunkscope.retrieval.questions import QuestionsError, read_questions

    try:
        if source == "upload":
            if upload is None:
                st.error("Upload a questions file (CSV or JSONL) first.")
                return None
            return read_questions(upload.getvalue(), upload.name, doc.text, doc.name, _raw_text(doc))
        if source == "self-test":
            from chunkscope.retrieval.selftest import self_test

            qs = self_test(doc, int(n))
            if not qs.questions:
                st.error(md_escape("; ".join(qs.problems) or "no proxy question could be made"))
                return None
            return qs
        from chunkscope.llm import LLMClient
        from chunkscope.retrieval.generate import generate
        from ui.analysis import llm_settings

        s = llm_settings()
        if not s.configured:
            st.error("No LLM endpoint configured: set one in the sidebar (LLM endpoint), or use the self-test.")
            return None
        qs = generate(doc.text, doc.sha256, int(n), LLMClient(s))
        if not qs.questions:
            st.error(md_escape("No generated question could be verified: " + "; ".join(qs.problems[:2])))
            return None
        return qs
    except QuestionsError as exc:
        st.error(md_escape(str(exc)))
    except LLMError as exc:
        st.error(f"Questions: {md_escape(short_error(exc, 300))}")
    return None


def _raw_text(doc: Document) -> str | None:
    """The document's file text as uploaded (spans in a questions file may refer to it), if at hand."""
    from chunkscope.retrieval.questions import raw_text_of, raw_text_of_bytes
    from ui.common import ASSETS, accepted_upload

    try:
        up = accepted_upload()
        if up is not None:
            return raw_text_of_bytes(up.getvalue(), up.name)
        name = st.session_state.get(keys.SAMPLE)
        if name and (ASSETS / name).is_file():
            raw = raw_text_of(ASSETS / name)
            return raw if raw is not None and len(raw) >= len(doc.text) // 2 else None
    except OSError:  # an unreadable sample
        return None
    return None


def run_check(doc: Document, report: Report, source: str, n: int, upload: Any, retriever: str, k: int,
              budget: int) -> bool:
    """The Run button: get the questions, run the check on the report's chunkings; False after one error line."""
    try:
        qs = _questions(doc, source, n, upload)
        if qs is None:
            return False
        _run(doc, report, qs, retriever, k, budget)
    except Exception as exc:  # the button's boundary: a retriever, the LLM client or the embedder may raise
        st.error(f"Retrieval check failed: {md_escape(short_error(exc, 300))}")  # anything; one line
        return False
    return True


def section(doc: Document, report: Report) -> None:
    """The Overview's Retrieval section."""
    st.subheader("Retrieval check", anchor=False)
    st.caption("Does each chunking let a retriever find the evidence? Questions with evidence (a file, generated "
               "by the LLM endpoint, or the offline self-test) are run against every chunking; recall is the share "
               "of evidence characters in the retrieved chunks, within a token budget so large chunks do not win by "
               "containing everything. See docs/retrieval.md.")
    with st.form("cs_ret_form", border=True):
        c1, c2, c3, c4, c5 = st.columns([1.6, 1.3, 0.9, 0.7, 0.9])
        source = c1.radio("Questions", ["self-test", "upload", "generate"], horizontal=True, key="cs_ret_source",
                          help="self-test: offline proxy questions made from the document (salient terms of a "
                               "sentence; its text is the evidence). upload: CSV/JSONL with question + evidence "
                               "(spans or quotes; Chroma's questions_df.csv as is). generate: N questions from the "
                               "LLM endpoint, every quote verified.")
        n = c2.number_input("N (self-test / generate)", 1, 500, 30, 5, key="cs_ret_n")
        retriever = c3.selectbox("Retriever", ["bm25", "dense", "hybrid"], key="cs_ret_retriever")
        k = c4.number_input("k", 1, 50, 5, 1, key="cs_ret_k")
        budget = c5.number_input("Budget (tokens)", 50, 100_000, 1000, 250, key="cs_ret_budget")
        upload = st.file_uploader("Questions file (CSV or JSONL)", type=["csv", "jsonl", "json", "tsv"],
                                  key="cs_ret_upload")
        go = st.form_submit_button("Run retrieval check", type="primary", key="cs_ret_run")
    failed = go and not run_check(doc, report, source, n, upload, retriever, k, budget)
    if go and not failed:
        st.rerun()  # the leaderboard and the winner card above show the new column / weight
    block = report.retrieval
    if not block:
        st.caption("No retrieval check for this analysis yet: pick a question source and press Run.")
        return
    if failed:  # the error above is about the new run; what follows is not its result
        st.warning("**Not updated**: the new run did not complete (the error above), so the results below are still "
                   "those of the previous run.", icon="⏮")
    render_block(block, report)


def same_chunks(report: Report, ids: list[str]) -> list[list[str]]:
    """Groups (of two or more) of ``ids`` whose chunkings have exactly the same chunks (``Report.same_chunks``):
    their retrieval results, and their curves, coincide."""
    first = report.same_chunks()  # id -> the first chunking with the same chunks
    groups: dict[str, list[str]] = {}
    for c in report.ok_chunkings(ids):
        groups.setdefault(first.get(c.id, c.id), []).append(c.id)
    return [g for g in groups.values() if len(g) > 1]


def render_block(block: dict[str, Any], report: Report | None = None) -> None:
    from chunkscope.retrieval.run import leaderboard, note_lines

    src = block["question_source"]
    proxy = src["source"] == "self-test"
    label = (f"**{src['used']} questions** from {src['source']}"
             + (f" ({md_escape(src['info'].get('file', ''))})" if src.get("info", {}).get("file") else "")
             + f" · retriever **{block['retriever']}** · k {block['k']} · budget {block['budget']} tokens")
    (st.warning if proxy else st.info)(
        label + (" · **SELF-TEST: proxy questions made from the document itself, not real questions**" if proxy else ""),
        icon="🧪" if proxy else "🔎")
    if src.get("skipped_other_documents"):
        st.caption(f"{src['skipped_other_documents']} row(s) about other documents skipped (corpus_id).")
    if src.get("problems"):
        with st.expander(f"⚠ {len(src['problems'])} problem(s) with the questions (those rows are left out)"):
            st.code("\n".join(src["problems"][:500]), language=None)
    rows = leaderboard(block)
    df = pd.DataFrame(rows)
    fmt = {c: "{:.3f}" for c in df.columns if c not in ("chunking", "chunks", "mean tokens")}
    fmt["mean tokens"] = "{:.0f}"
    if report is not None:  # the same marks as the leaderboard: 🏆 adaptive winner, ◆ candidate
        cands = set(report.settings.get("candidates") or [])
        df.insert(0, "", ["🏆" if r["chunking"] == report.winner else ("◆" if r["chunking"] in cands else "")
                          for r in rows])
    st.dataframe(df.style.format(fmt, na_rep="–"), hide_index=True, width="stretch", key="cs_ret_table", **MISSING)
    st.caption(f"Sorted by recall@budget (evidence recall when chunks are taken in rank order until {block['budget']} "
               "tokens; the last one cut at the budget). full@budget: share of questions with all their evidence "
               f"retrieved. @{block['k']}: the top {block['k']} chunks, whatever their size. precision Ω@{block['k']}: "
               "precision when retrieving as many chunks as hold evidence (it depends on the retriever). Per "
               "question: the Compare page.")
    for n in note_lines(block):
        st.caption(f"note: {md_escape(n)}")
    ids = [r["chunking"] for r in rows]
    left, right = st.columns([2, 1])
    with left, guard("The recall-vs-budget chart"):
        st.plotly_chart(figures.retrieval_curve_figure(block, ids), width="stretch", key="cs_ret_curve")
        for group in same_chunks(report, ids) if report is not None else []:
            st.caption("Same chunks, so one curve: " + md_escape(" = ".join(group)))
    with right:
        st.slider("Weight of retrieval recall in the adaptive score (0 = off)", 0.0, 3.0, step=0.25,
                  key=WEIGHT_KEY, help="Budgeted recall joins the weighted mean of the five metrics as one more term "
                                       "with this weight; the winner card and leaderboard re-rank.")
        st.caption("At 0 the five metrics alone make the scores; but where they cannot tell the top candidates "
                   "apart (too close to call), a check on real questions breaks the tie and may change the winner "
                   "(tie-break `auto`; the winner card says so). A self-test (proxy) check only looks: it breaks "
                   "ties only with a weight or tie-break `retrieval`. With a weight, the score is "
                   "(Σ wₘ·metric + w·recall@budget) / (Σ wₘ + w).")


# ----------------------------------------------------------------------------- Compare: per question

def _snippet(text: str, a: int, b: int, evidence: list[list[int]], limit: int = 700) -> str:
    """The chunk [a, b) as HTML with every evidence excerpt it holds marked (a long chunk: a window
    around each excerpt, the windows that meet merged, "…" where text is left out)."""
    from chunkscope.retrieval.metrics import union

    ev = union([(max(a, s), min(b, e)) for s, e in evidence])
    if b - a <= limit:
        windows = [(a, b)]
    elif ev:  # the context left by the excerpts, shared among them, on both sides of each
        pad = max(60, (limit - sum(e - s for s, e in ev)) // (2 * len(ev)))
        windows = union([(max(a, s - pad), min(b, e + pad)) for s, e in ev])
    else:
        windows = [(a, a + limit)]
    parts = []
    for lo, hi in windows:
        out, pos = [], lo
        for s, e in ev:
            s, e = max(s, lo), min(e, hi)
            if e <= s:
                continue
            out.append(html.escape(text[pos:s]))
            out.append(f'<mark style="background:rgba(0,158,115,.35)">{html.escape(text[s:e])}</mark>')
            pos = e
        out.append(html.escape(text[pos:hi]))
        parts.append("".join(out))
    pre = "… " if windows[0][0] > a else ""
    post = " …" if windows[-1][1] < b else ""
    return f'<div style="white-space:pre-wrap;font-size:.85rem">{pre}{" … ".join(parts)}{post}</div>'


def evidence_places(doc: Document, evidence: list[list[int]]) -> str:
    """Where each evidence excerpt lies: its characters, page and heading path ("chars 10–50, page 2, Intro")."""
    where = []
    for s, e in evidence:
        page = doc.page_of(s)
        path = " › ".join(h.title for h in doc.heading_path(s))[:120]
        where.append(f"chars {s:,}–{e:,}" + (f", page {page}" if page else "") + (f", {path}" if path else ""))
    return " · ".join(where)


def _pick_question(block: dict[str, Any], rows: dict[str, Any], ids: list[str]) -> tuple[int, bool] | None:
    """The question chosen (its index) and whether the retrieved set is the budgeted one; None (with a caption)
    when no question is left to show."""
    qs = block["questions"]
    mode = st.radio("Retrieved set", [f"within the budget ({block['budget']} tokens)", f"top {block['k']}"],
                    horizontal=True, key="cs_ret_q_mode")
    use_budget = mode.startswith("within")

    def recall_of(cid: str, qi: int) -> float:
        pq = rows[cid]["per_question"][qi]
        return (pq["budget"] if use_budget else pq)["recall"]

    def label(qi: int) -> str:
        marks = " ".join(f"{recall_of(c, qi):.0%}" for c in ids)
        return f"Q{qi + 1}: {qs[qi]['question'][:90]} — recall {marks}"

    only = st.checkbox("Only questions where the chosen chunkings disagree", key="cs_ret_q_diff")
    pool = [i for i in range(len(qs)) if not only or len({round(recall_of(c, i), 3) for c in ids}) > 1]
    if not pool:
        st.caption("The chosen chunkings retrieve the same share of evidence for every question.")
        return None
    if st.session_state.get("cs_ret_q") not in pool:
        st.session_state["cs_ret_q"] = pool[0]
    return st.selectbox("Question", pool, format_func=label, key="cs_ret_q"), use_budget


def _retrieved_html(report: Report, cid: str, rank: int, item: list[Any], cidx: int | None,
                    evidence: list[list[int]]) -> str:
    """One retrieved chunk's head line: rank, chunk number, score, characters, cut at the budget, holds evidence."""
    s, e, score = item
    hit = any(min(e, b) > max(s, a) for a, b in evidence)
    full = cidx is not None and (s, e) != tuple(c_span(report, cid, cidx) or (s, e))
    return (f'<div style="margin-top:.4em;font-size:.85rem"><b>rank {rank + 1}</b> · chunk '
            f'#{cidx + 1 if cidx is not None else "?"} · score {score:.3f} · chars {s:,}–{e:,}'
            f'{" · cut at the budget" if full else ""} {"✅ holds evidence" if hit else ""}</div>')


def _retrieved_column(doc: Document, report: Report, cid: str, c: dict[str, Any], qi: int, use_budget: bool,
                      evidence: list[list[int]]) -> None:
    """What chunking ``cid`` retrieved for question ``qi`` (rank, score, text) and the evidence it missed."""
    pq = c["per_question"][qi]
    got = pq["budget"] if use_budget else pq
    chunk_ids = got.get("chunk_ids") or pq.get("chunk_ids") or []
    rank_of = {i: r for i, r in pq.get("evidence_chunks", [])}
    st.html(f'<div style="font-weight:700">{swatch(cid)}</div>')
    st.caption(f"recall **{got['recall']:.0%}** · precision {got['precision']:.3f} · IoU {got['iou']:.3f} · "
               f"{c['chunks']} chunks, mean {c['mean_tokens']:.0f} tokens")
    holders = ", ".join(f"#{i + 1} (rank {r})" for i, r in rank_of.items()) or "none"  # numbered from 1
    st.caption(f"Evidence lies in chunk(s) {holders}")
    with st.container(height=460):
        for r, item in enumerate(got["retrieved"]):
            cidx = chunk_ids[r] if r < len(chunk_ids) else None
            st.html(_retrieved_html(report, cid, r, item, cidx, evidence))
            st.html(_snippet(doc.text, item[0], item[1], evidence))
    if got["missed"]:
        miss = " · ".join(f"“{md_escape(doc.text[a:b][:120])}”" for a, b in got["missed"])
        st.error(f"Missed evidence: {miss}", icon="❌")
    else:
        st.success("All the evidence was retrieved.", icon="✅")


def per_question(doc: Document, report: Report, ids: list[str]) -> None:
    """The question, where its evidence is, what each chunking retrieved (rank, score) and what it missed."""
    block = report.retrieval
    st.subheader("Retrieval, question by question", anchor=False)
    if not block:
        st.caption("No retrieval check for this analysis: run one in the Retrieval section of the Overview.")
        return
    qs = block["questions"]
    rows = {c["id"]: c for c in block["chunkings"]}
    default = [i for i in ids if i in rows] or list(rows)[:2]
    if any(i not in rows for i in st.session_state.get("cs_ret_q_ids", [])):
        st.session_state.pop("cs_ret_q_ids", None)
    ids = st.multiselect("Chunkings to compare on one question (default: the ones above)", list(rows),
                         default=default, max_selections=3, key="cs_ret_q_ids") or default
    if not qs:
        st.caption("The retrieval check has no question.")
        return
    picked = _pick_question(block, rows, ids)
    if picked is None:
        return
    qi, use_budget = picked
    q = qs[qi]
    ev = q["evidence"]
    proxy = " (self-test proxy: salient terms of the evidence)" if q.get("source") == "self-test" else ""
    st.markdown(f"**Q{qi + 1}{proxy}:** {md_escape(q['question'])}")
    with st.container(border=True):
        st.caption("Evidence — " + md_escape(evidence_places(doc, ev)))  # heading titles are document text
        for s, e in ev:
            st.html(f'<div style="font-size:.9rem;border-left:3px solid #009E73;padding-left:.5em;margin:.2em 0">'
                    f'{html.escape(doc.text[s:e])}</div>')
    for col, cid in zip(st.columns(len(ids)), ids):
        with col, guard(f"The {cid} column"):
            _retrieved_column(doc, report, cid, rows[cid], qi, use_budget, ev)


def c_span(report: Report, cid: str, i: int) -> tuple[int, int] | None:
    """Chunk ``i`` of chunking ``cid`` as (start, end); None when there is no such chunk."""
    c = report.get(cid)
    if c is None or i >= len(c.chunks):
        return None
    return c.chunks[i].start, c.chunks[i].end
