"""The public API (chunkscope.load/chunk/analyze, Settings files), the README's examples, and the
LangChain adapter: a LangChain pipeline through ChunkScopeSplitter cuts exactly chunkscope.chunk's spans."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import chunkscope
from chunkscope.analysis import Settings, analyze
from chunkscope.integrations.export import pipeline_snippet, winner_settings_text
from chunkscope.integrations.langchain import ChunkScopeSplitter

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "assets" / "sample_policy.md"
PDF = ROOT / "assets" / "sample_report.pdf"
FAST = Settings(chunkers=("recursive-1100+pp", "recursive-600+pp", "page+pp", "whole"),
                candidates=("recursive-1100+pp", "recursive-600+pp", "page+pp"), coref="none")


def readme_examples() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"<!-- doctest -->\s*```python\n(.*?)```", text, flags=re.S)


def test_readme_examples_run(monkeypatch):
    blocks = readme_examples()
    assert len(blocks) >= 2, "the README's API and LangChain examples are marked <!-- doctest -->"
    monkeypatch.chdir(ROOT)
    ns: dict = {}
    for code in blocks:
        exec(compile(code, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert ns["report"].winner in ("recursive-1100+pp", "recursive-600+pp")


def test_load_from_bytes_needs_a_name_and_matches_the_path():
    data = POLICY.read_bytes()
    with pytest.raises(ValueError, match="name="):
        chunkscope.load(data)
    assert chunkscope.load(data, name="sample_policy.md").text == chunkscope.load(POLICY).text


def test_chunk_records_pages_and_heading_paths_of_a_pdf():
    doc = chunkscope.load(PDF)
    chunks = chunkscope.chunk(doc, "page")
    assert [c.pages for c in chunks] == [(i + 1,) for i in range(len(doc.pages))]
    crossing = chunkscope.chunk(doc, "whole")[0]
    assert crossing.pages == tuple(range(1, len(doc.pages) + 1))


def test_a_chunk_opening_with_a_page_header_is_in_the_section_that_follows_it():
    """A page chunk starts with the page's header comment, then a new heading: its heading path
    (API, JSONL export, inspector) named the previous page's section."""
    md = ("# Guide\n\n## 5.3 Testing\n\nRun the tests before you upload.\n\n<!-- PageBreak -->\n\n"
          "<!-- PageHeader: Developer's Reference 12 -->\n\n## 5.4 Layout\n\nThe source package holds the code.\n")
    doc = chunkscope.load(md.encode(), name="guide.md")
    start = md.index("<!-- PageBreak")
    assert [h.title for h in doc.heading_path(start)] == ["Guide", "5.3 Testing"]  # where the chunk starts...
    assert [h.title for h in doc.chunk_heading_path(start, len(md))] == ["Guide", "5.4 Layout"]  # ...its content
    assert doc.content_start(start, len(md)) == md.index("## 5.4")
    assert doc.chunk_heading_path(0, 10) == doc.heading_path(0)
    # the API's chunks and the JSONL export use it
    cut = [c for c in chunkscope.chunk(doc, "structure") if c.start <= start < c.end or c.start >= start]
    assert cut and all(c.heading_path == tuple(h.title for h in doc.chunk_heading_path(c.start, c.end)) for c in cut)


def test_chunk_refuses_bad_chunker_and_parameter():
    doc = chunkscope.load(POLICY)
    with pytest.raises(ValueError, match="unknown chunker"):
        chunkscope.chunk(doc, "nope")
    with pytest.raises(ValueError, match="chunk_size"):
        chunkscope.chunk(doc, "recursive-1100", chunk_size=-3)


def test_langchain_pipeline_equals_chunkscope_spans():
    text = POLICY.read_text(encoding="utf-8")
    splitter = ChunkScopeSplitter("recursive-600+pp", chunk_size=300)
    docs = splitter.split_documents([chunkscope_lc_document(text, {"source": "p"})])
    spans = chunkscope.chunk(chunkscope.load(POLICY), "recursive-600+pp", chunk_size=300)
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in docs] == [(c.start, c.end) for c in spans]
    assert all(d.page_content == text[d.metadata["start_index"]:d.metadata["end_index"]] for d in docs)
    assert all(d.metadata["source"] == "p" for d in docs)
    assert splitter.split_text(text) == [c.text for c in spans]


def chunkscope_lc_document(text: str, meta: dict):
    from langchain_core.documents import Document

    return Document(page_content=text, metadata=meta)


def test_splitter_refuses_bad_parameters_at_construction():
    with pytest.raises(ValueError, match="unknown parameter"):
        ChunkScopeSplitter("recursive-1100", chunk_sise=10)


def test_splitter_page_needs_a_loaded_document_and_works_on_one():
    splitter = ChunkScopeSplitter("page")
    with pytest.raises(ValueError, match="split_chunkscope_document"):
        splitter.split_text("# A\n\nno page markers here at all.\n")
    docs = splitter.split_chunkscope_document(chunkscope.load(PDF))
    assert [d.metadata["pages"] for d in docs] == [[i + 1] for i in range(len(docs))]


def test_splitter_llm_regex_without_endpoint_says_so(monkeypatch):
    for k in [k for k in os.environ if k.startswith(("OPENAI_", "CHUNKSCOPE_LLM"))]:
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(ValueError, match="(?i)llm|endpoint"):
        ChunkScopeSplitter("llm-regex").split_text(POLICY.read_text(encoding="utf-8"))


def test_winner_export_round_trips_into_the_splitter(tmp_path):
    doc = chunkscope.load(POLICY)
    s = FAST.with_(params={"recursive-600+pp": {"chunk_size": 350}})
    report = analyze(doc, s)
    path = tmp_path / "winner.toml"
    path.write_text(winner_settings_text(report), encoding="utf-8")
    splitter = ChunkScopeSplitter.from_settings(path)
    assert splitter.chunker == report.winner
    won = report.get(report.winner)
    got = splitter.create_documents([doc.text])
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in got] == [(c.start, c.end) for c in won.chunks]
    assert Settings.from_file(path).candidates == (report.winner,)
    snippet = pipeline_snippet(report, "winner.toml")
    compile(snippet, "snippet", "exec")
    assert report.winner in snippet and "from_settings" in snippet


def test_one_analyze_entry_point():
    """``chunkscope.analyze`` is the engine's ``analyze`` itself (the CLI, corpus mode and the app call it)."""
    import chunkscope.api
    from chunkscope.analysis.run import analyze as engine_analyze

    assert chunkscope.analyze is chunkscope.api.analyze is analyze is engine_analyze
