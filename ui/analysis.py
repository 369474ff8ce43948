"""Streamlit side of an analysis: settings sidebar, cached resources, running with progress.

Shared by app.py and every page. Settings live in ``st.session_state`` under ``cs_*`` keys
(kept alive across pages by ``keep_state()``); raw reports are cached per document and
settings, and re-ranked in place when only weights or candidates change (no re-embedding).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from chunkscope.analysis import STAGES, Resources, Settings, analyze, rescore
from chunkscope.analysis.resources import ResourcesProtocol
from chunkscope.analysis.settings import RANKING, SETTING_SPECS, SPECS, SettingSpec, settings_affecting
from chunkscope.caching import cache_root
from chunkscope.document import Document
from chunkscope.report import METRICS, Report
from ui import keys

REPORTS_KEY = "cs_reports"
VARIANTS_KEY = "cs_variants"  # {name: {"chunker": id, "params": {...}}} promoted on the Tune page
SETTINGS_KEY = "cs_settings_now"  # the sidebar's Settings of this run (None when invalid)
RERANKED = settings_affecting(RANKING)  # a change re-ranks the report in place (rescore): not part of its key
# the Chunk inspector's chunking and chunk, Compare's chunkings, problem kind and view: kept across pages, for
# one document (``forget_places_of_other_documents``)
_PLACE_WIDGETS = ("cs_insp_chunking", "cs_insp_no", "cs_cmp_sel", "cs_cmp_kind", "cs_cmp_mode")

def _setting_keys(s: SettingSpec) -> tuple[str, ...]:
    """A setting's widget keys in session state (sliders: one per metric)."""
    if not s.key:
        return ()
    return tuple(f"{s.key}{m}" for m in METRICS) if s.widget == "sliders" else (s.key,)


SETTING_WIDGETS = tuple(k for s in SETTING_SPECS for k in _setting_keys(s))  # the sidebar's, as declared
_WIDGETS = ("cs_sample", *SETTING_WIDGETS, "cs_llm_url", "cs_llm_model",
            "cs_target_model", "cs_target_limit", "cs_target_tokenizer",  # ui.limits: the user's embedding model
            *_PLACE_WIDGETS)


def keep_state() -> None:
    """Streamlit drops widget state when a page without that widget runs; re-own it."""
    for k in _WIDGETS:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


# the places Compare and the Chunk inspector keep across pages (their widgets and their own state): one document's
_PLACES = (*_PLACE_WIDGETS, keys.COMPARE_VIEW, keys.COMPARE_VIEW_FOR, keys.COMPARE_PI, keys.COMPARE_SIG,
           keys.INSPECTOR_POS, keys.INSPECTOR_OFFSET)


def forget_places_of_other_documents(doc: Any) -> None:
    """A new document opens Compare on its own winner and runner-up and the inspector on its first chunk,
    not on the chunkings and problem picked for the last one (call before the page's widgets)."""
    if st.session_state.get("cs_places_for") != doc.fingerprint:
        for k in _PLACES:
            st.session_state.pop(k, None)
        st.session_state["cs_places_for"] = doc.fingerprint


def _seeded(s: SettingSpec, raw: str, ids: set[str]) -> tuple[Any, str]:
    """(widget value, problem) of one address parameter: (None, why) when it cannot be used."""
    if s.kind == "ids":
        # an unencoded "+" arrives as a space; chunker ids hold no spaces
        got = [x.strip().replace(" ", "+") for x in raw.split(",") if x.strip()]
        bad = [x for x in got if x not in ids]
        return [x for x in got if x in ids], f"unknown chunker id(s) in the address: {', '.join(bad)}" if bad else ""
    if s.choices is not None:
        ok = raw in s.choices
        return (raw, "") if ok else (None, f"{s.query}={raw} is not one of {', '.join(s.choices)}")
    try:
        return max(int(s.min or 0), int(raw)), ""
    except ValueError:
        return None, f"{s.query}={raw} is not a whole number"


