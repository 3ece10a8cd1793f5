"""The dashboard's snapshot: counts, state from the lock file, convergence, Pareto ids, read only."""

from __future__ import annotations

import os
import socket

import pytest

from bayestune.dashboard.snapshot import RunView, run_state
from bayestune.objectives import Objective
from bayestune.storage import Journal
from bayestune.storage.lock import RunLock, lock_path
from tests.export.conftest import config, write_journal


def test_snapshot_of_a_finished_run(tmp_path):
    rows = [
        (config(1, 0.0), {"runtime": 5.0}),
        (config(2, 0.0), None),
        (config(3, 0.0), {"runtime": 2.0}),
        (config(4, 0.0), {"runtime": 3.0}),
        (config(5, 0.0), {"runtime": 1.0}),
    ]
    path = write_journal(tmp_path / "r.db", rows)
    view = RunView(str(path), importance_interval=0)
    state = view.snapshot()
    assert state["state"] == "finished" and state["owner"] is None
    assert state["counts"] == {"finished": 5, "pending": 0, "ok": 4, "infeasible": 0, "failed": 1, "lost": 0}
    assert [r[4] for r in state["convergence"]["runtime"]] == [5.0, 5.0, 2.0, 2.0, 1.0]
    assert state["trials"][1]["status"] == "failed" and state["trials"][1]["error"] == "crashed"
    assert state["trials"][0]["config"]["rank"] == "(0,1,2)"
    assert state["failures"]["kinds"] == {"crash": 1}
    assert set(view.wait_for_importance(60)) == {"runtime", "feasible"}
    later = view.snapshot()
    assert set(later["importance"]) == {"runtime", "feasible"} and later["importance_evaluations"] == 5
    assert state["pareto"] == []
    assert state["best"]["trial"] == 5 and state["best"]["value"] == 1.0 and state["best"]["confirmed"] is None
    assert state["best"]["config"]["rank"] == "(0,1,2)"


def test_the_best_panel_shows_the_confirmed_winner(tmp_path):
    from bayestune.run import META_CONFIRMATION

    rows = [(config(1, 0.0), {"runtime": 5.0}), (config(2, 0.0), {"runtime": 1.0}), (config(3, 0.0), {"runtime": 1.1})]
    meta = {
        META_CONFIRMATION: {
            "objective": "runtime",
            "winner": {"trial_id": 3, "value": 1.2, "low": 1.15, "high": 1.25, "rounds": 6},
        }
    }
    best = RunView(str(write_journal(tmp_path / "r.db", rows, meta=meta))).snapshot()["best"]
    assert best["trial"] == 3 and best["value"] == 1.1
    assert best["confirmed"] == {"value": 1.2, "low": 1.15, "high": 1.25, "rounds": 6}


def test_snapshot_never_writes_the_journal(tmp_path):
    path = write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 5.0})])
    before = path.read_bytes()
    RunView(str(path)).snapshot()
    assert path.read_bytes() == before
    assert not lock_path(path).exists()  # the run lock is never taken (not even created)


def test_pareto_ids_of_a_multi_objective_run(tmp_path):
    objectives = (Objective("runtime"), Objective("energy"))
    rows = [
        (config(1, 0.0), {"runtime": 1.0, "energy": 9.0}),
        (config(2, 0.0), {"runtime": 3.0, "energy": 3.0}),
        (config(3, 0.0), {"runtime": 2.0, "energy": 2.0}),
    ]
    state = RunView(str(write_journal(tmp_path / "mo.db", rows, objectives=objectives))).snapshot()
    assert state["pareto"] == [1, 3]


def test_an_empty_journal_and_pending_trials(tmp_path):
    path = tmp_path / "new.db"
    with Journal(path) as journal:
        assert RunView(str(path)).snapshot()["objectives"] == []
        journal.start({"x": 1})
        state = RunView(str(path)).snapshot()
        assert state["counts"]["pending"] == 1 and state["state"] == "running"
        assert state["trials"][0]["status"] == "pending"


def test_state_follows_the_run_lock(tmp_path):
    path = tmp_path / "run.db"
    with RunLock.acquire(path):
        state, owner = run_state(str(path), 3, 0, 10)
        assert state == "running" and f"pid {os.getpid()}" in owner
    assert run_state(str(path), 3, 0, 10) == ("stopped", None)
    assert run_state(str(path), 10, 0, 10) == ("finished", None)
    lock_path(path).write_text(f'{{"pid": 999999999, "host": "{socket.gethostname()}", "started_at": 0}}')
    state, owner = run_state(str(path), 3, 0, 10)
    assert state == "stopped" and "ended without releasing" in owner


def test_a_missing_or_damaged_journal_is_named(tmp_path):
    from bayestune.exceptions import JournalError

    with pytest.raises(JournalError, match="does not exist"):
        RunView(str(tmp_path / "nope.db")).snapshot()
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    with pytest.raises(JournalError, match="bad.db"):
        RunView(str(bad)).snapshot()
