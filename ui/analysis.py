"""Streamlit side of an analysis: settings sidebar, cached resources, running with progress.

Shared by app.py and every page. Settings live in ``st.session_state`` under ``cs_*`` keys
(kept alive across pages by ``keep_state()``); raw reports are cached per document and
settings, and re-ranked in place when only weights or candidates change (no re-embedding).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import streamlit as st

from chunkscope.analysis import DEFAULT_CANDIDATES, STAGES, Resources, Settings, analyze, rescore
from chunkscope.document import Document
from chunkscope.report import METRICS, Report

REPORTS_KEY = "cs_reports"
VARIANTS_KEY = "cs_variants"  # {name: {"chunker": id, "params": {...}}} promoted on the Tune page
SETTINGS_KEY = "cs_settings_now"  # the sidebar's Settings of this run (None when invalid)
_WIDGETS = ("cs_sample", "cs_min_tokens", "cs_max_tokens", "cs_bi_tol", "cs_win_tokens", "cs_win_step", "cs_chunkers",
            "cs_candidates", "cs_embedder", "cs_mode", "cs_coref", "cs_llm_url", "cs_llm_model",
            *(f"cs_w_{m}" for m in METRICS))


def keep_state() -> None:
    """Streamlit drops widget state when a page without that widget runs; re-own it."""
    for k in _WIDGETS:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def seed_from_query() -> list[str]:
    """Settings from the page address, once per session: ``?chunkers=a,b&candidates=a&coref=none
    &mode=composed&min_tokens=100&max_tokens=1100`` (a shareable link to a configuration; the
    browser test uses it). Returns problems to show (unknown ids or values); never raises."""
    if st.session_state.get("cs_query_seeded"):
        return []
    st.session_state["cs_query_seeded"] = True
    try:
        q = st.query_params
        ids = set(all_chunker_ids())
    except Exception:
        return []
    problems: list[str] = []
    for name, key in (("chunkers", "cs_chunkers"), ("candidates", "cs_candidates")):
        if name in q:
            # an unencoded "+" arrives as a space; chunker ids hold no spaces
            got = [x.strip().replace(" ", "+") for x in q[name].split(",") if x.strip()]
            bad = [x for x in got if x not in ids]
            if bad:
                problems.append(f"unknown chunker id(s) in the address: {', '.join(bad)}")
            st.session_state[key] = [x for x in got if x in ids]
    for name, key, allowed in (("coref", "cs_coref", ("heuristic", "learned", "precomputed", "maverick", "none")),
                               ("mode", "cs_mode", ("composed", "exact"))):
        if name in q:
            if q[name] in allowed:
                st.session_state[key] = q[name]
            else:
                problems.append(f"{name}={q[name]} is not one of {', '.join(allowed)}")
    for name, key in (("min_tokens", "cs_min_tokens"), ("max_tokens", "cs_max_tokens")):
        if name in q:
            try:
                st.session_state[key] = max(0, int(q[name]))
            except ValueError:
                problems.append(f"{name}={q[name]} is not a whole number")
    return problems


@st.cache_resource(show_spinner=False)
def get_resources(embedder: str | None, mode: str) -> Resources:
    """One Resources (model, unit embeddings) per embedder and mode, shared by all sessions."""
    return Resources(embedder, mode)


def session_resources(embedder: str | None, mode: str) -> Resources:
    """The shared model and embeddings with this session's LLM endpoint and key (never another
    session's: the shared Resources itself is not modified)."""
    return get_resources(embedder, mode).with_llm(llm_settings())


def all_chunker_ids() -> list[str]:
    from chunkscope.analysis import default_chunker_ids
    from chunkscope.chunkers import registry

    ids = default_chunker_ids()
    ids = ids + [i for i in registry.ids() if i not in ids]
    # named variants promoted on the Tune page (they run under their name and may be candidates)
    return ids + [v for v in st.session_state.get(VARIANTS_KEY, {}) if v not in ids]