def seed_from_query() -> list[str]:
    """Settings from the page address, once per session: ``?chunkers=a,b&candidates=a&coref=none
    &mode=composed&min_tokens=100&max_tokens=1100`` (a shareable link to a configuration; the
    browser test uses it; the names are the declarations' ``query``). Returns problems to show (unknown ids
    or values); never raises."""
    if st.session_state.get("cs_query_seeded"):
        return []
    st.session_state["cs_query_seeded"] = True
    try:
        q = st.query_params
        ids = set(all_chunker_ids())
    except Exception:  # the address and the registry are extras here: the page runs without them
        return []
    problems: list[str] = []
    for s in SETTING_SPECS:
        if s.query and s.query in q:
            value, problem = _seeded(s, q[s.query], ids)
            if problem:
                problems.append(problem)
            if value is not None:
                st.session_state[s.key] = value
    return problems


@st.cache_resource(show_spinner=False, max_entries=4)
def get_resources(embedder: str | None, mode: str, backend: str = "auto") -> Resources:
    """One Resources (model, unit embeddings) per embedder, mode and backend, shared by all sessions (bounded)."""
    return Resources(embedder, mode, backend=backend)


def session_resources(embedder: str | None, mode: str, backend: str = "auto") -> ResourcesProtocol:
    """The shared model and embeddings with this session's LLM endpoint and key (never another
    session's: the shared Resources itself is not modified). On a shared server only an
    operator-listed model (ShareError otherwise)."""
    from chunkscope.sharing import check_embedder, policy

    return get_resources(check_embedder(policy(), embedder), mode, backend).with_llm(llm_settings())


def all_chunker_ids() -> list[str]:
    from chunkscope.analysis import default_chunker_ids
    from chunkscope.chunkers import registry

    ids = default_chunker_ids()
    ids = ids + [i for i in registry.ids() if i not in ids]
    # named variants promoted on the Tune page (they run under their name and may be candidates)
    return ids + [v for v in st.session_state.get(VARIANTS_KEY, {}) if v not in ids]


MENTIONS_KEY = "cs_mentions_held"  # {"name", "path", "doc"}: kept across pages (the uploader forgets)


def _mentions_path(upload: Any) -> str:
    from ui.share import session_workspace

    data = upload.getvalue()
    ws = session_workspace()  # shared server: this session's private directory
    d = ws.sub("mentions") if ws is not None else cache_root("scratch") / "mentions"
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
            from chunkscope.coref import CorefError, mentions_pairs

            try:
                pairs, warns = mentions_pairs(doc, path) if doc is not None else ([], [])
            except (CorefError, OSError) as exc:  # a damaged file: the engine says what is wrong with it
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


def widget_default(key: str, default: Any) -> Any:
    """The default to pass a widget: None when session state already holds its value (set by
    ``keep_state`` or a callback), so Streamlit does not warn about both being set."""
    return None if key in st.session_state else default


_d = widget_default  # short, for the sidebar's many widgets


def _number_input(s: SettingSpec, defaults: Settings) -> int:
    return int(st.number_input(s.label, int(s.min or 0), int(s.ui_max or 100_000),
                               _d(s.key, getattr(defaults, s.name)), int(s.step or 1), key=s.key, help=s.help))


def _choice_input(s: SettingSpec, defaults: Settings) -> Any:
    if s.widget == "radio":
        return st.radio(s.label, list(s.choices or ()), key=s.key, horizontal=True, help=s.help)
    return st.selectbox(s.label, list(s.choices or ()), key=s.key, help=s.help)


def _weight_sliders(s: SettingSpec, defaults: Settings) -> dict[str, float]:
    st.caption("The leaderboard and the winner re-rank live; nothing is recomputed.")
    return {m: st.slider(m, 0.0, float(s.ui_max or 3.0), value=_d(f"{s.key}{m}", float(defaults.weights[m])),
                         step=s.step, key=f"{s.key}{m}") for m in METRICS}


def _chunking_picker(s: SettingSpec, defaults: Settings) -> tuple[str, ...]:
    """Chunking ids among those there are now (a variant may have gone); by default the declared ones."""
    ids = all_chunker_ids()
    if s.default is None:  # every default chunker
        default = [i for i in ids if i in set(_default_ids())]
    else:
        default = [c for c in s.default if c in ids]
    if any(i not in ids for i in st.session_state.get(s.key, [])):
        st.session_state[s.key] = [i for i in st.session_state[s.key] if i in ids]
    return tuple(st.multiselect(s.label, ids, default=_d(s.key, default), key=s.key))


