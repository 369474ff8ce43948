"""Streamlit helpers reused by app.py and the pages: document picker, cached loading, summary.

``document_picker()`` puts the input widgets in the sidebar and returns the chosen
Document (or None after showing a one-line ``st.error``); it also stores it in
``st.session_state["document"]`` so pages can call ``current_document()``.
Loading is cached with ``st.cache_data`` keyed by the file's sha256 (and name).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from chunkscope.document import Document
from chunkscope.ingest import FORMATS_IN_BRIEF, IngestError, Limits, load_bytes, with_language
from chunkscope.ingest.summary import document_summary
from ui import keys

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
SAMPLE_SUFFIXES = {".md", ".markdown", ".txt", ".pdf", ".json"}


def sample_paths() -> list[Path]:
    """Bundled sample documents in ``assets/`` (sorted by name; the first is the default)."""
    if not ASSETS.is_dir():
        return []
    return sorted(p for p in ASSETS.iterdir() if p.is_file() and p.suffix.lower() in SAMPLE_SUFFIXES)


@st.cache_data(show_spinner=False, max_entries=24)
def _load_cached(digest: str, filename: str, _data: bytes) -> tuple[Document | None, str]:
    """(document, "") or (None, one-line error). ``_data`` is not hashed: ``digest`` is the key."""
    from chunkscope.sharing import served_shared

    try:  # a shared server's limits are worded as its own
        return load_bytes(_data, filename, limits=Limits.from_env(shared=served_shared())), ""
    except IngestError as exc:
        return None, str(exc)
    except Exception as exc:  # the upload's boundary: a damaged file can make any parser (PDF, DOCX, PPTX...)
        # raise anything; one line, never a traceback
        return None, f"{filename}: could not be loaded ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"


def load_document_bytes(data: bytes, filename: str) -> tuple[Document | None, str]:
    """Load uploaded bytes through the cache: returns (document, "") or (None, error line).
    On a shared server the operator's page and token limits apply (chunkscope.sharing)."""
    from chunkscope.sharing import ShareError, check_document, policy

    digest = hashlib.sha256(data).hexdigest()
    doc, error = _load_cached(digest, filename, data)
    if doc is not None:
        try:
            check_document(policy(), doc)
        except ShareError as exc:
            return None, str(exc)
    if doc is not None:
        from chunkscope.present.pdfpages import PDF_KEY, remember

        doc.meta.pop(PDF_KEY, None)  # only the bytes loaded here count
        if doc.source_format == "pdf" and Path(filename).suffix.lower() == ".pdf":  # kept (bounded LRU) for the page view
            remember(doc, data)
    return doc, error


