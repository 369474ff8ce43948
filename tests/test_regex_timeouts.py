"""A separator regex typed by a user (Tune page, CLI, config) runs with a time budget: a
catastrophic one ends the chunking with one clear message instead of hanging a server thread
(the old splitter ran it on ``re`` with no timeout). Built-in separators keep running on ``re``."""

from __future__ import annotations

import re
import threading

from chunkscope.analysis.structure import chunk_one
from chunkscope.chunkers import recursive
from chunkscope.document import Document

EVIL = r"(a|aa)+$"  # exponential backtracking on "aaaa...a!" for a backtracking engine


def _doc() -> Document:
    return Document(name="evil", text=("a" * 60 + "!\n") * 40, source_format="text")


def test_catastrophic_user_separator_times_out_with_a_clear_message(monkeypatch):
    monkeypatch.setattr(recursive, "DEFAULT_REGEX_TIMEOUT", 0.5)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault(
        "r", chunk_one(_doc(), "recursive-600", overrides={"separators": [EVIL, r"\n", ""], "chunk_size": 5})),
        daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), "the separator regex hung the thread"
    r = box["r"]
    assert r.status == "failed"
    assert "took longer than 0.5s" in r.reason and EVIL in r.reason and "backtracking" in r.reason


def test_user_separators_still_split_and_builtins_stay_on_re():
    r = chunk_one(_doc(), "recursive-600", overrides={"separators": [r"!\n", ""], "chunk_size": 30})
    assert r.ok and len(r.chunks) > 1 and all(c.end % 62 == 60 for c in r.chunks[:-1])  # cut before a "!\n"
    assert all(isinstance(recursive._compile(p), re.Pattern) for p in recursive.PAPER_SEPARATORS if p)
    assert not isinstance(recursive._compile(r"!\n"), re.Pattern)  # the regex package, with a timeout


def test_invalid_user_separator_is_one_line():
    from chunkscope import tune

    assert any("invalid regex" in p for p in tune.problems("recursive-600", {"separators": "(|\\n"}))
