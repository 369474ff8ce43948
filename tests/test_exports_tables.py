"""Exports a RAG user indexes and analyses (issue 42): clean and contextualised chunk texts beside the
unchanged spans (records, API, CLI, provenance), and the per-chunk table of every chunking (CSV, Parquet)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

import chunkscope
from chunkscope.analysis import Settings, analyze
from chunkscope.chunk_table import chunk_frame, chunk_table, write_chunk_table
from chunkscope.cli import main
from chunkscope.ingest import load_bytes
from chunkscope.present.inspector import chunk_rows
from chunkscope.report import Report, chunk_records, record_embed_text, text_to_embed
from chunkscope.text.markup import clean_text, contextualize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inspector_sample import sample_markdown  # noqa: E402

FOOTED = ("# Guide\n\n## Setup\n\nInstall the tool<sup></sup> first.\n\n<!-- PageFooter: 3 -->\n\n<!-- PageBreak -->\n\n"
          "<!-- PageHeader: DocBook to LaTeX Publishing 25 / 127 -->\n\nThen   run\tit.  \n")


def test_clean_text_drops_layout_comments_empty_markup_and_extra_space():
    assert clean_text(FOOTED) == "# Guide\n\n## Setup\n\nInstall the tool first.\n\nThen run it."
    note = "An XML sample: <!-- a note --> stays, as does x<sup>2</sup> and **bold**."
    assert clean_text(note) == note  # only layout comments go: any other comment is the document's content
    assert contextualize("Body <!-- PageNumber=\"3\" -->", ["Guide", "Setup"]) == "Guide > Setup\n\nBody"
    assert contextualize("Body", []) == "Body"


def _footed_report(doc):
    return analyze(doc, Settings(chunkers=("whole",), candidates=("whole",), coref="none"))


def test_records_carry_clean_and_context_texts_with_the_span_unchanged():
    doc = load_bytes(FOOTED.encode(), "guide.md")
    report = _footed_report(doc)
    [rec] = chunk_records(report, doc.text, heading_path=doc.chunk_heading_path, pages_of=doc.pages_of,
                          embed_text="clean")
    assert (rec["start"], rec["end"]) == (0, len(doc.text)) and rec["text"] == doc.text  # the span, as before
    assert "PageFooter" in rec["text"] and "PageFooter" not in rec["text_clean"]
    assert "<sup></sup>" not in rec["text_clean"] and "PageHeader" not in rec["text_context"]
    assert rec["text_clean"].endswith("Then run it.")
    assert rec["text_context"] == "Guide\n\n" + rec["text_clean"]
    assert rec["embed_text"] == "clean" and text_to_embed(rec) == rec["text_clean"]
    with pytest.raises(ValueError, match="raw, clean, context"):
        chunk_records(report, doc.text, embed_text="tidy")


def test_the_metrics_score_the_spans_whatever_is_embedded():
    doc = load_bytes(FOOTED.encode(), "guide.md")
    a, b = _footed_report(doc), _footed_report(doc)
    record_embed_text(b, "context")
    assert b.provenance["embed_text"] == "context" and "embed_text" not in a.provenance
    assert [c.metrics for c in a.chunkings] == [c.metrics for c in b.chunkings]
    assert Report.from_dict(json.loads(b.to_json())).provenance["embed_text"] == "context"


def test_api_chunks_carry_the_texts_and_the_choice():
    doc = chunkscope.load(FOOTED.encode(), name="guide.md")
    [c] = chunkscope.chunk(doc, "whole", embed_text="context")
    assert c.text == doc.text[c.start:c.end] and "PageBreak" in c.text
    assert "PageBreak" not in c.text_clean and c.text_context.startswith("Guide\n\n")
    assert c.embedding_text == c.text_context
    assert chunkscope.chunk(doc, "whole")[0].embedding_text == c.text  # raw by default
    with pytest.raises(ValueError, match="choose one of raw, clean, context"):
        chunkscope.chunk(doc, "whole", embed_text="cleaned")


def test_cli_chunk_writes_the_texts_and_records_embed_text(tmp_path, capsys):
    md = tmp_path / "guide.md"
    md.write_text(FOOTED, encoding="utf-8")
    out = tmp_path / "chunks.json"
    assert main(["chunk", str(md), "--chunker", "whole", "--embed-text", "clean", "--json", str(out)]) == 0
    [c] = json.loads(out.read_text(encoding="utf-8"))["chunks"]
    assert c["embed_text"] == "clean" and c["text"] == FOOTED[c["start"]:c["end"]]
    assert "PageFooter" not in c["text_clean"]


@pytest.fixture(scope="module")
def policy():
    doc = load_bytes(sample_markdown().encode(), "policy.md")
    ids = ("recursive-1100+pp", "fixed-512", "sentence-5")
    return doc, analyze(doc, Settings(chunkers=ids, candidates=ids))


def test_chunk_table_has_a_row_per_chunk_with_the_inspectors_flags(policy):
    doc, report = policy
    rows = chunk_table(report, doc)
    ok = [c for c in report.chunkings if c.ok]
    assert len(ok) == 3 and len(rows) == sum(len(c.chunks) for c in ok)
    for c in ok:
        mine = [r for r in rows if r["chunking"] == c.id]
        assert [(r["chunk"], r["start"], r["end"], r["tokens"]) for r in mine] == \
            [(i, ch.start, ch.end, ch.tokens) for i, ch in enumerate(c.chunks)]
        broken = {x.boundary for x in c.diagnostics["BI"].broken}
        split = {x.boundary for x in c.diagnostics["RC"].split}
        over = {o.chunk for o in c.diagnostics["SC"].out_of_size}
        assert [r["breaks_block"] for r in mine] == [bool({r["start"], r["end"]} & broken) for r in mine]
        assert [r["splits_pair"] for r in mine] == [bool({r["start"], r["end"]} & split) for r in mine]
        assert [r["out_of_size"] for r in mine] == [r["chunk"] in over for r in mine]
        for r, ins in zip(mine, chunk_rows(doc, c)):  # the Chunk inspector reads the same flags
            assert (r["blocks_cut"], r["pairs_split"], r["size"] or None) == (ins.blocks_cut, ins.pairs_split, ins.size)
            assert r["breaks_block"] == (ins.blocks_cut > 0) and r["splits_pair"] == (ins.pairs_split > 0)
            assert r["cohesion"] == ins.cohesion or (math.isnan(r["cohesion"]) and math.isnan(ins.cohesion))
    table = next(b for b in doc.blocks if b.kind == "table")
    by = {cid: [r for r in rows if r["chunking"] == cid] for cid in ("recursive-1100+pp", "fixed-512")}
    assert not any(r["breaks_block"] for r in by["recursive-1100+pp"])  # keeps the table whole
    cutting = [r for r in by["fixed-512"] if r["breaks_block"]]
    assert any(table.start < r["end"] < table.end or table.start < r["start"] < table.end for r in cutting)
    assert any(r["splits_pair"] for r in rows) and any(r["out_of_size"] for r in rows)  # sentence-5's
    assert sum(r["winner"] for r in rows) == len(report.get(report.winner).chunks)
    assert rows[0]["heading_path"] == "Northwind data handling policy"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_chunk_table_round_trips_through_pandas(policy, tmp_path, suffix):
    doc, report = policy
    path = tmp_path / f"chunks{suffix}"
    n = write_chunk_table(report, doc, path)
    back = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    want = chunk_frame(report, doc)
    assert n == len(back) == len(want)
    assert list(back.columns) == list(want.columns)
    for col in ("id", "chunking", "chunk", "start", "end", "tokens", "breaks_block", "splits_pair", "out_of_size"):
        assert back[col].tolist() == want[col].tolist(), col
    assert back["cohesion"].fillna(-1).round(6).tolist() == want["cohesion"].fillna(-1).round(6).tolist()


def test_chunk_table_refuses_another_extension(policy, tmp_path):
    doc, report = policy
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        write_chunk_table(report, doc, tmp_path / "chunks.xlsx")


def test_cli_analyze_writes_the_table_and_records_embed_text(tmp_path, capsys):
    md = tmp_path / "policy.md"
    md.write_text(sample_markdown(), encoding="utf-8")
    table, rep = tmp_path / "chunks.csv", tmp_path / "report.json"
    assert main(["analyze", str(md), "--chunkers", "recursive-1100+pp,fixed-512", "--candidates",
                 "recursive-1100+pp,fixed-512", "--coref", "none", "--quiet", "--embed-text", "context",
                 "--chunks-table", str(table), "--json", str(rep)]) == 0
    assert f"wrote {table}" in capsys.readouterr().out
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert report["provenance"]["embed_text"] == "context"
    df = pd.read_csv(table)
    assert len(df) == sum(len(c["chunks"]) for c in report["chunkings"] if c["status"] == "ok")
    assert set(df["chunking"]) == {"recursive-1100+pp", "fixed-512"}
    assert main(["analyze", str(md), "--chunks-table", str(tmp_path / "t.xlsx")]) != 0
    assert "--chunks-table" in capsys.readouterr().err
    plain = tmp_path / "plain.json"
    assert main(["analyze", str(md), "--chunkers", "recursive-1100+pp", "--candidates", "recursive-1100+pp",
                 "--coref", "none", "--quiet", "--json", str(plain)]) == 0
    assert "embed_text" not in json.loads(plain.read_text(encoding="utf-8"))["provenance"]  # a plain run's report as before


def test_the_overviews_exports_carry_the_chosen_text(policy):
    from ui.overview import _jsonl_text, _report_json

    doc, report = policy
    lines = [json.loads(x) for x in _jsonl_text(report, doc, "context").splitlines()]
    assert len(lines) == len(report.get(report.winner).chunks)
    assert all(r["embed_text"] == "context" and r["text_context"].startswith(r["heading_path"][0]) for r in lines)
    assert json.loads(_report_json(report, "clean"))["provenance"]["embed_text"] == "clean"
    assert "embed_text" not in report.provenance  # the session's report is not changed


def test_corpus_winners_carry_the_texts_and_the_choice(tmp_path):
    from chunkscope.corpus.run import RunOptions, run_corpus

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(FOOTED, encoding="utf-8")
    settings = Settings(chunkers=("whole",), candidates=("whole",), coref="none")

    def winners(choice: str) -> list[dict]:
        summary = run_corpus(tmp_path / "docs", tmp_path / "out", settings, options=RunOptions(embed_text=choice))
        assert summary["embed_text"] == choice
        return [json.loads(x) for x in (tmp_path / "out" / "winners.jsonl").read_text(encoding="utf-8").splitlines()]

    [rec] = winners("clean")
    assert rec["embed_text"] == "clean" and text_to_embed(rec) == rec["text_clean"]
    assert "PageFooter" in rec["text"] and "PageFooter" not in rec["text_clean"]
    [again] = winners("context")  # resumed: the document is not analysed again, the choice still applies
    assert again["embed_text"] == "context" and again["text"] == rec["text"]
    with pytest.raises(ValueError, match="--embed-text"):
        RunOptions(embed_text="tidy").validate()


def test_records_written_before_the_clean_texts_get_them(tmp_path):
    from chunkscope.report import with_embed_text

    old = {"text": "Body<sup></sup>\n\n<!-- PageBreak -->\n\nmore", "heading_path": ["Guide"], "start": 0}
    rec = with_embed_text(old, "context")
    assert rec["text_clean"] == "Body\n\nmore" and rec["text_context"] == "Guide\n\nBody\n\nmore"
    assert text_to_embed(rec) == rec["text_context"] and "embed_text" not in old
