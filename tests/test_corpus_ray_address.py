"""Corpus mode on Ray with no ``--address`` while another Ray instance runs on the machine: the run starts a
Ray instance of its own (it used to join the running one, which refuses ``num_cpus``: exit 2). Skipped
without Ray."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from chunkscope.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def running_instance():
    """A Ray head started as `ray start` does (1 CPU), in a temporary folder of its own (so it is not the
    machine's "latest cluster" for other sessions); its address is what RAY_ADDRESS would name. Ended by
    its process group at the end."""
    if ray.is_initialized():
        ray.shutdown()
    temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths live under it
    cmd = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", f"--port={_free_port()}",
           "--num-cpus=1", "--include-dashboard=false", f"--temp-dir={temp}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    address_file = Path(temp) / "ray_current_cluster"
    try:
        deadline = time.monotonic() + 120
        while not (address_file.is_file() and address_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start did not come up (exit code {proc.poll()})")
            time.sleep(0.5)
        yield address_file.read_text().strip()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its daemons take a minute to leave on SIGTERM
        except ProcessLookupError:
            pass
        proc.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_no_address_starts_its_own_instance_beside_a_running_one(running_instance, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAY_ADDRESS", running_instance)  # what plain ray.init() joins, as after `ray start`
    monkeypatch.setenv("RAY_worker_niceness", "0")
    out = tmp_path / "res"
    rc = main(["corpus", str(FIXTURES / "notes.md"), "--out", str(out), "--engine", "ray", "--jobs", "1",
               "--threads-per-worker", "1", "--chunkers", "recursive-1100+pp", "--candidates", "recursive-1100+pp",
               "--coref", "none", "--embedder", str(tmp_path / "no-model"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "num_cpus" not in err
    assert (out / "summary.json").is_file()
    assert not ray.is_initialized()  # the run's own instance is stopped after it
