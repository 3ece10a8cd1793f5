"""Dask distributed backend on a LocalCluster (loopback, 2 worker processes): evaluations spread
over the cluster, a worker killed mid-evaluation (resubmitted once, then ``worker_lost``),
connecting by scheduler address, and a function that cannot reach the workers."""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

from bayestune.exceptions import EvaluationError  # noqa: E402
from bayestune.execution import CallableFactory, CommandFactory, run  # noqa: E402
from bayestune.execution.dask_backend import DaskBackend  # noqa: E402
from bayestune.optimizer import Optimizer  # noqa: E402
from bayestune.space import Integer, Space  # noqa: E402
from bayestune.storage import Journal  # noqa: E402
from bayestune.trial import TrialStatus  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

BLACKBOX = '''
import os
from pathlib import Path

CALLS = Path({calls!r})
MARKER = Path({marker!r})


def run(config):
    """(x - 3)^2 for x != {kill_x}; x = {kill_x} kills its Dask worker process ({mode})."""
    with CALLS.open("a") as f:
        f.write(f"{{config['x']}} {{os.getpid()}}\\n")
    if config["x"] == {kill_x} and ({mode!r} == "always" or not MARKER.exists()):
        MARKER.touch()
        os._exit(1)
    return (config["x"] - 3) ** 2
'''


@pytest.fixture(scope="module")
def cluster():
    # allowed-failures=0: the scheduler reports a killed worker's task at once instead of
    # retrying it itself, so the runner's own resubmission is what is tested.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=40
        ) as local:
            yield local


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def write_blackbox(tmp_path: Path, mode: str, kill_x: int = 3) -> tuple[str, Path]:
    calls = tmp_path / "calls.txt"
    path = tmp_path / "bb.py"
    path.write_text(
        textwrap.dedent(BLACKBOX.format(calls=str(calls), marker=str(tmp_path / "killed"), mode=mode, kill_x=kill_x))
    )
    return f"{path}:run", calls


def calls_of(calls: Path) -> list[tuple[int, int]]:
    return [tuple(map(int, line.split())) for line in calls.read_text().splitlines()]


def test_evaluations_run_on_both_workers_and_are_journaled(tmp_path, client):
    target, calls = write_blackbox(tmp_path, mode="never", kill_x=-1)
    with Journal(tmp_path / "d.db") as journal:
        opt = Optimizer(Space([Integer("x", 0, 30)]), strategy="cot_random", seed=0, journal=journal)
        best = run(opt, CallableFactory(target, ["value"]), 12, backend="dask", dask_client=client)
        assert journal.n_finished() == 12 and not journal.pending()
    assert best.values["value"] == min(t.values["value"] for t in opt.trials)
    assert len(calls_of(calls)) == 12
    assert len({pid for _, pid in calls_of(calls)}) == 2  # workers = the cluster's 2 threads


def test_worker_killed_mid_evaluation_is_resubmitted_once_and_counted_once(tmp_path, client):
    target, calls = write_blackbox(tmp_path, mode="once")
    with Journal(tmp_path / "d.db") as journal:
        opt = Optimizer(Space([Integer("x", 0, 5)]), strategy="cot_random", seed=0, journal=journal)
        run(opt, CallableFactory(target, ["value"]), 6, backend="dask", dask_client=client)
        trials = journal.trials()
    assert len(trials) == 6 and all(t.status is TrialStatus.OK for t in trials)
    assert sorted(t.config["x"] for t in trials) == list(range(6))
    assert Counter(x for x, _ in calls_of(calls))[3] == 2  # evaluated twice, journaled once
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker


def test_worker_killed_on_every_attempt_is_recorded_as_worker_lost(tmp_path, client):
    target, calls = write_blackbox(tmp_path, mode="always")
    with Journal(tmp_path / "d.db") as journal:
        opt = Optimizer(Space([Integer("x", 0, 5)]), strategy="cot_random", seed=0, journal=journal)
        run(opt, CallableFactory(target, ["value"]), 6, backend="dask", dask_client=client, workers=2)
        trials = journal.trials()
        assert journal.n_finished() == 6
    lost = [t for t in trials if t.status is TrialStatus.FAILED]
    assert [(t.config["x"], t.failure_kind) for t in lost] == [(3, "worker_lost")]
    assert "died on each of 2 attempt(s)" in lost[0].error and "KilledWorker" in lost[0].error
    assert Counter(x for x, _ in calls_of(calls))[3] == 2
    client.wait_for_workers(2, timeout=60)