def _model_input(s: SettingSpec, defaults: Settings) -> str | None:
    """The embedding model: on a shared server one the operator offers, else any name or path."""
    from chunkscope.sharing import BUNDLED_EMBEDDER, policy

    offered = policy().embedders if policy().shared else ()
    if offered:  # a shared server: the operator's models only
        if st.session_state.get(s.key) not in offered:
            st.session_state[s.key] = offered[0]
        emb = st.selectbox(f"{s.label} (offered by this server)", list(offered), key=s.key)
        emb = "" if emb == BUNDLED_EMBEDDER else emb
    else:
        emb = st.text_input(f"{s.label} (name or path; blank = {s.unset})", _d(s.key, ""), key=s.key)
    return emb.strip() or None


# each declared widget kind (SettingSpec.widget) -> what draws it and returns its setting's value
_DRAW = {"number": _number_input, "radio": _choice_input, "select": _choice_input, "sliders": _weight_sliders,
         "pick": _chunking_picker, "text": _model_input, "file": lambda s, defaults: mentions_input()}
# where each setting's widget sits (every setting declared with a widget, once: tests/test_settings_specs.py)
SIDEBAR = (
    ("Metric weights", ("weights",)),
    ("Chunkers and candidates", ("chunkers", "candidates")),
    ("Metric settings", ("min_tokens", "max_tokens", "bi_tolerance", "window_tokens", "window_step")),
    ("Embeddings and coreference", ("embedder", "embedding_mode", "embedding_backend", "coref", "mentions")),
)


def _setting_widgets() -> dict[str, Any]:
    """Every setting's widget, in the sidebar's expanders; {setting: value}."""
    defaults, values = Settings(), {}
    for title, names in SIDEBAR:
        with st.sidebar.expander(title, expanded=False):
            values.update({n: _DRAW[SPECS[n].widget](SPECS[n], defaults) for n in names})
    return values


def restore_sidebar(s: Settings, chunker_ids: list[str]) -> None:
    """Set every sidebar widget from ``s`` (a loaded settings file), by the declarations' keys; chunkings not
    in ``chunker_ids`` (the ones this app offers) are left out, weights clamped to the sliders' range."""
    ss = st.session_state
    for spec in SETTING_SPECS:
        value = getattr(s, spec.name)
        if not spec.key or spec.widget == "file":
            continue
        if spec.widget == "sliders":
            for m in METRICS:
                ss[f"{spec.key}{m}"] = min(float(spec.ui_max or 3.0), max(0.0, float(value.get(m, 1.0))))
        elif spec.widget == "pick":
            ss[spec.key] = [c for c in (value if value is not None else _default_ids()) if c in chunker_ids]
        elif spec.widget == "number":
            ss[spec.key] = int(value)
        else:
            ss[spec.key] = value if value is not None else ""


def settings_sidebar() -> tuple[Settings | None, str]:
    """Render the settings panel; return (settings, "") or (None, what is wrong)."""
    values = _setting_widgets()
    llm_panel()
    from ui.limits import target_sidebar

    target_sidebar()
    from ui.share import banner

    banner()
    s = Settings(**values, params=dict(st.session_state.get("cs_params", {})),
                 variants=dict(st.session_state.get(VARIANTS_KEY, {})))
    problems = [msg for _, msg in s.problems()]
    if not s.chunkers:
        problems.append("choose at least one chunking to run")
    if s.coref == "precomputed" and s.mentions is None:
        problems.append("the precomputed backend needs a mentions file")
    st.session_state[SETTINGS_KEY] = None if problems else s
    return (None, "; ".join(problems)) if problems else (s, "")


def _default_ids() -> list[str]:
    from chunkscope.analysis import default_chunker_ids

    return default_chunker_ids()


LLM_REFUSED_KEY = "cs_llm_refused"  # why the shared server refused the panel's endpoint ("" when not)


