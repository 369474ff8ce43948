"""The user's embedding model (sidebar) and which chunks are longer than its input limit.

The engine is ``chunkscope.embeddings.model_limits``; this module keeps the choice in session state and caches
the per-chunking counts, for the leaderboard, Compare and the Chunk inspector.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from chunkscope.document import Document
from chunkscope.embeddings import model_limits as limits
from chunkscope.report import ChunkingResult
from ui import keys
from ui.share import shared

NONE = "(none: don't check)"
CUSTOM = "another model (give its limit)"
KEYS = (keys.TARGET_MODEL, keys.TARGET_LIMIT, keys.TARGET_TOKENIZER)
STATE = "cs_target_now"  # the TargetModel of this run (None: no check)


def target_sidebar() -> limits.TargetModel | None:
    """Sidebar: the embedding model the chunks will be indexed with; returns it (or None)."""
    for k in KEYS:  # keep the choice while pages without these widgets run
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]
    options = [NONE, *limits.KNOWN, CUSTOM]
    if st.session_state.get(keys.TARGET_MODEL) not in options:
        st.session_state.pop(keys.TARGET_MODEL, None)
    model = None
    with st.sidebar.expander("Your embedding model (chunk length limit)", expanded=False):
        name = st.selectbox("Index with", options, key=keys.TARGET_MODEL,
                            help="Chunks longer than this model's input limit are cut off when embedded: they are "
                                 "flagged on the leaderboard, in Compare and in the Chunk inspector.")
        try:
            if name == CUSTOM:
                limit = st.number_input("Input limit (tokens)", 1, 1_000_000, 512, 64, key=keys.TARGET_LIMIT)
                if shared():  # no server path is typed on a shared server: counted in o200k
                    tok = ""
                    st.caption("Counted in o200k tokens (an estimate): a tokenizer on the server is not "
                               "chosen from a shared app.")
                else:
                    tok = st.text_input("Tokenizer (a local folder with tokenizer.json; blank = count in o200k)",
                                        key=keys.TARGET_TOKENIZER).strip()
                model = limits.target_model("custom model", int(limit), tok or None)
            elif name != NONE:
                model = limits.target_model(name)
                st.caption(f"{model.name} reads at most {model.max_tokens:,} tokens"
                           + (" (counted with its word-piece tokenizer)." if model.tokenizer != limits.O200K
                              else " (its tokenizer is not bundled: counted in o200k tokens, an estimate)."))
        except ValueError as exc:
            st.error(str(exc))
            model = None
    st.session_state[STATE] = model
    return model


def current_target() -> limits.TargetModel | None:
    return st.session_state.get(STATE)


@st.cache_data(show_spinner=False, max_entries=64)
def _check(key: str, _doc: Document, _c: ChunkingResult, model: limits.TargetModel) -> limits.LimitCheck:
    return limits.check(_doc.text, _c.chunks, model)


def check(doc: Document, c: ChunkingResult, model: limits.TargetModel | None = None) -> limits.LimitCheck | None:
    """The chunks of ``c`` against the chosen model (None when no model is chosen)."""
    model = model or current_target()
    if model is None or not c.ok:
        return None
    spans = hashlib.sha256(repr([(x.start, x.end) for x in c.chunks]).encode()).hexdigest()
    return _check(f"{doc.sha256}:{spans}", doc, c, model)


COLUMN = "over model limit"  # leaderboard column: chunks longer than the model's input limit