def load_sample(path: Path) -> tuple[Document | None, str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{path.name}: cannot read ({exc.strerror or exc})"
    return load_document_bytes(data, path.name)


PICKED_KEY = "cs_doc_picked"  # sha256 of the document this picker chose last
ERROR_KEY = "cs_doc_error"


UPLOAD_KEY = "cs_upload"
REJECTED_KEY = "cs_upload_rejected"  # True while the file in the uploader could not be loaded
HELD_FROM_KEY = "cs_doc_held_from"  # the source of the last document loaded without error


def _upload_changed() -> None:
    """The user added, replaced or removed the file (not a page switch, which fires no callback)."""
    f = st.session_state.get(UPLOAD_KEY)
    if f is not None:
        st.session_state[keys.DOC_SOURCE] = "upload"
    else:  # removed: the document shown stays (a browser replacing the file removes the old one first)
        st.session_state.pop(REJECTED_KEY, None)
        st.session_state[keys.DOC_SOURCE] = st.session_state.get(HELD_FROM_KEY, "sample")


def accepted_upload() -> Any:
    """The uploaded file the current document came from, or None (none, or it was rejected)."""
    if st.session_state.get(REJECTED_KEY) or st.session_state.get(keys.DOC_SOURCE) != "upload":
        return None
    return st.session_state.get(UPLOAD_KEY)


def _sample_changed() -> None:
    st.session_state[keys.DOC_SOURCE] = "sample"


def _use_sample() -> None:
    st.session_state[keys.DOC_SOURCE] = "sample"


def document_picker() -> Document | None:
    """Sidebar input: an upload wins; otherwise the selected bundled sample (default: the first).

    Streamlit forgets a file uploader's file when another page runs, so the loaded Document is
    kept in ``st.session_state[keys.DOCUMENT]`` and stays the current document after a page switch
    (or after another page, e.g. Corpus, put one there) until the user picks a sample: removing the
    file keeps it (a browser replacing the file removes the old one first). A file that cannot be
    loaded shows its error under the uploader and replaces nothing.
    """
    held: Document | None = st.session_state.get(keys.DOCUMENT)
    source = st.session_state.get(keys.DOC_SOURCE, "sample")
    if held is not None and st.session_state.get(PICKED_KEY) != held.sha256:
        source = "external"  # another page chose this document
    doc, error, rejected = None, "", False
    with st.sidebar:
        st.header("Document")
        upload = st.file_uploader(
            "Upload a document",
            # no ``type=`` filter: Streamlit would refuse other files with a raw MIME type ("application/vnd.
            # openxmlformats-... files are not allowed"); ingest says which types are supported instead
            help=f"{FORMATS_IN_BRIEF} (JSON: the reference corpus format or `chunkscope ingest --json` output).",
            key=UPLOAD_KEY,
            on_change=_upload_changed,
        )
        if upload is not None and source != "sample":
            doc, error = load_document_bytes(upload.getvalue(), upload.name)
            source = "upload"
            if error:
                st.error(error)
                rejected, doc = True, held
                if held is not None:
                    st.caption(f"That file was not loaded: still showing **{md_escape(held.name)}**. "
                               "Remove the file above or pick a sample.")
        keep = upload is None and held is not None and source in ("upload", "external")
        if keep and held is not None:  # (keep implies a held document)
            doc = held
            how = "uploaded" if source == "upload" else "opened from another page"
            st.caption(f"Current document: **{md_escape(held.name)}** ({how}; it stays until you pick a sample).")
            st.button("Use a bundled sample instead", key="cs_use_sample", on_click=_use_sample)
        samples = sample_paths()
        names = [p.name for p in samples]
        if names:
            if st.session_state.get(keys.SAMPLE) not in names:
                st.session_state.pop(keys.SAMPLE, None)
            name = st.selectbox("...or a bundled sample", names, key=keys.SAMPLE, on_change=_sample_changed,
                                disabled=(upload is not None and source == "upload" and not rejected) or keep)
            if (upload is None or source == "sample") and not keep:
                doc, error = load_sample(samples[names.index(name)])
                source = "sample"
                if error:
                    st.error(error)
    st.session_state[keys.DOC_SOURCE] = source
    st.session_state[REJECTED_KEY] = rejected
    if doc is not None and not rejected and not error:
        st.session_state[HELD_FROM_KEY] = source
    doc = apply_language_override(doc)
    st.session_state[keys.DOCUMENT] = doc
    st.session_state[PICKED_KEY] = doc.sha256 if doc is not None else None
    st.session_state[ERROR_KEY] = error
    return doc


def current_document() -> Document | None:
    """The document chosen on the main page (None if none yet)."""
    return st.session_state.get(keys.DOCUMENT)


@st.cache_data(show_spinner=False, max_entries=32)
def _summary(sha: str, _doc: Document) -> dict:
    return document_summary(_doc)


LANG_OVERRIDE_KEY = "cs_language_override"  # {document sha256: ISO 639-1 code set by hand}
LANG_CHANGED_KEY = "cs_language_changed"  # sha256 of the document whose language was just changed


def apply_language_override(doc: Document | None) -> Document | None:
    """The document with the language the user set for it (a copy; the loaded one is unchanged),
    or with its detected language when none was set."""
    if doc is None:
        return None
    code = st.session_state.get(LANG_OVERRIDE_KEY, {}).get(doc.sha256)
    want = code or doc.meta.get("language_detected", doc.language)
    return doc if doc.language == want else with_language(doc, code)


def _language_changed(sha: str, key: str) -> None:
    code = st.session_state.get(key)
    over = dict(st.session_state.get(LANG_OVERRIDE_KEY, {}))
    if code in (None, "auto"):
        over.pop(sha, None)
    else:
        over[sha] = code
    st.session_state[LANG_OVERRIDE_KEY] = over
    st.session_state[LANG_CHANGED_KEY] = sha
    held = st.session_state.get(keys.DOCUMENT)
    if held is not None and held.sha256 == sha:  # every page sees the new language at once
        st.session_state[keys.DOCUMENT] = apply_language_override(held)


def take_language_change(doc: Document | None) -> bool:
    """True once after the user changed ``doc``'s language (the Overview then re-runs its analysis)."""
    if doc is None or st.session_state.get(LANG_CHANGED_KEY) != doc.sha256:
        return False
    st.session_state.pop(LANG_CHANGED_KEY, None)
    return True


def language_effect(code: str) -> str:
    from chunkscope.text.language import language_name, rc_available

    if rc_available(code):
        return (f"{language_name(code)}: References Completeness (RC) is computed, with the coreference backend "
                "chosen in the sidebar.")
    return (f"{language_name(code)}: References Completeness (RC) is not computed (the coreference models are "
            "English only); the winner is chosen on the other four metrics.")


def language_control(doc: Document) -> None:
    """The detected language and how sure detection is, with a way to set it by hand."""
    from chunkscope.text.language import LANGUAGE_NAMES, language_name

    detected = doc.meta.get("language_detected", doc.language)
    p = doc.meta.get("language_probability")
    sure = f", {p:.0%} sure" if isinstance(p, (int, float)) and detected != "und" else ""
    key = f"cs_lang_{doc.sha256[:12]}"
    chosen = st.session_state.get(LANG_OVERRIDE_KEY, {}).get(doc.sha256)
    options = ["auto", *sorted({*LANGUAGE_NAMES, detected, *([chosen] if chosen else [])} - {"und"},
                              key=lambda c: language_name(c))]
    if st.session_state.get(key) not in options:
        st.session_state[key] = chosen or "auto"
    left, right = st.columns([1, 2])
    left.selectbox(
        "Document language", options, key=key, on_change=_language_changed, args=(doc.sha256, key),
        format_func=lambda c: (f"detected: {language_name(detected)}{sure}" if c == "auto"
                               else f"{language_name(c)}, set by hand"),
        help="Detected from the prose (tables, code and numbers left out). Set it by hand when detection is "
             "wrong: References Completeness depends on it (the coreference models are English); blocks, "
             "sentences and chunks do not. Changing it re-runs the analysis.")
    lines = [language_effect(doc.language)]
    if "language_detected" in doc.meta:
        lines.insert(0, f"Set by hand (detected {language_name(detected)}{sure}).")
    elif isinstance(p, (int, float)) and detected != "und" and p < 0.8:
        lines.insert(0, f"Detection is unsure ({p:.0%}): check it.")
    right.caption(" ".join(md_escape(x) for x in lines))


LARGE_TOKENS = 300_000  # above this, say before Analyze that the analysis takes minutes


def render_summary(doc: Document) -> dict:
    """The same facts as ``chunkscope ingest``, as metrics; returns the summary dict (cached by the document's fingerprint)."""
    s = _summary(doc.fingerprint + doc.name, doc)  # the text alone is not the document: notes.md vs notes.txt
    st.subheader(md_escape(doc.name), anchor=False)  # a JSON document names itself: shown as typed
    cols = st.columns([1.45, 0.85, 1.05, 1.15, 0.8, 0.8, 0.9])  # "markdown", "reference" fit
    cols[0].metric("Format", s["format"])
    cols[1].metric("Language", s["language"])
    cols[2].metric("Characters", f"{s['characters']:,}")
    cols[3].metric("Tokens (o200k)", f"{s['tokens']:,}")
    cols[4].metric("Pages", s["pages"] or "none")
    cols[5].metric("Blocks", f"{s['blocks']:,}")
    cols[6].metric("Headings", f"{s['headings']:,}")
    if s["tokens"] > LARGE_TOKENS:
        st.info(f"A large document ({s['tokens']:,} tokens): the full analysis takes minutes, most of them in "
                "coreference and embeddings (the structure scores show first). **Cancel** keeps what is done; "
                "fewer chunkers, or coreference `none`, make it faster.")
    language_control(doc)
    if doc.meta.get("health"):  # PDFs: what the parser got wrong, before any chunking
        from ui.pdfview import render_health

        render_health(doc)
    return s


def render_warnings(doc: Document, limit: int = 8) -> None:
    for w in doc.warnings[:limit]:
        st.warning(md_escape(w))
    if len(doc.warnings) > limit:
        st.warning(f"... and {len(doc.warnings) - limit} more warnings")


_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:")


# a table's missing value reads "–", as in the CLI and the reports (Streamlit shows "None" otherwise; its
# ``placeholder`` argument is recent, so only passed where the installed Streamlit has it)
MISSING: dict[str, Any] = {"placeholder": "–"} if "placeholder" in inspect.signature(st.dataframe).parameters else {}


def md_escape(text: str) -> str:
    """``text`` safe inside st.markdown / st.caption / st.warning: Markdown and HTML characters
    are backslash-escaped, so document text shows as typed and nothing renders or runs."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in " ".join(str(text).split()))


def counted(n: int, word: str, plural: str | None = None) -> str:
    """"1 broken block", "3 broken blocks" (``plural``: when it is not ``word`` + "s")."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def file_stem(doc: Document) -> str:
    """The document's name made safe for a download's file name ("document" when nothing is left)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in doc.name)[:80] or "document"


def counted_pairs(n: int | None, word: str = "split pair") -> str:
    """``counted`` for split pairs; ``n`` None: RC was not computed, so "none" would say what was never looked
    for ("split pairs not computed")."""
    return counted(n, word) if n is not None else f"{word}s not computed"


def short_error(exc: BaseException, limit: int = 240) -> str:
    """One line for the page: the exception's type and message, whitespace collapsed, truncated."""
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg[:limit]}" if msg else type(exc).__name__


