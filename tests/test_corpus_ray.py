"""Corpus mode on Ray (a local Ray instance, 2 CPUs): same numbers as the local runner, resume, a killed
worker's document retried elsewhere. Skipped without Ray (pip install 'chunkscope[ray]')."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from chunkscope.analysis import Settings
from chunkscope.corpus.run import RunOptions, run_corpus

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"
CHUNKERS = ("recursive-1100+pp", "recursive-600+pp", "sentence-5")
SETTINGS = Settings(chunkers=CHUNKERS, candidates=CHUNKERS[:2], coref="heuristic")


@dataclass(frozen=True)
class CrashOnce:
    """A fault hook (``RunOptions.fault``): the first worker that takes a document whose file name contains
    ``mark`` dies on the spot (``os._exit``, as a kill or the out-of-memory killer would); the claim flag in
    ``flags`` makes the retry go through. It travels to the Ray workers with the run."""

    flags: str
    mark: str = "crash-worker"

    def __call__(self, task: dict[str, Any]) -> None:
        if self.mark not in Path(task["path"]).name:
            return
        try:
            fd = os.open(os.path.join(self.flags, f"{task['key'][:16]}.crashed"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(17)


# Ray's workers cannot import this test module: CrashOnce travels to them by value
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory):
    """One small local Ray instance for the module (2 CPUs), shut down at the end; yields a folder for the
    fault hook's claim flags (``CrashOnce``)."""
    if ray.is_initialized():
        ray.shutdown()
    flags = tmp_path_factory.mktemp("crash-flags")
    saved = {k: os.environ.get(k) for k in ("RAY_worker_niceness",)}
    os.environ["RAY_worker_niceness"] = "0"
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False, logging_level="warning")
    yield flags
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def metric_values(out: str | Path) -> dict[tuple[str, str, str], float | None]:
    from chunkscope.corpus.store import ResultStore

    store = ResultStore(out)
    summary = json.loads(store.read_text("summary.json"))
    vals: dict[tuple[str, str, str], float | None] = {}
    for e in summary["documents"]:
        if not e.get("report"):
            continue
        rep = json.loads(store.read_text(e["report"]))
        for c in rep["chunkings"]:
            for m, v in {**c.get("metrics", {}), "score": c.get("score")}.items():
                vals[(e["rel"], c["id"], m)] = v
    return vals


def test_ray_equals_local_then_resumes(ray_instance, tmp_path):
    local = run_corpus(FIXTURES, tmp_path / "local", SETTINGS, options=RunOptions(engine="local", jobs=1))
    on_ray = run_corpus(FIXTURES, tmp_path / "ray", SETTINGS, options=RunOptions(engine="ray", jobs=2))
    assert on_ray["engine"] == "ray" and on_ray["counts"] == local["counts"]
    assert on_ray["counts"] == {"ok": 4, "skipped": 0, "failed": 1, "documents": 5, "with_report": 4}
    assert len({w for w in on_ray["workers"]}) == 2  # both actors took documents
    a, b = metric_values(tmp_path / "local"), metric_values(tmp_path / "ray")
    assert a.keys() == b.keys() and len(a) >= 4 * 3 * 5
    compared = 0
    for k in a:
        assert (a[k] is None) == (b[k] is None), k
        if a[k] is not None:
            assert abs(a[k] - b[k]) <= 1e-9, (k, a[k], b[k])
            compared += 1
    assert compared > 40 and any(k[2] == "ICC" and a[k] is not None for k in a)  # embeddings included
    assert any(k[2] == "RC" and a[k] is not None for k in a)  # and coreference
    # the same failure, with its reason, from both engines
    fail = {e["rel"]: e["reason"] for e in on_ray["documents"] if e["status"] == "failed"}
    assert list(fail) == ["broken.pdf"] and "broken.pdf" in fail["broken.pdf"]
    # the tidy tables are the same too (except timings)
    import pandas as pd

    ta, tb = (pd.read_parquet(tmp_path / d / "metrics.parquet") for d in ("local", "ray"))
    ta, tb = (t[t.metric != "seconds"].sort_values(["document", "chunker", "metric"]).reset_index(drop=True)
              for t in (ta, tb))
    pd.testing.assert_frame_equal(ta, tb, atol=1e-9, rtol=0)
    # resume on Ray: nothing left to do (the corrupt file failed on its own: remembered), no worker started
    again = run_corpus(FIXTURES, tmp_path / "ray", SETTINGS, options=RunOptions(engine="ray", jobs=2))
    assert again["counts"] == {"ok": 0, "skipped": 4, "failed": 1, "documents": 5, "with_report": 4}
    assert again["workers"] == []


