"""The pipeline on a real Dask cluster: `dask scheduler` and `dask worker` processes (no
LocalCluster shortcut), builds placed on the worker offering `build`, measurements on the one
offering `device`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bayestune.storage import Journal
from bayestune.trial import FailureKind
from tests.execution.test_pipeline import _events, _overlap, _scenario

#: The staged black box of tests/execution/test_pipeline.py as a scenario file.
SCENARIO = {
    "name": "pipe",
    "parameters": [{"name": "x", "type": "integer", "bounds": [0, 9]}],
    "objectives": ["t"],
    "budget": 8,
    "seed": 1,
    "strategy": "random",
    "initial_design": {"size": 6},
    "blackbox": {"build": {"python": "bb.py:build"}, "python": "bb.py:measure"},
    "measurement": {"race": False, "remeasure_top": 0},
}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_real_dask_scheduler_places_builds_and_measurements_by_worker_resources(tmp_path: Path) -> None:
    """`dask scheduler` and `dask worker` processes (no LocalCluster): builds on the worker offering
    `build`, measurements on the one offering `device`, never two at once on it."""
    import subprocess
    import sys

    pytest.importorskip("distributed")
    _, log = _scenario(tmp_path)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    cli = [sys.executable, "-m", "distributed.cli"]
    env = {**__import__("os").environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    procs = [
        subprocess.Popen(
            [*cli[:2], "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            cwd=tmp_path,
            env=env,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        time.sleep(3)
        for resources, threads in (("build=2", "2"), ("device=1", "1")):
            procs.append(
                subprocess.Popen(
                    [
                        *cli[:2],
                        "distributed.cli.dask_worker",
                        address,
                        "--resources",
                        resources,
                        "--nthreads",
                        threads,
                        "--no-dashboard",
                        "--nworkers",
                        "1",
                    ],
                    cwd=tmp_path,
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
            )
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            from bayestune.execution.pipeline_dask import cluster_resources

            deadline = time.monotonic() + 60
            while cluster_resources(client) != {"build": 2.0, "device": 1.0} and time.monotonic() < deadline:
                time.sleep(0.5)  # the workers' resources reach the scheduler's report a moment after they connect
        # the client in a process of its own, as a user runs it: `bayestune optimize --dask`
        (tmp_path / "s.json").write_text(json.dumps(SCENARIO))
        command = [sys.executable, "-m", "bayestune", "optimize", "s.json", "--dask", address, "--no-progress"]
        refused = subprocess.run([*command, "--devices", "a,b"], cwd=tmp_path, capture_output=True, text=True)
        assert refused.returncode == 2 and "2 device(s) asked for, but the Dask workers offer 1" in refused.stderr
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        with Journal.open(tmp_path / "s.journal.db") as journal:
            trials = journal.trials()
        assert len([t for t in trials if t.status.is_finished]) == 8
        assert all(t.failure_kind == FailureKind.COMPILE for t in trials if t.config["x"] == 3)
        events = _events(log)
        runs = [e for e in events if e["kind"] == "run"]
        assert len(runs) >= 5
        assert not any(_overlap(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :])
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