MENTIONS_KEY = "cs_mentions_held"  # {"name", "path", "doc"}: kept across pages (the uploader forgets)


def _mentions_path(upload) -> str | None:
    if upload is None:
        return None
    data = upload.getvalue()
    d = Path(os.environ.get("CHUNKSCOPE_CACHE_DIR") or tempfile.gettempdir()) / "mentions"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{hashlib.sha256(data).hexdigest()[:16]}{Path(upload.name).suffix.lower()}"
    if not p.exists():
        p.write_bytes(data)
    return str(p)


def _mentions_changed() -> None:
    if st.session_state.get("cs_mentions") is None:  # the user removed the file
        st.session_state.pop(MENTIONS_KEY, None)


def _drop_mentions() -> None:
    st.session_state.pop(MENTIONS_KEY, None)


def mentions_input() -> str | None:
    """The precomputed-mentions uploader; the file is kept for its document across page switches."""
    from ui.common import current_document, md_escape

    doc = current_document()
    sha = doc.sha256 if doc is not None else None
    up = st.file_uploader("Precomputed mentions (parquet or JSON of pairs)", type=["parquet", "json"],
                          key="cs_mentions", on_change=_mentions_changed)
    if up is not None:
        held = st.session_state.get(MENTIONS_KEY) or {}
        try:
            path = _mentions_path(up)
        except OSError as exc:
            st.error(f"Cannot store the mentions file: {exc.strerror or exc}")
            return None
        if held.get("path") != path or held.get("doc") != sha:
            # read it once now, so a bad file is reported here and not as a failed analysis
            try:
                from chunkscope.coref.precomputed import load_pairs

                pairs, warns = load_pairs(path, len(doc.text)) if doc is not None else ([], [])
            except Exception as exc:  # CorefError and anything a damaged file raises
                st.session_state.pop(MENTIONS_KEY, None)
                msg = " ".join(str(exc).replace(Path(path).name + ": ", "").split())[:240]
                st.error(f"Mentions file {md_escape(up.name)}: {md_escape(msg)}")
                return None
            st.session_state[MENTIONS_KEY] = {"name": up.name, "path": path, "doc": sha, "pairs": len(pairs),
                                              "warnings": len(warns)}
    held = st.session_state.get(MENTIONS_KEY)
    if not held:
        return None
    if held.get("doc") != sha:
        st.caption(f"{md_escape(held['name'])} was uploaded for another document: not used.")
        return None
    n = held.get("pairs")
    st.caption(f"Using mentions **{md_escape(held['name'])}**" + (f": {n} entity–pronoun pairs" if n is not None else "")
               + (f" ({held['warnings']} skipped, see the report)" if held.get("warnings") else "") + ".")
    if up is None:
        st.button("Remove mentions file", key="cs_mentions_drop", on_click=_drop_mentions)
    return held["path"]


def _d(key: str, default: Any) -> Any:
    """The default to pass a widget: None when session state already holds its value (set by
    ``keep_state`` or a callback), so Streamlit does not warn about both being set."""
    return None if key in st.session_state else default