def test_a_worker_no_node_can_hold_is_refused_before_any_work(ray_instance, tmp_path, capsys):
    """--gpus-per-worker on a cluster without GPUs (or more threads than a node has CPUs): the actors would wait
    forever, with no word. The run stops first, with one line and exit code 2, having analyzed nothing."""
    from chunkscope.cli import main

    out = tmp_path / "gpu"
    assert main(["corpus", str(FIXTURES), "--out", str(out), "--engine", "ray", "--gpus-per-worker", "1",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gpus-per-worker 1: a worker needs" in err and "0 GPU(s) on a node" in err, err
    assert not list((out / "reports").glob("*")) and not (out / "summary.json").exists()
    with pytest.raises(ValueError, match=r"--threads-per-worker 3: a worker needs 3 CPU\(s\) on one node.*at most 2 CPU"):
        run_corpus(FIXTURES, tmp_path / "cpu", SETTINGS, options=RunOptions(engine="ray", jobs=1, threads=3))
    assert ray.is_initialized()  # the caller's instance is left running


def test_killed_worker_document_is_retried_elsewhere(ray_instance, tmp_path):
    """A worker process dies (os._exit) on a marker document: its document goes to the next free worker,
    the run completes, every document appears exactly once (results under a file:// URI)."""
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES, docs)
    shutil.copy(FIXTURES / "notes.md", docs / "notes.crash-worker.md")
    uri = (tmp_path / "res").as_uri()
    events: list[dict] = []
    fast = SETTINGS.with_(embedder=str(tmp_path / "no-model"), coref="none")  # no model: quick restarts
    summary = run_corpus(docs, uri, fast, options=RunOptions(engine="ray", jobs=2, fault=CrashOnce(str(ray_instance))),
                         progress=lambda d, t, e: events.append(e))
    c = summary["counts"]
    assert c == {"ok": 5, "skipped": 0, "failed": 1, "documents": 6, "with_report": 5}
    crashed = next(e for e in summary["documents"] if "crash-worker" in e["rel"])
    flag = next(ray_instance.glob(f"{crashed['key'][:16]}.crashed"))
    killed_pid = flag.read_text()
    assert crashed["status"] == "ok" and crashed["attempts"] == 2
    assert not crashed["worker"].endswith(f":{killed_pid}")  # analyzed by another process
    retries = [e for e in events if e.get("status") == "retry"]
    assert len(retries) == 1 and "crash-worker" in retries[0]["rel"] and "died" in retries[0]["reason"]
    assert events[-1]["stats"]["retried"] == 1
    # exactly once: one summary entry per file, one set of rows per document in the tidy table
    import pandas as pd

    assert sorted(e["rel"] for e in summary["documents"]) == sorted(
        str(p.relative_to(docs)) for p in docs.rglob("*") if p.is_file())
    df = pd.read_parquet(tmp_path / "res" / "metrics.parquet")
    assert not df.duplicated(["document", "chunker", "metric"]).any()
    assert df.groupby("document").size().nunique() == 1  # the same number of rows for every document
    assert len(list((tmp_path / "res" / "reports").glob("*.json"))) == 5
    assert not [p for p in (tmp_path / "res").rglob("*") if ".tmp-" in p.name]
