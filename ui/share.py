"""Streamlit side of shared mode: the session's workspace, the analysis slot, the policy banner.

The policy itself is ``chunkscope.sharing`` (engine); this module only applies it to a session.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import streamlit as st

from chunkscope import sharing

WORKSPACE_KEY = "cs_workspace"
_last_sweep = [0.0]
_sweep_lock = threading.Lock()


def policy() -> sharing.Policy:
    return sharing.policy()


def shared() -> bool:
    return policy().shared


def session_workspace() -> sharing.Workspace | None:
    """This session's private directory in shared mode (None otherwise). It lives as long as the
    session's state: when Streamlit drops a closed session, the directory is deleted with it."""
    pol = policy()
    if not pol.shared:
        return None
    _maybe_sweep(pol)
    ws = st.session_state.get(WORKSPACE_KEY)
    if not isinstance(ws, sharing.Workspace) or not ws.alive:
        ws = sharing.Workspace(pol.workspace_root)
        st.session_state[WORKSPACE_KEY] = ws
    ws.touch()
    return ws


def _maybe_sweep(pol: sharing.Policy) -> None:
    """At most once a minute per process: delete workspaces unused for longer than the TTL."""
    now = time.time()
    with _sweep_lock:
        if now - _last_sweep[0] < 60:
            return
        _last_sweep[0] = now
    sharing.sweep(pol, now)


@contextmanager
def analysis_slot(box: Any = None) -> Iterator[None]:
    """Hold one of the server's analysis slots; while queued, ``box`` says "waiting for a slot"."""
    def waiting(place: int) -> None:
        if box is not None:
            box.update(label=f"Waiting for a slot ({place} in line; the server runs "
                             f"{sharing.slots().n} analyses at once)…", state="running")

    with sharing.slots().slot(on_wait=waiting):
        if box is not None:
            box.update(label="Analyzing…", state="running")
        yield


def banner() -> None:
    """One sidebar line that says this is a shared server and what it allows."""
    pol = policy()
    if pol.shared:
        st.sidebar.caption(f"🔒 Shared server: uploads up to {pol.max_upload_mb} MB, {pol.max_pages} pages, "
                           f"{pol.max_tokens:,} tokens; your files stay in this session and are deleted when it ends.")