def llm_settings():
    """LLM settings from the panel (the key stays in this browser session only), else the environment.
    On a shared server the policy decides (chunkscope.sharing.llm_settings_for): a refused endpoint
    gives settings that are not configured (no request is made) and the panel says why."""
    from chunkscope.llm import LLMSettings
    from chunkscope.sharing import ShareError, llm_settings_for, policy

    url = (st.session_state.get("cs_llm_url") or "").strip()
    model = (st.session_state.get("cs_llm_model") or "").strip()
    key = st.session_state.get("cs_llm_key") or ""
    try:
        s = llm_settings_for(policy(), url, model, key)
        st.session_state[LLM_REFUSED_KEY] = ""
        return s
    except ShareError as exc:
        st.session_state[LLM_REFUSED_KEY] = str(exc)
        return LLMSettings(base_url=None, api_key=None, model=model or LLMSettings.from_env().model)


def llm_panel() -> None:
    from chunkscope.llm import test_connection

    with st.sidebar.expander("LLM endpoint (llm-regex)", expanded=False):
        st.text_input("Base URL (OpenAI, Ollama, vLLM, LM Studio…)", "", key="cs_llm_url",
                      placeholder=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
        st.text_input("Model", "", key="cs_llm_model",
                      placeholder=os.environ.get("CHUNKSCOPE_LLM_MODEL", "gpt-4o-mini"))
        st.text_input("API key (kept in this session only, never saved)", "", key="cs_llm_key", type="password")
        s = llm_settings()
        refused = st.session_state.get(LLM_REFUSED_KEY)
        if refused:
            st.error(refused)
        st.caption("configured" if s.configured else "not configured: llm-regex will be skipped")
        if st.button("Test connection", key="cs_llm_test"):
            try:
                ok, msg = test_connection(s)
            except Exception as exc:  # the button's boundary: the HTTP client raises its own errors for a
                # malformed address (httpx's InvalidURL) before any request; one line, never a traceback
                ok, msg = False, f"{type(exc).__name__}: {exc}"
            (st.success if ok else st.error)(msg)


def analysis_key(doc: Document, s: Settings) -> str:
    from chunkscope.analysis import chunking_plan

    # weights and candidates only re-rank (rescore) unless candidates add a chunking to run: key on what is run
    d = {k: v for k, v in s.to_dict().items() if k not in RERANKED}
    d["_plan"] = chunking_plan(s)
    from chunkscope.llm import cache_identity_of
    from chunkscope.provenance import provenance_key

    # a changed API key re-runs llm-regex (public_dict only says "set"); unreadable settings: unique key
    llm = cache_identity_of(llm_settings)
    blob = [doc.fingerprint, d, llm, provenance_key(s)]  # another engine/model/backend never reuses a report
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


JOB_KEY = "cs_job"  # the analysis running in the background for this session (AnalysisJob)
POLL_S = 0.25


# test setting (the browser test): the embedding stage waits until this file exists, so the
# provisional view can be looked at first; at most HOLD_MAX_S seconds
HOLD_ENV = "CHUNKSCOPE_TEST_HOLD_EMBEDDINGS"
HOLD_MAX_S = 300.0


def hold_from_env() -> Callable[[Callable[[], bool]], None] | None:
    """The hold ``analyze`` gives its unit embedding pass when ``CHUNKSCOPE_TEST_HOLD_EMBEDDINGS`` names a file
    (None otherwise): wait until the file exists, the run stops, or HOLD_MAX_S seconds pass."""
    flag = os.environ.get(HOLD_ENV)
    if not flag:
        return None

    def hold(stop: Callable[[], bool]) -> None:
        t0 = time.perf_counter()
        while not Path(flag).exists() and time.perf_counter() - t0 < HOLD_MAX_S and not stop():
            time.sleep(0.1)

    return hold


class AnalysisJob:
    """One analysis in a background thread: its progress, its latest provisional snapshot and,
    when done, the report (or the partial one when cancelled, or the error). The thread never
    touches Streamlit; the page reads these fields and draws them."""

    def __init__(self, key: str, doc: Document, s: Settings, resources: ResourcesProtocol):
        self.key, self.doc_id = key, document_id(doc)
        self.stage, self.fraction, self.message = "starting", 0.0, ""
        self.snapshot: Report | None = None
        self.report: Report | None = None
        self.error = ""
        self.cancelled = False
        self.done = False
        self.t0 = time.perf_counter()
        self.seconds = 0.0
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(doc, s, resources), daemon=True,
                                         name=f"chunkscope-analysis-{key[:8]}")

    def start(self) -> "AnalysisJob":
        self._thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()

    def _progress(self, stage: str, fraction: float, message: str) -> None:
        self.stage, self.fraction, self.message = stage, fraction, message

    def _partial(self, report: Report, stage: str) -> None:
        self.snapshot = report  # a fresh copy per stage: the page may re-rank it freely

    def _run(self, doc: Document, s: Settings, resources: Resources) -> None:
        from chunkscope import sharing
        from chunkscope.analysis.run import AnalysisCancelled

        def waiting(place: int) -> None:  # a shared server runs a bounded number at once; the rest wait
            self._progress("waiting", 0.0, f"waiting for a slot ({place} in line; the server runs "
                                           f"{sharing.slots().n} analyses at once)")

        try:
            with sharing.slots().slot(on_wait=waiting):
                self.report = analyze(doc, s, resources=resources, progress=self._progress,
                                      on_partial=self._partial, cancel=self._cancel.is_set, hold=hold_from_env())
        except AnalysisCancelled as exc:
            self.cancelled, self.snapshot = True, exc.partial
        except Exception as exc:  # the worker thread's boundary: whatever fails becomes the job's error line
            from ui.common import short_error

            self.error = short_error(exc, 300)
        finally:
            self.seconds = time.perf_counter() - self.t0
            self.done = True

    @property
    def overall(self) -> float:
        i = STAGES.index(self.stage) if self.stage in STAGES else 0
        return min(1.0, (i + max(0.0, min(1.0, self.fraction))) / len(STAGES))


