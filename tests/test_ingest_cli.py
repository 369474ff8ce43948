"""`chunkscope ingest` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pdf_factory import make_pdf

from chunkscope.cli import SUBCOMMANDS, build_parser, main
from chunkscope.document import Document

ROOT = Path(__file__).resolve().parent.parent


def test_ingest_markdown_prints_summary_and_writes_json(tmp_path, capsys):
    src = tmp_path / "note.md"
    src.write_text("# Title\n\nSome body text about data.\n\n## Part\n\n- a\n- b\n", encoding="utf-8")
    out = tmp_path / "note.json"
    assert main(["ingest", str(src), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    for key in ("name", "format", "language", "characters", "tokens", "pages", "blocks", "headings"):
        assert f"\n{key}" in "\n" + printed
    assert "markdown" in printed and "# Title" in printed and "## Part" in printed
    assert "(section 2)" in printed and "heading 2" not in printed  # the block kinds in the app's words
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data) == {"name", "format", "language", "sha256", "text", "pages", "blocks", "headings", "warnings"}
    doc = Document.from_dict(data)
    doc.check_blocks()
    assert data["headings"][0] == {"start": 0, "end": 7, "level": 1, "title": "Title"}


def test_ingest_pdf_and_json_to_stdout(tmp_path, capsys):
    src = tmp_path / "r.pdf"
    src.write_bytes(make_pdf(pages=2))
    assert main(["ingest", str(src), "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "pdf" and len(data["pages"]) == 2


def test_ingest_errors_are_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "x.docx"
    bad.write_bytes(b"PK")
    assert main(["ingest", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x.docx is not a Word .docx file" in err and "Traceback" not in err
    big = tmp_path / "big.txt"
    big.write_bytes(b"x " * 600)
    assert main(["ingest", str(big), "--max-bytes", "100"]) == 2
    assert "limit" in capsys.readouterr().err
    assert main(["ingest", str(tmp_path / "missing.pdf")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "ingest" in capsys.readouterr().err


def test_parser_is_extensible():
    assert callable(build_parser) and SUBCOMMANDS
    ns = build_parser().parse_args(["ingest", "f.md"])
    assert ns.func.__name__ == "cmd_ingest" and ns.max_bytes is None


def test_console_script_subprocess(tmp_path):
    src = tmp_path / "t.txt"
    src.write_text("Plain text paragraph.\n\nAnother one.\n", encoding="utf-8")
    exe = Path(sys.executable).with_name("chunkscope")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "chunkscope.cli"]
    r = subprocess.run([*cmd, "ingest", str(src)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "format      text" in r.stdout
    r = subprocess.run([*cmd, "ingest", str(tmp_path / "nope.txt")], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr


@pytest.mark.corpus
def test_ingest_dev_corpus_file(corpus_dir, capsys):
    path = next((corpus_dir / "parsed").glob("*EDPS*.json"))
    assert main(["ingest", str(path)]) == 0
    out = capsys.readouterr().out
    assert "format      reference" in out and "blocks      10" in out and "tokens      523" in out
