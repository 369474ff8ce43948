"""`chunkscope chunkers` and `chunkscope chunk`."""

from __future__ import annotations

import json

from chunkscope.cli import main


def test_chunkers_lists_ids_and_params(capsys):
    assert main(["chunkers"]) == 0
    out = capsys.readouterr().out
    for cid in ("page", "recursive-1100", "langchain-default", "fixed-512", "structure", "whole"):
        assert cid in out
    assert "chunk_size=1100" in out
    # a default that means "not set" says what it stands for: the semantic chunker runs with 95, not 0
    assert "threshold_amount=0.0 (the type's default: 95 for gradient" in out
    assert main(["chunkers", "--json", "--pp"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any(d["id"] == "recursive-600+pp" for d in data)
    semantic = next(d for d in data if d["id"] == "semantic")
    amount = next(p for p in semantic["params"] if p["name"] == "threshold_amount")
    assert amount["default"] == 0.0 and "95" in amount["unset"]
    assert next(p for p in semantic["params"] if p["name"] == "buffer_size")["unset"] is None


def test_chunk_prints_and_writes_json(tmp_path, capsys):
    md = tmp_path / "doc.md"
    md.write_text("# Title\n\n" + "\n\n".join(f"Paragraph {i} has some words in it." for i in range(80)), encoding="utf-8")
    out = tmp_path / "chunks.json"
    assert main(["chunk", str(md), "--chunker", "recursive-600", "--param", "chunk_size=100",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "all text covered, 0 gaps, 0 overlaps" in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data) == {"document", "chunker", "params", "chunks", "audit"}
    assert data["params"]["chunk_size"] == 100
    assert data["chunks"][0]["start"] == 0 and data["chunks"][-1]["end"] == len(data["document"]["text"])
    assert all(c["tokens"] <= 100 for c in data["chunks"])
    assert data["audit"]["ok"] is True


def test_chunk_errors_are_one_line(tmp_path, capsys):
    md = tmp_path / "doc.md"
    md.write_text("hello world", encoding="utf-8")
    assert main(["chunk", str(md), "--chunker", "nope"]) == 2
    assert "unknown chunker" in capsys.readouterr().err
    assert main(["chunk", str(md), "-c", "fixed-512", "-p", "size=abc"]) == 2
    assert "size" in capsys.readouterr().err
    assert main(["chunk", str(md), "-c", "page"]) == 2
    assert "skipped" in capsys.readouterr().err