@contextmanager
def guard(what: str):
    """Run a section of a page; an error becomes one ``st.error`` line where the section was
    ("<what> failed: ...") and the rest of the page keeps working. Never a traceback."""
    try:
        yield
    except Exception as exc:  # a section's boundary; st.stop / st.rerun are BaseExceptions and pass through
        st.error(f"{what} failed: {md_escape(short_error(exc))}")


def scroll_to_here(at: int, shown: tuple[int, int], columns: Sequence[str], holder: str = "") -> None:
    """Scroll every column's box to its marker of the problem at character ``at`` (the highlighted
    text's ``data-cs-here``: "▶ here" in the problem's column ``holder``, "▷ here" in the others) so
    that each shows the same place of the document, a third of the way down. Once per problem (place,
    ``holder``), stretch of text ``shown`` and set of ``columns``: a later rerun (another widget)
    does not pull the reader back. The script is fixed text; only integers and a hash are put in it."""
    who = hashlib.sha256("\n".join([holder, *columns]).encode("utf-8")).hexdigest()[:8]
    st.html(f"""<script>(function () {{
  var at = {json.dumps(str(int(at)))}, once = {json.dumps(f"{int(at)}@{int(shown[0])}-{int(shown[1])}-{who}")}, tries = 0;
  var want = {int(len(columns))};
  if (window.__csHere === once) return;
  (function go() {{
    var els = document.querySelectorAll('[data-cs-here="' + at + '"]');
    if (els.length < want && ++tries < 50) {{ setTimeout(go, 100); return; }}
    if (!els.length) return;
    window.__csHere = once;
    els.forEach(function (el) {{
      var box = el.parentElement;
      while (box && !(box.scrollHeight > box.clientHeight + 4 && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
      if (box) box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
    }});
  }})();
}})();</script>""", unsafe_allow_javascript=True)