def test_connect_by_scheduler_address_with_a_command_black_box(tmp_path, cluster):
    opt = Optimizer(Space([Integer("x", 0, 9)]), strategy="cot_random", seed=2)
    factory = CommandFactory("echo $(( {x} * 2 ))", ["value"], timeout=10)
    backend = DaskBackend(factory, cluster.scheduler_address)
    assert backend.slots == 2
    best = run(opt, None, 5, backend=backend)
    assert opt.n_evaluated == 5 and best.values["value"] == 2 * best.config["x"]
    assert backend.client.status in ("closed", "closing")  # a client it opened itself is closed


def test_setup_error_on_the_worker_stops_the_run(tmp_path, client):
    target, _ = write_blackbox(tmp_path, mode="never")
    opt = Optimizer(Space([Integer("x", 0, 9)]), strategy="cot_random", seed=0)
    with pytest.raises(EvaluationError, match="could not build the evaluator"):
        run(opt, CallableFactory(target.replace(":run", ":missing"), ["value"]), 4, backend="dask", dask_client=client)


def test_bad_client_is_rejected():
    with pytest.raises(EvaluationError, match="expected a distributed.Client or a scheduler address"):
        DaskBackend(CommandFactory("echo 1", ["value"]), 42)


def test_cli_dask_option_runs_on_the_cluster(tmp_path, cluster, monkeypatch):
    import json

    from click.testing import CliRunner

    from bayestune.cli import cli

    monkeypatch.chdir(tmp_path)
    scenario = tmp_path / "s.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "d",
                "parameters": [{"name": "x", "type": "integer", "bounds": [0, 50]}],
                "objectives": ["t"],
                "budget": 6,
                "seed": 1,
                "strategy": "cot_random",
                "blackbox": {"command": "echo t: {x}", "timeout": 10},
                "measurement": {"echo_check": False},  # the command prints its argument on purpose
            }
        )
    )
    out = CliRunner().invoke(cli, ["optimize", str(scenario), "--dask", cluster.scheduler_address, "--no-progress"])
    assert out.exit_code == 0, out.output
    with Journal.open(tmp_path / "s.journal.db") as journal:
        assert journal.n_finished() == 6


def test_losing_the_scheduler_stops_the_run_with_one_line_and_a_resumable_journal(tmp_path):
    """Before: a FuturesCancelledError traceback."""
    import threading

    from bayestune.execution.dask_backend import SchedulerLost

    local = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=50
    )
    journal = Journal(tmp_path / "run.db")
    opt = Optimizer(Space([Integer("x", 0, 99)]), strategy="cot_random", seed=2, journal=journal)
    factory = CommandFactory("sleep 0.3; echo {x}", ["value"], timeout=30)
    backend = DaskBackend(factory, local.scheduler_address)

    def on_trial(_trial):
        if opt.n_evaluated == 2:
            threading.Thread(target=local.close, daemon=True).start()

    with pytest.raises(SchedulerLost, match="lost the Dask scheduler"):
        run(opt, None, 40, backend=backend, callback=on_trial)
    assert 2 <= journal.n_finished() < 40
    journal.close()


def test_a_result_that_cannot_be_fetched_is_a_lost_task_while_the_scheduler_answers(client, monkeypatch):
    """Fetching a finished task's result needs the scheduler; a closed connection there (an OSError,
    like distributed's CommClosedError) must not escape as a one-line error without a reason."""
    from bayestune.execution.backends import Task, WorkerLost

    backend = DaskBackend(CommandFactory("echo {x}", ["value"], timeout=30), client, workers=1)

    def no_connection(_future):
        raise OSError("in <TCP (closed) ConnectionPool.gather>: Stream is closed")

    monkeypatch.setattr(backend, "_outcome", no_connection)
    backend.submit(Task({"x": 3}, task_id=1))
    [(task, outcome)] = backend.wait()
    assert task.task_id == 1 and isinstance(outcome, WorkerLost)
    backend.close()
