"""Corpus mode on a simulated two-node Ray cluster (ray.cluster_utils.Cluster, both nodes on this machine):
the workers spread over both nodes and the run completes. Skipped without Ray."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from chunkscope.analysis import Settings
from chunkscope.corpus.run import RunOptions, run_corpus

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "corpus"


@pytest.fixture
def two_nodes():
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    saved = os.environ.get("RAY_worker_niceness")
    os.environ["RAY_worker_niceness"] = "0"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False, logging_level="warning")
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        if saved is None:
            os.environ.pop("RAY_worker_niceness", None)
        else:
            os.environ["RAY_worker_niceness"] = saved


def test_two_node_cluster_spreads_the_workers(two_nodes, tmp_path):
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    s = Settings(chunkers=("recursive-1100+pp", "recursive-600+pp"), candidates=("recursive-1100+pp", "recursive-600+pp"),
                 coref="none", embedder=str(tmp_path / "no-model"))
    # one CPU per node and one per worker: the two workers can only run on different nodes
    summary = run_corpus(FIXTURES, tmp_path / "res", s, options=RunOptions(engine="ray", jobs=2, threads=1))
    assert summary["counts"] == {"ok": 4, "skipped": 0, "failed": 1, "documents": 5, "with_report": 4}
    nodes = {w.split(":")[0] for w in summary["workers"]}
    assert len(nodes) == 2, summary["workers"]
    alive = {n["NodeID"][:8] for n in ray.nodes() if n["Alive"]}
    assert nodes == alive
