"""Usage errors of the ``chunkscope`` command: what was asked for explicitly and cannot be done is one
line on stderr and exit code 2, before any work (never a silently degraded result, never a
traceback); ``--json -`` keeps stdout parseable."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chunkscope.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "assets" / "sample_policy.md"
DOC_MD = ("# Rules\n\nThe Commission shall publish the list. It shall keep it up to date. "
          "Member States shall inform the Commission when they change their rules.\n")


@pytest.fixture
def md(tmp_path) -> Path:
    p = tmp_path / "p.md"
    p.write_text(DOC_MD, encoding="utf-8")
    return p


@pytest.fixture
def no_analysis(monkeypatch):
    """Usage errors must be found before the analysis starts."""
    import chunkscope.analysis

    def boom(*a, **k):
        raise AssertionError("analyze() must not run for a usage error")

    monkeypatch.setattr(chunkscope.analysis, "analyze", boom)


@pytest.fixture
def mentions(tmp_path) -> Path:
    from chunkscope.coref import get_pairs
    from chunkscope.ingest import load_document

    p = tmp_path / "m.json"
    doc = load_document(str(POLICY))
    p.write_text(json.dumps([x.to_dict() for x in get_pairs(doc, "heuristic").pairs]), encoding="utf-8")
    return p


def one_error_line(capsys, needle: str) -> str:
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert needle in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert cap.out == ""
    return err


# ------------------------------------------------------------------ 2. --embedder
@pytest.mark.parametrize("command", ["analyze", "sweep", "retrieval"])
def test_embedder_that_cannot_be_loaded_is_a_usage_error(command, md, tmp_path, capsys, no_analysis, monkeypatch):
    import chunkscope.tune

    monkeypatch.setattr(chunkscope.tune, "iter_sweep", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    extra = {"analyze": [], "sweep": ["--chunker", "recursive-1100", "--param", "chunk_size=200:400:100"],
             "retrieval": ["--self-test", "2"]}[command]
    afile = tmp_path / "model.bin"
    afile.write_text("x")
    for model, needle in ((str(tmp_path / "nonexistent" / "model"), "no directory"),
                          (str(afile), "is not a directory"),
                          ("chunkscope-tests/no-such-model", "not in the local Hugging Face cache")):
        rc = main([command, str(md), "--embedder", model, *extra] + (["--quiet"] if command != "retrieval" else []))
        err = one_error_line(capsys, needle)
        assert rc == 2 and err.startswith(f"chunkscope {command}: error: --embedder {model}: ")


def test_hub_embedder_is_asked_for_once_not_retried_for_minutes(md, capsys, no_analysis, monkeypatch):
    """Without HF_HUB_OFFLINE, a hub id that is not cached costs one short request, not the
    download's retries (minutes when the hub is unreachable)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens: refused at once
    t0 = time.perf_counter()
    rc = main(["analyze", str(md), "--quiet", "--embedder", "sentence-transformers/all-mpnet-base-v2"])
    assert time.perf_counter() - t0 < 15
    err = one_error_line(capsys, "the hub cannot be reached")
    assert rc == 2 and "download it first or pass a local directory" in err


def test_embedding_backend_for_another_model_is_a_usage_error(md, capsys, no_analysis):
    assert main(["analyze", str(md), "--quiet", "--embedder", "org/model", "--embedding-backend", "onnx"]) == 2
    one_error_line(capsys, "runs the bundled model only")


def test_corpus_checks_the_embedder_without_loading_it(tmp_path, monkeypatch):
    from chunkscope.cli.settings import SettingsError, settings_from_args
    from chunkscope.embeddings.embedder import Embedder

    def no_load(*a, **k):
        raise AssertionError("the corpus parent process must not load the model")

    monkeypatch.setattr(Embedder, "load", no_load)
    args = build_parser().parse_args(["corpus", str(tmp_path), "--out", str(tmp_path / "r"),
                                      "--embedder", str(tmp_path / "missing")])
    with pytest.raises(SettingsError, match="no directory"):
        settings_from_args(args)
    args = build_parser().parse_args(["corpus", str(tmp_path), "--out", str(tmp_path / "r"),
                                      "--embedder", str(tmp_path)])
    assert settings_from_args(args).embedder == str(tmp_path)


