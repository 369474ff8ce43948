"""Corpus: adaptive chunking over many documents, the paper's tables and figures, open one in the inspector."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from chunkscope.ingest import FORMATS_IN_BRIEF
from chunkscope.sharing import ShareError, resolve_folder
from ui.analysis import keep_state, settings_sidebar
from ui.common import MISSING, md_escape
from ui.corpus import (
    RESULTS_KEY,
    UPLOAD_TYPES,
    default_results_dir,
    in_slot,
    load_view,
    max_jobs,
    open_in_inspector,
    ray_address,
    ray_available,
    run_options,
    run_with_progress,
    save_uploads,
    zip_bytes,
)
from ui.share import policy as share_policy

st.set_page_config(page_title="Corpus · ChunkScope", page_icon="📚", layout="wide")
keep_state()
st.title("Corpus")
st.caption("Run the analysis on many documents, then compare chunkers across the collection: chunk sizes (Table 2), "
           "metrics (Table 3), how often each chunker wins (Table 4), metric correlations and a per-domain view. "
           "Same engine and files as `chunkscope corpus` / `chunkscope corpus-report`.")

settings, problem = settings_sidebar()  # with the shared-server line (ui.share.banner)
if problem:
    st.sidebar.error(problem)
st.sidebar.caption("In corpus mode, precomputed mentions are picked up per document (a sibling `mentions/` folder "
                   "or `STEM.mentions.parquet|json` beside the file).")

pol = share_policy()
if pol.shared:  # no server path is typed: uploads, or a folder under the operator's root only
    choices = ["Upload files"] + ([f"Folder under {pol.corpus_root.name}/"] if pol.corpus_root else [])
else:
    choices = ["Folder on the server", "Upload files"]
mode = st.radio("Documents", choices, horizontal=True, key="cs_corpus_mode")
source = ""
if mode != "Upload files":
    folder = st.text_input("Folder (searched recursively) or glob pattern" if not pol.shared else
                           f"Folder under {pol.corpus_root.name if pol.corpus_root else ''}/ (relative path)", "",
                           key="cs_corpus_folder",
                           placeholder="/data/corpus or /data/corpus/**/*.pdf" if not pol.shared else "team/contracts")
    if folder.strip():
        try:
            p = resolve_folder(pol, folder)
        except ShareError as exc:
            st.error(str(exc))
        else:
            if p.is_dir() or (not pol.shared and any(ch in folder for ch in "*?[")):
                source = str(p) if pol.shared else folder.strip()
            else:
                st.error(f"{folder.strip()}: no such folder on the server")
else:
    uploads = st.file_uploader(f"Documents ({FORMATS_IN_BRIEF}, or a zip of them; add "
                               "STEM.mentions.json files to score RC with precomputed pairs)", type=UPLOAD_TYPES + ["zip"],
                               accept_multiple_files=True, key="cs_corpus_uploads")
    if uploads:
        try:
            source = str(save_uploads(uploads))
        except ShareError as exc:
            st.error(str(exc))

out_dir = ""
if source:
    if pol.shared:  # results go to this session's workspace, never a typed path
        out_dir = default_results_dir(source)
    else:
        out_dir = st.text_input("Results folder (re-running resumes: documents already analyzed are skipped)",
                                default_results_dir(source), key=f"cs_corpus_out_{abs(hash(source)) % 10**8}")
    e1, e2 = st.columns([2, 1])
    engines = ["This machine", "Ray"] if ray_available() else ["This machine"]
    engine = e1.radio("Run on", engines, horizontal=True, key="cs_corpus_engine",
                      help="Ray: a local Ray instance, or the cluster the operator configured (CHUNKSCOPE_RAY_ADDRESS). "
                           "Each worker loads the model once; a worker that dies has its document retried elsewhere."
                           + ("" if ray_available() else " (Ray is not installed: pip install 'chunkscope[ray]')"))
    jobs = int(e2.number_input("Workers", min_value=1, max_value=max_jobs(), value=1, step=1, key="cs_corpus_jobs",
                               help="Worker processes; each loads the embedding model (about 400 MB)."
                                    + (f" This shared server allows {max_jobs()}." if pol.shared else "")))
    if engine == "Ray":
        address = ray_address()
        st.caption(f"Ray: {f'cluster `{address}`' if address else 'a local Ray instance'} "
                   "· results must be in a folder every node can reach (see docs/corpus.md).")
    c1, c2 = st.columns([1, 3])
    run = c1.button("Run corpus", type="primary", disabled=settings is None, key="cs_corpus_run")
    if (Path(out_dir) / "summary.json").is_file():
        if c2.button("Show existing results", key="cs_corpus_show"):
            st.session_state[RESULTS_KEY] = out_dir
    if run and settings is not None:
        summary = run_with_progress(source, out_dir, settings,
                                    run_options("ray" if engine == "Ray" else "local", jobs))
        if summary is not None:
            st.session_state[RESULTS_KEY] = out_dir

results_dir = st.session_state.get(RESULTS_KEY)
if results_dir and pol.shared:
    from ui.share import session_workspace

    ws = session_workspace()
    if ws is None or ws.path.resolve() not in Path(results_dir).resolve().parents:
        results_dir = None  # another session's (or a stale) folder: never shown here
if not results_dir:
    st.info("Choose a folder or upload files, then press Run corpus.")
    st.stop()

from chunkscope.corpus import report as CR  # noqa: E402
from chunkscope.present import figures, html_report  # noqa: E402

try:
    res, f = load_view(results_dir)
except (OSError, ValueError) as exc:
    why = " ".join(str(exc).split())
    st.error(f"Cannot read the results: {why.replace(results_dir + '/', '')[:300]}" if pol.shared else
             f"Cannot read the results in {results_dir}: {why[:300]}")
    st.stop()

docs = res.documents()
c = res.summary.get("counts", {})
m1, m2, m3, m4 = st.columns(4)
m1.metric("Documents with a report", len(docs))
m2.metric("Failed", c.get("failed", 0))
m3.metric("Tokens", f"{sum(int(e.get('tokens') or 0) for e in docs):,}")
m4.metric("Global best candidate", CR.global_best(res) or "–")
st.caption(("" if pol.shared else f"Results: `{results_dir}` · ")  # a shared server's paths are not the user's
           + "'* ' marks the candidates of the adaptive policy.")
if not docs:
    st.warning("No document was analyzed successfully; see the reasons below.")
    st.dataframe(f["documents"], hide_index=True, **MISSING)
    st.stop()

tab_tables, tab_charts, tab_domains, tab_docs, tab_dl = st.tabs(
    ["Tables", "Correlations & selection", "Per domain", "Documents", "Download"])
with tab_tables:
    st.subheader("Table 3: metrics ×100 (mean ± std. dev. over documents)")
    st.dataframe(f["metrics"], hide_index=True, **MISSING)
    st.caption(md_escape(CR.comparison_note(res)) + " n: the documents each row is averaged over.")
    st.subheader("Table 2: chunk sizes (o200k tokens) and runtime")
    st.dataframe(f["chunk_sizes"].round(2), hide_index=True, **MISSING)
    st.subheader("Table 4: chunker selected by the adaptive policy")
    st.dataframe(f["selection"].round(1), hide_index=True, **MISSING)
    t4t = CR.selection_with_ties(res)
    if t4t["rows"]:
        tot = t4t["totals"]
        st.subheader("Table 4, ties counted separately")
        st.caption(f"{tot['clear']} document(s) with a clear winner (ahead of every other candidate in ≥ 95% of the "
                   f"bootstrap resamples), {tot['tie']} tie(s), broken by: "
                   + (", ".join(f"{k} {v}" for k, v in sorted(t4t["tie_breaks"].items())) or "none")
                   + (f"; {tot['no verdict']} without a verdict" if tot["no verdict"] else "")
                   + ". 'top score' is the paper's policy (highest point score).")
        st.dataframe(pd.DataFrame(t4t["rows"]).rename(columns={
            "chunker": "chunking", "top": "top score", "clear": "clear wins", "tied": "in a tie",
            "picked": "picked in a tie", "percent_clear": "% clear"}).round(1), hide_index=True, **MISSING)
    st.subheader("Significance: Wilcoxon signed-rank, adaptive vs each chunker")
    st.caption("Paired by document, two-sided. Each cell: median of (adaptive − chunker) ×100, the Holm-adjusted "
               "p-value over the chunkers of that metric, and n = documents where the adaptive choice differs.")
    st.dataframe(f["wilcoxon"], hide_index=True, **MISSING)
with tab_charts:
    st.plotly_chart(figures.corpus_correlation_figure(CR.spearman(res)), key="cs_corpus_heat")
    st.plotly_chart(figures.corpus_selection_figure(CR.selection_table(res)), key="cs_corpus_sel")
    st.plotly_chart(figures.corpus_score_figure(res), key="cs_corpus_scores")
with tab_domains:
    st.dataframe(f["domains"], hide_index=True, **MISSING)
    vd = CR.verdicts_by_domain(res)
    if vd:
        st.caption("Verdicts per domain: " + " · ".join(f"{d}: {n['clear']} clear, {n['tie']} tie"
                                                       for d, n in sorted(vd.items())))
    st.plotly_chart(figures.corpus_domain_figure(res), key="cs_corpus_dom")
    st.subheader(f"Where the adaptive choice differs most from {CR.global_best(res) or 'the global best'}")
    if f["gaps"].empty:
        st.caption("The adaptive policy picked the global best chunker for every document.")
    else:
        st.dataframe(f["gaps"], hide_index=True, **MISSING)
with tab_docs:
    st.caption("Select a document, then open it in the inspector (Compare page) with its corpus report.")
    event = st.dataframe(f["documents"], hide_index=True, on_select="rerun", selection_mode="single-row",
                         key="cs_corpus_docs", **MISSING)
    entries = res.summary.get("documents", [])
    openable = [i for i, e in enumerate(entries) if e.get("report")]
    picked = None
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if rows and rows[0] in openable:
        picked = rows[0]
    choice = st.selectbox("Document", openable, index=openable.index(picked) if picked in openable else 0,
                          format_func=lambda i: entries[i].get("rel") or entries[i].get("name"),
                          key="cs_corpus_pick") if openable else None
    if st.button("Open in inspector", disabled=choice is None, key="cs_corpus_open"):
        err = open_in_inspector(entries[choice], results_dir)
        if err:
            st.error(err)
        else:
            st.switch_page("pages/1_Compare.py")
with tab_dl:
    if st.button("Prepare the results zip", key="cs_corpus_zip_btn"):
        st.session_state["cs_corpus_zip_data"] = (results_dir, in_slot("Preparing the zip…",
                                                                      lambda: zip_bytes(results_dir)))
    if st.session_state.get("cs_corpus_zip_data", ("",))[0] == results_dir:
        st.download_button("Results (zip: reports, tidy tables, winners, summary)", st.session_state["cs_corpus_zip_data"][1],
                           file_name="chunkscope-corpus.zip", mime="application/zip", key="cs_corpus_zip_dl")
    csv = Path(results_dir) / "metrics.csv"
    if csv.is_file():
        st.download_button("Tidy metrics (CSV)", csv.read_bytes(), file_name="metrics.csv", mime="text/csv",
                           key="cs_corpus_csv")
    if st.button("Build the HTML report", key="cs_corpus_html_btn"):
        st.session_state["cs_corpus_html_data"] = (results_dir, in_slot("Building the HTML report…",
                                                                       lambda: html_report.corpus_html_report(res)))
    if st.session_state.get("cs_corpus_html_data", ("",))[0] == results_dir:
        st.download_button("HTML report (self-contained)", st.session_state["cs_corpus_html_data"][1],
                           file_name="chunkscope-corpus-report.html", mime="text/html", key="cs_corpus_html")
