"""AppTest of the retrieval check: the Overview's Retrieval section (self-test and an uploaded
questions file, the leaderboard column, the weight) and the per-question view on Compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TINY = ROOT / "tests" / "fixtures" / "retrieval" / "tiny.md"
CHUNKERS = ["fixed-512", "sentence-5", "whole"]


def trouble(at: AppTest) -> list:
    return [*at.exception, *at.error]


@pytest.fixture
def at() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.sidebar.file_uploader(key="cs_upload").upload("harbour.md", TINY.read_bytes(), "text/markdown").run()
    at.sidebar.multiselect(key="cs_chunkers").set_value(CHUNKERS)
    at.sidebar.multiselect(key="cs_candidates").set_value(CHUNKERS)
    at.sidebar.selectbox(key="cs_coref").set_value("none")
    at.run()
    at.button(key="cs_analyze").click().run()
    assert not trouble(at), trouble(at)
    return at


def run_self_test(at: AppTest) -> AppTest:
    at.radio(key="cs_ret_source").set_value("self-test")
    at.number_input(key="cs_ret_n").set_value(5)
    at.number_input(key="cs_ret_budget").set_value(100)
    at.button(key="cs_ret_run").click().run()
    assert not trouble(at), trouble(at)
    return at


def upload_questions(at: AppTest) -> AppTest:
    rows = [{"question": "Where is the rescue boat moored?", "quote": "The rescue boat is moored at the northern quay"},
            {"question": "What is not here?", "quote": "A sentence that the harbour rules never contain."}]
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at.number_input(key="cs_ret_budget").set_value(100)
    at.radio(key="cs_ret_source").set_value("upload")
    at.file_uploader(key="cs_ret_upload").upload("q.jsonl", data, "application/json")
    at.button(key="cs_ret_run").click().run()
    assert not at.exception
    return at


def test_self_test_fills_the_section_and_the_leaderboard_column(at):
    assert any("No retrieval check" in c.value for c in at.caption)
    run_self_test(at)
    assert any("SELF-TEST" in w.value for w in at.warning)
    board = at.dataframe[0].value
    assert "recall@100" in board.columns and board["recall@100"].notna().all()
    table = at.dataframe[1].value
    assert sorted(table["chunking"]) == sorted(CHUNKERS)
    assert table["recall@budget"].is_monotonic_decreasing
    winner = board.loc[board[""] == "🏆", "chunking"].item()  # the leaderboard's marks, in the retrieval table too
    assert dict(zip(table["chunking"], table[""])) == {c: "🏆" if c == winner else "◆" for c in CHUNKERS}
    assert any(c.proto.id and "cs_ret_curve" in c.proto.id for c in at.get("plotly_chart"))
    # the per-chunking notes the CLI prints are shown too ('whole' is one chunk, fewer than k = 5)
    notes = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("note: ")]  # markdown-escaped
    assert "note: whole: only 1 chunk(s), fewer than k = 5: top-k retrieves every chunk" in notes


def test_weight_reranks_and_zero_restores(at):
    run_self_test(at)
    scores0 = dict(zip(at.dataframe[0].value["chunking"],
                       at.dataframe[0].value["score"]))
    at.slider(key="cs_ret_weight").set_value(3.0).run()
    assert not trouble(at)
    b = at.dataframe[0].value
    changed = dict(zip(b["chunking"], b["score"]))
    assert changed != scores0
    at.slider(key="cs_ret_weight").set_value(0.0).run()
    b = at.dataframe[0].value
    assert dict(zip(b["chunking"], b["score"])) == pytest.approx(scores0)


def test_uploaded_questions_with_a_bad_row(at):
    text = TINY.read_text(encoding="utf-8")
    upload_questions(at)
    assert any("1 questions" in i.value for i in at.info)
    assert "quote not found" in "".join(c.value for c in at.code)
    assert "northern quay" in text


def test_a_failed_run_marks_the_results_below_as_the_previous_ones(at):
    run_self_test(at)
    assert not any("Not updated" in w.value for w in at.warning)
    at.radio(key="cs_ret_source").set_value("upload")
    at.file_uploader(key="cs_ret_upload").upload("bad.csv", b"a,b\n1,2\n", "text/csv")
    at.button(key="cs_ret_run").click().run()
    assert not at.exception
    assert any("no 'question' column" in e.value for e in at.error)
    stale = [w.value for w in at.warning if "Not updated" in w.value]
    assert stale and "results below are still those of the previous run" in stale[0]
    assert any("SELF-TEST" in w.value for w in at.warning)  # the previous (self-test) results, kept and marked


def test_compare_shows_the_question_and_what_each_chunking_retrieved(at):
    upload_questions(at)
    at.switch_page("pages/1_Compare.py").run()
    assert not at.exception, at.exception
    assert any(s.value == "Retrieval, question by question" for s in at.subheader)
    md = "".join(m.value for m in at.markdown)
    assert "rescue boat" in md
    body = "".join(h.proto.body for h in at.get("html"))
    assert any(c.value.startswith("Evidence lies in chunk(s) #") for c in at.caption)
    assert "chunk #0 " not in body and "#0 (rank" not in "".join(c.value for c in at.caption)  # numbered from 1
    # budget 100 tokens (set above): the one 131-token chunk is cut before the evidence at its end
    assert "rank 1" in body and "cut at the budget" in body and "holds evidence" not in body
    assert any("Missed evidence" in e.value and "northern quay" in e.value for e in at.error)
    at.radio(key="cs_ret_q_mode").set_value("top 5").run()  # whole chunks: the evidence is there
    body = "".join(h.proto.body for h in at.get("html"))
    assert "holds evidence" in body and "<mark" in body
    assert any("All the evidence was retrieved" in x.value for x in at.success) and not at.error


def test_snippet_of_a_long_chunk_marks_every_excerpt_it_holds():
    import re

    from ui.retrieval import _snippet

    words = [f"w{i:04d}" for i in range(800)]  # 4000 characters, every word unique
    text = " ".join(words)
    ev = [[text.index("w0200"), text.index("w0215")], [text.index("w0290"), text.index("w0320")]]  # 450 chars apart
    html_ = _snippet(text, 0, len(text), ev)
    marked = re.findall(r"<mark[^>]*>(.*?)</mark>", html_)
    assert marked == [text[s:e] for s, e in ev]  # both excerpts, each in full
    assert html_.count("…") >= 2 and "w0000" not in html_ and "w0799" not in html_  # windows, not the whole chunk
    # excerpts far apart: two windows with an ellipsis between, the text in the gap left out
    far = [[text.index("w0100"), text.index("w0105")], [text.index("w0700"), text.index("w0705")]]
    html_ = _snippet(text, 0, len(text), far)
    assert re.findall(r"<mark[^>]*>(.*?)</mark>", html_) == [text[s:e] for s, e in far]
    assert "w0400" not in html_ and " … " in html_
    # a short chunk is shown whole, its excerpt marked
    assert _snippet(text, 0, 300, [[12, 20]]).count("<mark") == 1


def test_chunkings_with_the_same_chunks_are_named_under_the_chart():
    """On state_of_the_union recursive-1100, recursive-1100+pp and structure cut alike: their curves lie on top
    of each other and the winner's could not be seen. The caption names them."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_document
    from ui.retrieval import same_chunks

    doc = load_document(str(TINY))
    ids = ["whole", "recursive-1100", "sentence-5"]
    report = analyze(doc, Settings(chunkers=tuple(ids), candidates=tuple(ids), coref="none", embedder="none"))
    assert len(report.get("recursive-1100").chunks) == 1  # a short document: one chunk, as 'whole'
    assert same_chunks(report, ids) == [["whole", "recursive-1100"]]
    assert same_chunks(report, ["whole", "sentence-5"]) == []