def test_engine_failures_are_one_line_without_a_traceback(tmp_path):
    """A chunker that fails is a row of the leaderboard and one line on stderr, also under --quiet;
    the traceback only with CHUNKSCOPE_DEBUG=1 (run in a fresh process: pytest's own log capture
    would hide Python's last-resort handler, which printed the traceback)."""
    script = (
        "import sys\n"
        "from chunkscope.chunkers import registry\n"
        "from chunkscope.chunkers.base import ChunkerSpec\n"
        "def fail(doc, params, ctx=None):\n"
        "    raise RuntimeError('the model is gone')\n"
        "registry.register(ChunkerSpec(id='boom-test', label='boom', description='fails', params=(), fn=fail))\n"
        "from chunkscope.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = [sys.executable, "-c", script, "analyze", str(POLICY), "--quiet", "--chunkers", "boom-test,fixed-512",
            "--coref", "none"]
    env = {**os.environ, "CHUNKSCOPE_DEBUG": "0"}
    res = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert "chunker boom-test failed: RuntimeError: the model is gone" in res.stderr
    assert "boom-test" in res.stdout and "fail" in res.stdout  # the leaderboard row says it too
    res = subprocess.run(args, capture_output=True, text=True, timeout=300, env={**env, "CHUNKSCOPE_DEBUG": "1"})
    assert "Traceback" in res.stderr  # for the developer who asks


# ------------------------------------------------------------------ 3. --coref / --mentions
@pytest.mark.parametrize("flags, needle", [
    (["--coref", "precomputed"], "--coref precomputed needs --mentions FILE"),
    (["--coref", "heuristic", "--mentions", "M"], "--mentions and --coref heuristic conflict"),
    (["--coref", "none", "--mentions", "M"], "--mentions and --coref none conflict"),
    (["--coref", "learned", "--mentions", "M"], "--mentions and --coref learned conflict"),
])
def test_explicit_coref_that_cannot_run_or_conflicts_is_a_usage_error(flags, needle, md, mentions, capsys,
                                                                       no_analysis):
    flags = [str(mentions) if f == "M" else f for f in flags]
    assert main(["analyze", str(md), "--quiet", "--chunkers", "whole", *flags]) == 2
    one_error_line(capsys, needle)


@pytest.mark.skipif(importlib.util.find_spec("maverick") is not None, reason="maverick-coref is installed")
def test_coref_maverick_without_its_package_is_a_usage_error(md, capsys, no_analysis):
    assert main(["analyze", str(md), "--quiet", "--coref", "maverick"]) == 2
    one_error_line(capsys, "--coref maverick: maverick backend unavailable: package 'maverick-coref' is not installed")


def test_coref_that_fails_while_running_is_a_usage_error(md, capsys, monkeypatch):
    import chunkscope.coref
    from chunkscope.coref import CorefError

    def fail(*a, **k):
        raise CorefError("model weights not found")

    monkeypatch.setattr(chunkscope.coref, "get_pairs", fail)
    assert main(["analyze", str(md), "--quiet", "--chunkers", "whole", "--coref", "heuristic"]) == 2
    one_error_line(capsys, "--coref heuristic: model weights not found")


def test_mentions_alone_or_with_precomputed_are_used(mentions, tmp_path, capsys, monkeypatch):
    from chunkscope.coref import precomputed

    reads = []
    read_raw = precomputed.read_raw
    monkeypatch.setattr(precomputed, "read_raw", lambda path: reads.append(path) or read_raw(path))
    for flags in (["--mentions", str(mentions)], ["--coref", "precomputed", "--mentions", str(mentions)]):
        mentions.write_text(mentions.read_text() + " " * len(reads), encoding="utf-8")  # a new file each time
        out = tmp_path / "r.json"
        n = len(reads)
        assert main(["analyze", str(POLICY), "--quiet", "--chunkers", "whole", "--json", str(out), *flags]) == 0
        assert json.loads(out.read_text())["coref"]["backend"] == "precomputed"
        assert len(reads) == n + 1  # checked up front, then used: read once
    capsys.readouterr()


def test_explicit_coref_drops_the_settings_files_mentions(mentions, tmp_path):
    """--coref heuristic means the heuristic, even when --config names a mentions file (the engine
    would otherwise read the file instead)."""
    from chunkscope.cli.settings import settings_from_args

    cfg = tmp_path / "settings.json"
    cfg.write_text(json.dumps({"mentions": str(mentions)}), encoding="utf-8")
    s = settings_from_args(build_parser().parse_args(["analyze", str(POLICY), "--config", str(cfg)]))
    assert s.mentions == str(mentions)  # no --coref: the file's mentions are used
    s = settings_from_args(build_parser().parse_args(["analyze", str(POLICY), "--config", str(cfg),
                                                      "--coref", "heuristic"]))
    assert s.coref == "heuristic" and s.mentions is None