def start_analysis(doc: Document, s: Settings) -> AnalysisJob | None:
    """Start the analysis in the background (cancelling one still running in this session);
    None (with st.error) when this server does not offer the chosen model."""
    old = st.session_state.get(JOB_KEY)
    if old is not None and not old.done:
        old.cancel()
    try:
        res = session_resources(s.embedder, s.embedding_mode, s.embedding_backend)
    except ValueError as exc:  # ShareError: a model this server does not offer
        from ui.common import md_escape

        st.error(f"Analysis refused: {md_escape(str(exc))}")
        return None
    job = AnalysisJob(analysis_key(doc, s), doc, s, res).start()
    st.session_state[JOB_KEY] = job
    return job


def running_job(doc: Document | None) -> AnalysisJob | None:
    job = st.session_state.get(JOB_KEY)
    return job if job is not None and doc is not None and job.doc_id == document_id(doc) else None


def _adopt(job: AnalysisJob) -> None:
    """A finished job's result becomes the session's report (complete, or partial when cancelled)."""
    if st.session_state.get(JOB_KEY) is job:
        st.session_state.pop(JOB_KEY, None)
    if job.report is not None:
        st.session_state["cs_last_analysis_s"] = job.seconds
        store_report(job.key, job.report)
    elif job.cancelled and job.snapshot is not None:
        store_report(job.key, job.snapshot)  # provisional: labelled partial wherever it is shown
    elif job.error:
        st.session_state["cs_analysis_error"] = job.error


