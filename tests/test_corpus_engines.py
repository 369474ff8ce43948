"""Corpus runner pieces shared by both engines (no Ray needed): the atomic result store (folder and
fsspec URI), resume without loading a model, progress stats, run options, Wilcoxon tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkscope.analysis import Settings
from chunkscope.corpus.run import RunOptions, format_stats, run_corpus
from chunkscope.corpus.store import ResultStore

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"
FAST = Settings(chunkers=("recursive-1100+pp", "recursive-600+pp"), candidates=("recursive-1100+pp", "recursive-600+pp"),
                coref="none")


@pytest.mark.parametrize("uri", [False, True])
def test_store_writes_atomically(tmp_path, uri):
    root = tmp_path / "res"
    store = ResultStore(root.as_uri() if uri else root)
    assert (store.local_dir is None) == uri
    store.makedirs("reports")
    store.write_text("reports/a.json", '{"x": 1}')
    store.write_text("reports/a.json", '{"x": 2}')  # replaced, never appended
    assert json.loads(store.read_text("reports/a.json")) == {"x": 2}
    with store.open_write("w.jsonl") as fh:
        fh.write("one\n")
    with pytest.raises(RuntimeError), store.open_write("w.jsonl") as fh:  # a failed write keeps the old file
        fh.write("half")
        raise RuntimeError("boom")
    assert (root / "w.jsonl").read_text() == "one\n"
    assert sorted(p.name for p in root.rglob("*")) == ["a.json", "reports", "w.jsonl"]  # no temporary left
    assert store.is_file("w.jsonl") and not store.is_file("nope")


def test_run_into_a_file_uri_and_resume_without_models(tmp_path, monkeypatch):
    """Results under a file:// URI read back by corpus-report; a rerun loads no model and analyses nothing."""
    import chunkscope.corpus.run as R
    import chunkscope.corpus.worker as W
    from chunkscope.corpus.report import CorpusResults, text_report

    uri = (tmp_path / "res").as_uri()
    events: list[dict] = []
    s1 = run_corpus(FIXTURES, uri, FAST.with_(embedder=str(tmp_path / "no-model")),
                    progress=lambda d, t, e: events.append(e))
    assert s1["counts"] == {"ok": 4, "skipped": 0, "failed": 1, "documents": 5, "with_report": 4}
    assert "broken.pdf" in next(e for e in s1["documents"] if e["status"] == "failed")["reason"]
    last = events[-1]["stats"]
    assert last["done"] == 5 and last["failed"] == 1 and last["ok"] == 4 and last["left"] == 0
    res = CorpusResults.load(uri)
    assert "Wilcoxon" in text_report(res) and len(res.documents()) == 4

    def boom(*a, **k):
        raise AssertionError("a resumed run must not load a model")

    from chunkscope.analysis import resources as AR

    monkeypatch.setattr(AR, "shared_resources", boom)  # what a worker loads its model through
    monkeypatch.setattr(W, "pin_threads", boom)
    monkeypatch.setattr(R, "pin_threads", boom)
    s2 = run_corpus(FIXTURES, uri, FAST.with_(embedder=str(tmp_path / "no-model")), options=RunOptions(engine="ray"))
    assert s2["counts"]["skipped"] == 4 and s2["counts"]["ok"] == 0  # Ray is not even started
    # the corrupt file failed on its own: its reason is kept and it is not tried again...
    bad = next(e for e in s2["documents"] if e["status"] == "failed")
    assert bad["resumed"] and "broken.pdf" in bad["reason"]
    # ...unless asked to
    from chunkscope.corpus.plan import plan_corpus
    from chunkscope.corpus.store import ResultStore

    s_dict = FAST.with_(embedder=str(tmp_path / "no-model")).to_dict()
    assert [t["rel"] for t in plan_corpus(FIXTURES, ResultStore(uri), s_dict, retry_failed=True)[1]] == ["broken.pdf"]
    assert plan_corpus(FIXTURES, ResultStore(uri), s_dict)[1] == []
    assert sorted(e["report"] for e in s2["documents"] if e.get("report")) == sorted(
        e["report"] for e in s1["documents"] if e.get("report"))


def test_resume_key_includes_provenance(monkeypatch):
    import chunkscope.provenance as P
    from chunkscope.corpus.plan import resume_key

    k1 = resume_key("sha", "", {"coref": "none"})
    monkeypatch.setattr(P, "__version__", "999.0")
    assert resume_key("sha", "", {"coref": "none"}) != k1
    # ... and the build: a results folder made by other code is analysed again, whatever the version says
    monkeypatch.undo()
    assert resume_key("sha", "", {"coref": "none"}) == k1
    monkeypatch.setattr(P, "build", lambda: "other-code")
    assert resume_key("sha", "", {"coref": "none"}) != k1


def test_the_build_digest_follows_the_engine_files(tmp_path):
    from chunkscope.version import build, digest

    assert build() == build() and len(build()) == 12
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "model.json").write_text("{}")
    (tmp_path / "pkg" / "prompt.txt").write_text("Write a regex")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"1")
    first = digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"2")  # bytecode: not the engine
    assert digest(tmp_path / "pkg") == first
    (tmp_path / "pkg" / "prompt.txt").write_text("Write a regular expression")  # an LLM prompt is
    assert digest(tmp_path / "pkg") != first
    second = digest(tmp_path / "pkg")
    (tmp_path / "pkg" / "sub" / "model.json").write_text('{"w": 1}')
    assert digest(tmp_path / "pkg") != second


