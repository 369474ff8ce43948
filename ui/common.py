"""Streamlit helpers reused by app.py and the pages: document picker, cached loading, summary.

``document_picker()`` puts the input widgets in the sidebar and returns the chosen
Document (or None after showing a one-line ``st.error``); it also stores it in
``st.session_state["document"]`` so pages can call ``current_document()``.
Loading is cached with ``st.cache_data`` keyed by the file's sha256 (and name).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import streamlit as st

from core.document import Document
from core.ingest import IngestError, load_bytes
from core.ingest.summary import document_summary

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
UPLOAD_TYPES = ["pdf", "md", "markdown", "txt", "json"]
SAMPLE_SUFFIXES = {".md", ".markdown", ".txt", ".pdf", ".json"}
SESSION_KEY = "document"


def sample_paths() -> list[Path]:
    """Bundled sample documents in ``assets/`` (sorted by name; the first is the default)."""
    if not ASSETS.is_dir():
        return []
    return sorted(p for p in ASSETS.iterdir() if p.is_file() and p.suffix.lower() in SAMPLE_SUFFIXES)


@st.cache_data(show_spinner=False, max_entries=24)
def _load_cached(digest: str, filename: str, _data: bytes) -> tuple[Document | None, str]:
    """(document, "") or (None, one-line error). ``_data`` is not hashed: ``digest`` is the key."""
    try:
        return load_bytes(_data, filename), ""
    except IngestError as exc:
        return None, str(exc)
    except Exception as exc:  # never a traceback in the app
        return None, f"{filename}: could not be loaded ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"


def load_document_bytes(data: bytes, filename: str) -> tuple[Document | None, str]:
    """Load uploaded bytes through the cache: returns (document, "") or (None, error line)."""
    digest = hashlib.sha256(data).hexdigest()
    return _load_cached(digest, filename, data)


def load_sample(path: Path) -> tuple[Document | None, str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"{path.name}: cannot read ({exc.strerror or exc})"
    return load_document_bytes(data, path.name)


def document_picker() -> Document | None:
    """Sidebar input: an upload wins; otherwise the selected bundled sample (default: the first)."""
    with st.sidebar:
        st.header("Document")
        upload = st.file_uploader(
            "Upload a document",
            type=UPLOAD_TYPES,
            help="PDF, Markdown, plain text, or JSON (reference corpus format or `chunkscope ingest --json` output).",
            key="cs_upload",
        )
        samples = sample_paths()
        sample = None
        if samples:
            sample = st.selectbox(
                "...or a bundled sample",
                samples,
                format_func=lambda p: p.name,
                key="cs_sample",
                disabled=upload is not None,
            )
    if upload is not None:
        doc, error = load_document_bytes(upload.getvalue(), upload.name)
    elif sample is not None:
        doc, error = load_sample(sample)
    else:
        doc, error = None, ""
    if error:
        st.error(error)
    st.session_state[SESSION_KEY] = doc
    return doc


def current_document() -> Document | None:
    """The document chosen on the main page (None if none yet)."""
    return st.session_state.get(SESSION_KEY)


def render_summary(doc: Document) -> dict:
    """The same facts as ``chunkscope ingest``, as metrics; returns the summary dict."""
    s = document_summary(doc)
    st.subheader(doc.name)
    cols = st.columns(7)
    cols[0].metric("Format", s["format"])
    cols[1].metric("Language", s["language"])
    cols[2].metric("Characters", f"{s['characters']:,}")
    cols[3].metric("Tokens (o200k)", f"{s['tokens']:,}")
    cols[4].metric("Pages", s["pages"] or "none")
    cols[5].metric("Blocks", f"{s['blocks']:,}")
    cols[6].metric("Headings", f"{s['headings']:,}")
    if s["language"] not in ("en", "und"):
        st.caption(
            f"Detected language: {s['language']}. References Completeness uses an English coreference model."
        )
    return s


def render_warnings(doc: Document, limit: int = 8) -> None:
    for w in doc.warnings[:limit]:
        st.warning(w)
    if len(doc.warnings) > limit:
        st.warning(f"... and {len(doc.warnings) - limit} more warnings")
