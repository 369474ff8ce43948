"""Ctrl-C during ``chunkscope corpus``: exit code 130 with one line, no traceback, nothing recorded as failed,
and a resume completes every document. Real subprocesses, interrupted while a document is in progress."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

TEXT = "\n\n".join(f"Step {i}. The service reads the queue and writes the result to the store. It logs each failure."
                   for i in range(8))
CHUNKERS = ["--chunkers", "recursive-1100+pp,recursive-600+pp", "--candidates", "recursive-1100+pp,recursive-600+pp",
            "--coref", "none"]

# the first document's analysis swallows the interrupt the way a model library's helper thread can (caught while
# the main thread runs a model call for another thread, which re-raises it and dies), then fails on something
# else -- before the fix, the document was recorded as failed ("KeyError: 'result'") and the run went on
SWALLOW = """
import sys, threading, time
from pathlib import Path
import chunkscope.analysis as A
from chunkscope.cli import main

real, calls = A.analyze, []
flag = Path(sys.argv.pop(1))  # touched when the first document is in progress

def analyze(doc, settings=None, resources=None, **kw):
    calls.append(doc.name)
    if len(calls) > 1:
        return real(doc, settings, resources=resources, **kw)
    caught = []
    flag.touch()
    try:
        while True:
            time.sleep(0.05)
    except BaseException as exc:
        caught.append(exc)
    t = threading.Thread(target=lambda: (_ for _ in ()).throw(caught[0]))
    t.start()
    t.join()
    raise KeyError("result")

A.analyze = analyze
sys.exit(main())
"""


# the first documents held in the embeddings stage until the run is interrupted: a hold (``analyze(hold=...)``)
# injected into every process of the run, the pool's spawned workers included, by a sitecustomize module
HOLD = """
import time
import chunkscope.analysis as A

_real = A.analyze


def _hold(stop):  # until the run stops (Ctrl-C), at most 300 s
    t0 = time.monotonic()
    while not stop() and time.monotonic() - t0 < 300:
        time.sleep(0.1)


def analyze(doc, settings=None, **kw):
    return _real(doc, settings, hold=_hold, **kw)


A.analyze = analyze
"""


def _held(env: dict[str, str], folder: Path) -> dict[str, str]:
    """``env`` with the HOLD sitecustomize first on the path of every Python process it starts."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(HOLD, encoding="utf-8")
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH", "")) if p)}


def _corpus(root: Path, n: int = 3) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"doc{i}.md").write_text(f"# Document {i}\n\n" + TEXT, encoding="utf-8")
    return root


def _wait_for(cond, proc: subprocess.Popen, what: str, log: Path, timeout: float = 120.0) -> None:
    t0 = time.monotonic()
    while not cond():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (rc {proc.returncode}) before {what}: {log.read_text()}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"no {what} after {timeout:.0f}s: {log.read_text()}")
        time.sleep(0.05)


def _interrupted_run(cmd: list[str], tmp_path: Path, ready, env: dict[str, str]) -> tuple[int, str]:
    """Start ``cmd`` in its own process group, wait for ``ready(stderr_text)``, send SIGINT to the group (as a
    terminal's Ctrl-C does); return (exit code, stderr). Every process of the group must be gone soon after."""
    err = tmp_path / "stderr.txt"
    with open(err, "wb") as fh:
        # SIGINT as a terminal delivers it: a test run in the background (CI) starts with SIGINT ignored, which
        # its children inherit, and the command rightly leaves an ignored SIGINT ignored
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=fh, env=env, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for(lambda: ready(err.read_text(errors="replace")), proc, "document in progress", err)
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(timeout=60)

        def group_gone() -> bool:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return True
            return False

        t0 = time.monotonic()
        while not group_gone() and time.monotonic() - t0 < 20:  # pool workers ended with the run
            time.sleep(0.1)
        assert group_gone(), "processes of the interrupted run are still running"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return rc, err.read_text(errors="replace")


def _resume(root: Path, out: Path, env: dict[str, str], extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "chunkscope.cli", "corpus", str(root), "--out", str(out), *CHUNKERS, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads((out / "summary.json").read_text())


def _env(**more: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TOKENIZERS_PARALLELISM="false", **more)
    return env


def _check(rc: int, err: str, out: Path, root: Path, env: dict[str, str], extra: list[str]) -> None:
    assert rc == 130, err
    # the last line of the run's own: multiprocessing's resource tracker (a process of the group, outliving the
    # run by a moment) may still warn about the pool's semaphores after it, on a loaded machine
    ours = [ln for ln in err.splitlines() if ln.strip() and "resource_tracker" not in ln
            and not ln.lstrip().startswith("warnings.warn(")]
    assert ours and ours[-1] == "chunkscope corpus: interrupted", err
    assert "Traceback" not in err and "FAILED" not in err, err
    assert not any((out / "failed").glob("*"))  # nothing recorded as failed
    summary = _resume(root, out, env, extra)
    assert summary["counts"]["failed"] == 0
    assert summary["counts"]["with_report"] == summary["counts"]["documents"] == 3
    assert summary["counts"]["ok"] >= 1  # the interrupted document was analyzed again


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_exits_130_and_a_resume_completes(tmp_path, jobs):
    """The real pipeline, its first document(s) held in the embeddings stage until the run is interrupted."""
    root, out = _corpus(tmp_path / "docs"), tmp_path / "res"
    extra = ["--jobs", jobs]
    hold = _held(_env(), tmp_path / "hold")
    cmd = [sys.executable, "-m", "chunkscope.cli", "corpus", str(root), "--out", str(out), *CHUNKERS, *extra]
    rc, err = _interrupted_run(cmd, tmp_path, lambda text: "corpus: 3 documents" in text, hold)
    _check(rc, err, out, root, _env(), extra)


def test_an_interrupt_a_library_swallows_is_still_an_interrupt(tmp_path):
    root, out = _corpus(tmp_path / "docs"), tmp_path / "res"
    extra: list[str] = []
    flag = tmp_path / "in-progress"
    cmd = [sys.executable, "-c", SWALLOW, str(flag), "corpus", str(root), "--out", str(out), *CHUNKERS, *extra]
    rc, err = _interrupted_run(cmd, tmp_path, lambda text: flag.exists(), _env())
    _check(rc, err, out, root, _env(), extra)


def test_a_document_has_no_outcome_after_an_interrupt(tmp_path):
    """Once Ctrl-C was seen, analyze_file raises KeyboardInterrupt instead of returning ok or failed."""
    from chunkscope.analysis import Settings
    from chunkscope.corpus.worker import analyze_file
    from chunkscope.interrupts import INTERRUPTED, catch_interrupts

    f = tmp_path / "a.md"
    f.write_text(TEXT, encoding="utf-8")
    restore = catch_interrupts()
    try:
        INTERRUPTED.set()
        with pytest.raises(KeyboardInterrupt):
            analyze_file(f, Settings(chunkers=("recursive-600+pp",), candidates=("recursive-600+pp",),
                                       coref="none").to_dict())
    finally:
        restore()
    assert not INTERRUPTED.is_set()