def follow_analysis(job: AnalysisJob, s: Settings | None) -> Report | None:
    """Draw the running analysis until it ends: progress by stage, a cancel button and the
    provisional winner and leaderboard as soon as the structure stage is done (re-ranked with
    the current weights). Returns the final report, the partial one when cancelled, or None
    (with ``st.error``) on failure. A rerun (a widget, another page) interrupts the drawing,
    not the analysis: the next run of the page follows it again."""
    from ui.common import md_escape
    from ui.overview import provisional_view

    box = st.status("Analyzing…", expanded=True)
    bar = box.progress(job.overall, text="starting")
    box.button("Cancel analysis", key="cs_cancel", on_click=job.cancel,
               help="Stop after the current step; the results so far stay, marked partial.")
    view = st.empty()
    shown = None
    while True:
        done = job.done  # read once: draw the last snapshot before adopting the result
        bar.progress(job.overall, text=f"{job.stage}: {job.message}"[:120])
        snap = job.snapshot
        if snap is not None and snap is not shown and not job.report:
            shown = snap
            if s is not None:
                rescore(snap, s.weights, s.candidates)
            view.empty()  # the last snapshot's card goes whole: none of its warnings stays beside the new one
            with view.container():
                provisional_view(snap)
        if done:
            break
        time.sleep(POLL_S)
    _adopt(job)
    view.empty()
    if job.report is not None:
        box.update(label=f"Analyzed in {job.seconds:.1f} s", state="complete", expanded=False)
        return job.report
    if job.cancelled:
        box.update(label=f"Cancelled after {job.seconds:.1f} s: partial results", state="error", expanded=False)
        return job.snapshot
    box.update(label="Analysis failed", state="error", expanded=True)
    st.error(f"Analysis failed: {md_escape(job.error)}")
    st.session_state.pop("cs_analysis_error", None)
    return None


MAX_REPORTS = 8  # per session: a report with diagnostics can be tens of MB on a long document


def store_report(key: str, report: Report) -> None:
    """Keep ``report`` as the most recent one; only the latest ``MAX_REPORTS`` stay in the session."""
    from chunkscope.sharing import policy

    pol = policy()
    keep = pol.max_reports if pol.shared else MAX_REPORTS
    reports = st.session_state.setdefault(REPORTS_KEY, {})
    reports.pop(key, None)  # re-inserted: the most recent for latest_report()
    reports[key] = report
    while len(reports) > keep:
        reports.pop(next(iter(reports)))


def current_report(doc: Document | None, s: Settings | None) -> Report | None:
    """The analysis of this document with these settings, re-ranked with the current weights."""
    if doc is None or s is None:
        return None
    key = analysis_key(doc, s)
    job = running_job(doc)
    if job is not None and job.key == key:
        if job.done:
            _adopt(job)
        elif job.snapshot is not None:  # still running: what is known so far (provisional)
            rescore(job.snapshot, s.weights, s.candidates)
            return job.snapshot
    r = st.session_state.get(REPORTS_KEY, {}).get(key)
    if r is not None:
        rescore(r, s.weights, s.candidates)
        r.settings = {**r.settings, **{k: v for k, v in s.to_dict().items() if k in RERANKED}}
    return r


def document_id(doc: Document | dict) -> tuple[str | None, str | None]:
    """Which document a job or a report is about, whatever its settings or language: its text and its
    format (notes.md and notes.txt with the same bytes are two documents: their blocks and headings
    differ). ``doc``: a Document, or a report's ``document`` facts."""
    if isinstance(doc, dict):
        return doc.get("sha256"), doc.get("format")
    return doc.sha256, doc.source_format


def same_document(a: Document | dict, b: Document | dict) -> bool:
    """``document_id`` equal; a report saved before the facts held the format matches on its text."""
    (sha_a, fmt_a), (sha_b, fmt_b) = document_id(a), document_id(b)
    return sha_a == sha_b and (fmt_a is None or fmt_b is None or fmt_a == fmt_b)


def latest_report(doc: Document | None) -> Report | None:
    """Most recent report for this document under any settings (to show stale results with a note)."""
    if doc is None:
        return None
    for r in reversed(list(st.session_state.get(REPORTS_KEY, {}).values())):
        if same_document(r.document, doc):
            return r
    return None


def provisional_banner(report: Report) -> None:
    """Say when the results shown are not complete: still running, or a cancelled run's partial."""
    if not report.provisional:
        return
    from chunkscope.analysis.wording import provisional_note
    from ui.common import md_escape

    job = st.session_state.get(JOB_KEY)
    running = job is not None and not job.done and job.doc_id == document_id(report.document)
    note = md_escape(provisional_note(report))
    if running:
        st.info(f"{note[0].upper()}{note[1:]}. The analysis is still running: these scores use the metrics known so far "
                "(open the Overview to follow it).", icon="⏳")
    else:
        st.warning(f"Partial results ({note}): the analysis was cancelled. Press Analyze / Re-run analysis "
                   "on the Overview for the complete scores.")