def test_app_path_is_unchanged_and_corpus_finds_its_own_mentions(mentions, tmp_path):
    """The app builds Settings itself (no CLI): a mentions file still means 'use it'. Corpus mode
    takes --coref precomputed without --mentions (mentions lie beside each document)."""
    from chunkscope.analysis import Settings
    from chunkscope.analysis.coreference import coref_pairs
    from chunkscope.cli.settings import settings_from_args
    from chunkscope.ingest import load_document

    pairs, _, info = coref_pairs(load_document(str(POLICY)), Settings(coref="heuristic", mentions=str(mentions)))
    assert info["backend"] == "precomputed" and pairs
    args = build_parser().parse_args(["corpus", str(tmp_path), "--out", str(tmp_path / "r"), "--coref", "precomputed"])
    assert settings_from_args(args).coref == "precomputed"


# ------------------------------------------------------------------ 4. --json -
def test_analyze_json_to_stdout_is_only_json(capsys):
    assert main(["analyze", str(POLICY), "--quiet", "--chunkers", "whole,fixed-512", "--coref", "none",
                 "--json", "-"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["schema"] == "chunkscope.report/1"
    assert "winner:" in cap.err and "wrote" not in cap.err + cap.out


def test_retrieval_json_to_stdout_is_only_json(capsys):
    assert main(["retrieval", str(POLICY), "--self-test", "3", "--chunkers", "fixed-512", "--json", "-"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["schema"].startswith("chunkscope.retrieval/")
    assert "fixed-512" in cap.err and "wrote" not in cap.err + cap.out


# ------------------------------------------------------------------ 5. ingest --language
@pytest.mark.parametrize("value, needle", [
    ("english", "did you mean en?"),
    ("xx", "two letters, e.g. en, de, fr"),
    ("en-US", "did you mean en?"),
    ("und", "ISO 639-1"),
])
def test_ingest_language_must_be_an_iso_639_1_code(value, needle, md, capsys):
    assert main(["ingest", str(md), "--language", value]) == 2
    err = one_error_line(capsys, needle)
    assert f"--language: {value!r} is not an ISO 639-1 language code" in err


def test_ingest_language_code_is_accepted_in_any_case(md, capsys):
    assert main(["ingest", str(md), "--language", "DE", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "de"


@pytest.mark.parametrize("command", ["analyze", "chunk", "sweep", "retrieval"])
def test_every_command_that_reads_a_document_takes_language(command, md, capsys, no_analysis, monkeypatch):
    import chunkscope.cli.common

    def no_model(*a, **k):
        raise AssertionError("a bad --language must be refused before an embedding model is checked or loaded")

    monkeypatch.setattr(chunkscope.cli.common, "check_embedder", no_model)
    assert main([command, str(md), *COMMANDS_LANG[command], "--language", "english"]) == 2
    one_error_line(capsys, "did you mean en?")


def test_language_set_by_hand_reaches_the_document_of_chunk(md, capsys):
    assert main(["chunk", str(md), "--chunker", "whole", "--language", "DE", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["document"]["language"] == "de"


COMMANDS_LANG = {"analyze": ["--chunkers", "whole"], "chunk": ["--chunker", "whole"],
                 "sweep": ["--chunker", "recursive-1100", "--param", "chunk_size=200:400:100"],
                 "retrieval": ["--self-test", "2"]}


def test_analyze_language_set_by_hand_decides_rc_as_in_the_app(md, capsys):
    """The app's "set by hand" language has its command-line twin: RC only for English."""
    assert main(["analyze", str(md), "--quiet", "--chunkers", "whole,fixed-512", "--language", "de", "--json", "-"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["document"]["language"] == "de"
    assert all(c["metrics"].get("RC") is None for c in rep["chunkings"])
    assert "non-English document (de)" in rep["coref"]["reason"]
    assert main(["analyze", str(md), "--quiet", "--chunkers", "whole,fixed-512", "--language", "en", "--json", "-"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["document"]["language"] == "en" and rep["coref"]["backend"] == "heuristic"


# ------------------------------------------------------------------ 6. output paths
COMMANDS = {
    "analyze": ["--quiet", "--chunkers", "whole"],
    "sweep": ["--chunker", "recursive-1100", "--param", "chunk_size=200:400:100", "--quiet"],
    "retrieval": ["--self-test", "2"],
    "ingest": [],
    "chunk": ["--chunker", "fixed-512"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_output_path_is_checked_before_any_work(command, md, tmp_path, capsys, monkeypatch):
    import chunkscope.ingest

    def no_work(*a, **k):
        raise AssertionError("nothing may be loaded for an unusable output path")

    monkeypatch.setattr(chunkscope.ingest, "load_document", no_work)
    folder = tmp_path / "somefolder"
    folder.mkdir()
    assert main([command, str(md), *COMMANDS[command], "--json", str(folder)]) == 2
    one_error_line(capsys, f"--json: {folder} is a directory: give a file name")
    assert main([command, str(md), *COMMANDS[command], "--json", str(tmp_path / "no" / "r.json")]) == 2
    one_error_line(capsys, f"--json: directory {tmp_path / 'no'} does not exist")
    if sys.platform.startswith("linux") and Path("/sys/kernel").is_dir():  # unwritable even for root
        assert main([command, str(md), *COMMANDS[command], "--json", "/sys/chunkscope-test.json"]) == 2
        one_error_line(capsys, "--json: cannot write /sys/chunkscope-test.json: ")


def test_output_check_leaves_nothing_behind(md, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["ingest", str(tmp_path / "missing.md"), "--json", str(out)]) == 2
    capsys.readouterr()
    assert not out.exists()  # the file made to test the folder went again


def test_a_late_write_error_is_one_line(md, tmp_path, capsys, monkeypatch):
    def full(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "r.json"
    assert main(["ingest", str(md), "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"chunkscope ingest: error: --json: cannot write {out}: {os.strerror(errno.ENOSPC)}"


# ------------------------------------------------------------------ empty lists
@pytest.mark.parametrize("flag, value", [("--chunkers", ""), ("--candidates", " "), ("--weights", ",")])
def test_an_empty_list_is_not_the_defaults(flag, value, md, capsys, no_analysis):
    """``--chunkers ''`` ran every default chunker without a word."""
    assert main(["analyze", str(md), flag, value]) == 2
    one_error_line(capsys, f"{flag}: empty")


def test_mentions_file_of_another_document_is_refused_up_front(md, tmp_path, capsys, no_analysis):
    """Offsets that fit the text but land on no pronouns: refused before the analysis (it ran without RC)."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps([[[2, 6], [13, 16]], [[2, 6], [30, 33]]]), encoding="utf-8")  # "Comm", "publ"
    assert main(["analyze", str(md), "--quiet", "--mentions", str(other)]) == 2
    one_error_line(capsys, "is this the mentions file of another document?")


# ------------------------------------------------------------------ abbreviated options
@pytest.mark.parametrize("argv", [["analyze", "{md}", "--chunker", "page"], ["analyze", "{md}", "--candidate", "page"],
                                  ["corpus", "{dir}", "--out", "{out}", "--job", "2"]])
def test_an_abbreviated_option_is_refused_not_guessed(argv, md, tmp_path, capsys, no_analysis):
    """'analyze --chunker page' (the chunk command's option) quietly ran as --chunkers page."""
    from chunkscope.cli import main

    args = [a.format(md=md, dir=md.parent, out=tmp_path / "res") for a in argv]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    assert f"unrecognized arguments: {args[-2]} {args[-1]}" in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


def test_corpus_help_does_not_list_one_documents_mentions(capsys):
    from chunkscope.cli import main

    with pytest.raises(SystemExit):
        main(["corpus", "--help"])
    out = capsys.readouterr().out
    assert "--mentions" not in out and "--coref" in out
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    assert "--mentions FILE" in capsys.readouterr().out


@pytest.mark.parametrize("argv, where, needle", [
    (["analyze", "{md}", "--frobnicate"], "chunkscope analyze", "unrecognized arguments: --frobnicate"),
    (["analyze", "{md}", "--max-tokens", "900.7"], "chunkscope analyze", "invalid int value: '900.7'"),
    (["analyze"], "chunkscope analyze", "required: FILE"),
    (["frobnicate"], "chunkscope", "invalid choice: 'frobnicate'"),
    (["--frobnicate", "analyze", "{md}"], "chunkscope", "unrecognized arguments: --frobnicate"),
])
def test_a_usage_error_is_one_line_named_by_its_command(argv, where, needle, md, capsys, no_analysis):
    """argparse printed the whole usage (about 20 lines for analyze) before the error, and an unknown option of a
    command was reported with the top level's usage."""
    from chunkscope.cli import main

    with pytest.raises(SystemExit) as e:
        main([a.format(md=md) for a in argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{where}: error: ") and needle in err, err
    assert err.rstrip().endswith(f"(see {where} --help)")