def settings_sidebar() -> tuple[Settings | None, str]:
    """Render the settings panel; return (settings, "") or (None, what is wrong)."""
    sb = st.sidebar
    defaults = Settings()
    with sb.expander("Metric weights", expanded=False):
        st.caption("The leaderboard and the winner re-rank live; nothing is recomputed.")
        weights = {m: st.slider(m, 0.0, 3.0, value=_d(f"cs_w_{m}", float(defaults.weights[m])), step=0.25,
                                  key=f"cs_w_{m}") for m in METRICS}
    ids = all_chunker_ids()
    with sb.expander("Chunkers and candidates", expanded=False):
        default_run = [i for i in ids if i in set(_default_ids())]
        if any(i not in ids for i in st.session_state.get("cs_chunkers", [])):
            st.session_state["cs_chunkers"] = [i for i in st.session_state["cs_chunkers"] if i in ids]
        if any(i not in ids for i in st.session_state.get("cs_candidates", [])):
            st.session_state["cs_candidates"] = [i for i in st.session_state["cs_candidates"] if i in ids]
        chunkers = st.multiselect("Chunkings to run", ids, default=_d("cs_chunkers", default_run), key="cs_chunkers")
        cands = st.multiselect("Candidates (may win)", ids,
                               default=_d("cs_candidates", [c for c in DEFAULT_CANDIDATES if c in ids]), key="cs_candidates")
    with sb.expander("Metric settings", expanded=False):
        min_t = st.number_input("SC min tokens", 0, 100_000, _d("cs_min_tokens", defaults.min_tokens), 10, key="cs_min_tokens")
        max_t = st.number_input("SC max tokens", 1, 100_000, _d("cs_max_tokens", defaults.max_tokens), 50, key="cs_max_tokens")
        tol = st.number_input("BI tolerance (characters)", 0, 1000, _d("cs_bi_tol", defaults.bi_tolerance), 1, key="cs_bi_tol")
        win = st.number_input("DCC window (tokens)", 100, 100_000, _d("cs_win_tokens", defaults.window_tokens), 250, key="cs_win_tokens")
        step = st.number_input("DCC window step (chunks)", 1, 100, _d("cs_win_step", defaults.window_step), 1, key="cs_win_step")
    with sb.expander("Embeddings and coreference", expanded=False):
        emb = st.text_input("Embedding model (name or path; blank = bundled all-MiniLM-L6-v2)", _d("cs_embedder", ""), key="cs_embedder")
        mode = st.radio("Embedding mode", ["composed", "exact"], key="cs_mode", horizontal=True,
                        help="composed: embed the document's sentences once and compose every span (fast); "
                             "exact: embed every chunk, piece and window text (the paper's way, slow)")
        coref = st.selectbox("Coreference backend (RC)", ["heuristic", "learned", "precomputed", "maverick", "none"],
                             key="cs_coref")
        mentions = mentions_input()
    llm_panel()
    problems = []
    if min_t > max_t:
        problems.append(f"SC min tokens ({min_t}) is above max tokens ({max_t})")
    if not chunkers:
        problems.append("choose at least one chunking to run")
    if not any(w > 0 for w in weights.values()):
        problems.append("at least one metric weight must be above 0")
    if coref == "precomputed" and mentions is None:
        problems.append("the precomputed backend needs a mentions file")
    if problems:
        st.session_state[SETTINGS_KEY] = None
        return None, "; ".join(problems)
    s = Settings(
        chunkers=tuple(chunkers), candidates=tuple(cands), min_tokens=int(min_t), max_tokens=int(max_t),
        bi_tolerance=int(tol), window_tokens=int(win), window_step=int(step), weights=weights,
        coref=coref, mentions=mentions, embedder=emb.strip() or None, embedding_mode=mode,
        params=dict(st.session_state.get("cs_params", {})),
        variants=dict(st.session_state.get(VARIANTS_KEY, {})),
    )
    try:
        s.validate()
    except ValueError as exc:
        st.session_state[SETTINGS_KEY] = None
        return None, str(exc)
    st.session_state[SETTINGS_KEY] = s
    return s, ""


def _default_ids() -> list[str]:
    from chunkscope.analysis import default_chunker_ids

    return default_chunker_ids()


def llm_settings():
    """LLM settings from the panel (the key stays in this browser session only), else the environment."""
    from chunkscope.llm import LLMSettings

    url = (st.session_state.get("cs_llm_url") or "").strip()
    model = (st.session_state.get("cs_llm_model") or "").strip()
    key = st.session_state.get("cs_llm_key") or ""
    overrides: dict[str, Any] = {}
    if url:
        overrides["base_url"] = url
    if model:
        overrides["model"] = model
    if key:
        overrides["api_key"] = key
    return LLMSettings.from_env(**overrides)


