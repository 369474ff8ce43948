"""The app's navigation: "Overview" (app.py) first, then every page in ``pages/`` in file order.

Streamlit names the entry script's page after its file ("app"); ``st.navigation`` lets it be
called Overview. ``app.py`` is both the entry point and the Overview page: the entry run builds
the navigation and runs the chosen page; when that page is app.py itself, the second pass sees
``inside_page()`` and draws the Overview. Pages are found in ``pages/`` as before (a new page
file shows up without editing this list); titles come from the file names ("2_Chunk_inspector.py"
-> "Chunk inspector"), so the links, ``st.switch_page`` and ``st.page_link`` paths stay the same.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

OVERVIEW_TITLE = "Overview"
_state = threading.local()  # one script run per thread


def inside_page() -> bool:
    """True while a page chosen by the navigation runs (app.py's second pass draws the Overview)."""
    return bool(getattr(_state, "depth", 0))


@contextmanager
def _running_page():
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def page_title(path: Path) -> str:
    """'2_Chunk_inspector.py' -> 'Chunk inspector' (Streamlit's own rule for pages/ files)."""
    name = re.sub(r"^[0-9]+[_ -]*", "", path.stem) or path.stem
    return name.replace("_", " ").strip()


def page_files(app_file: Path) -> list[Path]:
    folder = app_file.parent / "pages"
    if not folder.is_dir():
        return []
    def order(p: Path) -> tuple[int, str]:
        m = re.match(r"^([0-9]+)", p.stem)
        return (int(m.group(1)) if m else 10**9, p.stem)
    return sorted((p for p in folder.glob("*.py") if not p.name.startswith("_")), key=order)


def run(app_file: str | Path) -> None:
    """Build the navigation (Overview + pages/) and run the chosen page."""
    app_file = Path(app_file)
    pages = [st.Page(app_file, title=OVERVIEW_TITLE, default=True)]
    for p in page_files(app_file):
        pages.append(st.Page(p, title=page_title(p), url_path=re.sub(r"^[0-9]+[_ -]*", "", p.stem) or p.stem))
    page = st.navigation(pages)
    with _running_page():
        page.run()