def test_options_and_stats():
    with pytest.raises(ValueError, match="--engine ray"):
        RunOptions(address="auto").validate()
    with pytest.raises(ValueError, match="jobs"):
        RunOptions(jobs=0).validate()
    with pytest.raises(ValueError, match="engine"):
        RunOptions(engine="spark").validate()
    line = format_stats({"done": 12, "total": 40, "failed": 1, "per_minute": 3.2, "eta": 525.0, "retried": 1})
    assert line == "12/40 done · 1 failed · 3.2 docs/min · ETA 8m45s · 1 retried"


def test_the_ray_extra_installs_ray_client():
    """The docs' `--address ray://HEAD:10001` after `pip install 'chunkscope[ray]'`: the extra asks for Ray
    Client (ray[client]), and constraints.txt (make setup) pins what that adds to Ray."""
    import re
    import tomllib
    from importlib import metadata

    root = Path(__file__).resolve().parent.parent
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ray"]
    assert any(re.match(r"ray\[[^]]*\bclient\b[^]]*\]", r) for r in extra), extra
    try:
        requires = metadata.requires("ray") or []
    except metadata.PackageNotFoundError:
        pytest.skip("Ray is not installed")
    client = {re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0].lower() for r in requires if re.search(r"extra == .client.", r)}
    pinned = {line.split("==")[0].strip().lower().replace("_", "-") for line in
              (root / "constraints.txt").read_text().splitlines() if "==" in line}
    assert client and client <= pinned, client - pinned


def test_cli_engine_flags_are_checked(tmp_path, capsys):
    from chunkscope.cli import main

    assert main(["corpus", str(FIXTURES), "--out", str(tmp_path / "r"), "--address", "auto"]) == 2
    assert "--engine ray" in capsys.readouterr().err
    assert main(["corpus", str(FIXTURES), "--out", str(tmp_path / "r"), "--engine", "ray", "--jobs", "0"]) == 2


def _synthetic_results(tmp_path: Path) -> Path:
    """Six documents, chunkers A/B (candidates) and C: A wins 4 documents, B 2; C is always lower."""
    import pandas as pd

    from chunkscope.report import METRICS

    rows, docs = [], []
    for i in range(6):
        name = f"d{i}"
        winner = "A" if i < 4 else "B"
        vals = {"A": 0.5 + 0.01 * i, "B": 0.5 + 0.01 * i + (0.02 * (i + 1) if i >= 4 else -0.02 * (i + 1)),
                "C": 0.3 - 0.01 * i * i}
        for cid, v in vals.items():
            for m in (*METRICS, "score"):
                rows.append({"document": name, "domain": "", "language": "en", "chunker": cid,
                             "candidate": cid != "C", "winner": cid == winner, "metric": m, "value": v})
        docs.append({"name": name, "status": "ok", "report": f"reports/{name}.json", "winner": winner, "tokens": 10})
    out = tmp_path / "syn"
    out.mkdir()
    pd.DataFrame(rows).to_parquet(out / "metrics.parquet", index=False)
    (out / "summary.json").write_text(json.dumps({"schema": "chunkscope.corpus.run/1", "documents": docs,
                                                  "settings": {"candidates": ["A", "B"]}, "counts": {}}))
    return out


def test_wilcoxon_against_hand_computed_values(tmp_path):
    from chunkscope.corpus.report import CorpusResults, format_wilcoxon, wilcoxon_tests
    from chunkscope.present.html_report import corpus_html_report

    res = CorpusResults.load(_synthetic_results(tmp_path))
    res.order = ["A", "B", "C"]
    rows = {(r["chunker"], r["metric"]): r for r in wilcoxon_tests(res)}
    c = rows[("C", "BI")]
    # adaptive > C on all 6 documents: the exact two-sided p is 2 / 2**6
    assert c["documents"] == 6 and c["n"] == 6 and c["p"] == pytest.approx(2 / 64) and c["statistic"] == 0
    a = rows[("A", "BI")]  # differs only on d4, d5 (B won there, by 0.10 and 0.12)
    assert a["n"] == 2 and a["p"] == pytest.approx(0.5) and a["median_diff"] == pytest.approx(0.0)
    b = rows[("B", "BI")]  # differs on d0..d3 where A won: A - B = 0.02 * (i + 1) > 0
    assert b["n"] == 4 and b["p"] == pytest.approx(2 / 16) and b["mean_diff"] == pytest.approx(100 * 0.2 / 6)
    # Holm over the three chunkers of BI: sorted p 1/32, 1/8, 1/2 -> 3/32, 2/8, 1/2
    assert (c["p_holm"], b["p_holm"], a["p_holm"]) == pytest.approx((3 / 32, 0.25, 0.5))
    text = format_wilcoxon(wilcoxon_tests(res))
    assert "Wilcoxon" in text and "[0.094; 6]" in text
    assert "Wilcoxon signed-rank" in corpus_html_report(res)


def test_corpus_page_offers_ray_with_the_operators_cluster_only(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root))
    from ui.corpus import ray_available

    monkeypatch.setenv("CHUNKSCOPE_RAY_ADDRESS", "ray://head.example:10001")
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.switch_page("pages/4_Corpus.py").run()
    at.text_input(key="cs_corpus_folder").set_value(str(FIXTURES)).run()
    assert not at.exception, at.exception
    radio = at.radio(key="cs_corpus_engine")
    assert radio.options == (["This machine", "Ray"] if ray_available() else ["This machine"])
    assert at.number_input(key="cs_corpus_jobs").value == 1
    if ray_available():
        radio.set_value("Ray").run()
        assert any("ray://head.example:10001" in c.value for c in at.caption)
    # no widget lets a user type a cluster address
    assert not any("address" in (t.label or "").lower() for t in at.text_input)