def llm_panel() -> None:
    from chunkscope.llm import test_connection

    with st.sidebar.expander("LLM endpoint (llm-regex)", expanded=False):
        st.text_input("Base URL (OpenAI, Ollama, vLLM, LM Studio…)", "", key="cs_llm_url",
                      placeholder=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
        st.text_input("Model", "", key="cs_llm_model",
                      placeholder=os.environ.get("CHUNKSCOPE_LLM_MODEL", "gpt-4o-mini"))
        st.text_input("API key (kept in this session only, never saved)", "", key="cs_llm_key", type="password")
        s = llm_settings()
        st.caption("configured" if s.configured else "not configured: llm-regex will be skipped")
        if st.button("Test connection", key="cs_llm_test"):
            try:
                ok, msg = test_connection(s)
            except Exception as exc:  # never a traceback in the page
                ok, msg = False, f"{type(exc).__name__}: {exc}"
            (st.success if ok else st.error)(msg)


def analysis_key(doc: Document, s: Settings) -> str:
    from chunkscope.analysis import chunking_plan

    d = s.to_dict()
    d.pop("weights", None)
    # candidates only re-rank (rescore) unless they add a chunking to run: key on what is run
    d.pop("candidates", None)
    d["_plan"] = chunking_plan(s)
    llm = llm_settings().cache_identity()  # a changed API key re-runs llm-regex (public_dict only says "set")
    return hashlib.sha256(json.dumps([doc.fingerprint, d, llm], sort_keys=True, default=str).encode()).hexdigest()


def run_analysis(doc: Document, s: Settings) -> Report | None:
    """Run with a progress display by stage; store the raw report; None (with st.error) on failure."""
    res = session_resources(s.embedder, s.embedding_mode)
    box = st.status("Analyzing…", expanded=True)
    bar = box.progress(0.0, text="starting")
    t0 = time.perf_counter()

    def progress(stage: str, fraction: float, message: str) -> None:
        i = STAGES.index(stage) if stage in STAGES else 0
        overall = min(1.0, (i + max(0.0, min(1.0, fraction))) / len(STAGES))
        bar.progress(overall, text=f"{stage}: {message}"[:120])

    try:
        report = analyze(doc, s, res, progress=progress)
    except Exception as exc:  # a specific line, never a traceback
        box.update(label="Analysis failed", state="error", expanded=True)
        from ui.common import md_escape, short_error

        st.error(f"Analysis failed: {md_escape(short_error(exc, 300))}")
        return None
    took = time.perf_counter() - t0
    st.session_state["cs_last_analysis_s"] = took
    box.update(label=f"Analyzed in {took:.1f} s", state="complete", expanded=False)
    store_report(analysis_key(doc, s), report)
    return report


MAX_REPORTS = 8  # per session: a report with diagnostics can be tens of MB on a long document


def store_report(key: str, report: Report) -> None:
    """Keep ``report`` as the most recent one; only the latest ``MAX_REPORTS`` stay in the session."""
    reports = st.session_state.setdefault(REPORTS_KEY, {})
    reports.pop(key, None)  # re-inserted: the most recent for latest_report()
    reports[key] = report
    while len(reports) > MAX_REPORTS:
        reports.pop(next(iter(reports)))


def current_report(doc: Document | None, s: Settings | None) -> Report | None:
    """The analysis of this document with these settings, re-ranked with the current weights."""
    if doc is None or s is None:
        return None
    r = st.session_state.get(REPORTS_KEY, {}).get(analysis_key(doc, s))
    if r is not None:
        rescore(r, s.weights, s.candidates)
        r.settings = {**r.settings, **{k: v for k, v in s.to_dict().items() if k in ("weights", "candidates")}}
    return r


def latest_report(doc: Document | None) -> Report | None:
    """Most recent report for this document under any settings (to show stale results with a note)."""
    if doc is None:
        return None
    for r in reversed(list(st.session_state.get(REPORTS_KEY, {}).values())):
        if r.document.get("sha256") == doc.sha256:
            return r
    return None
