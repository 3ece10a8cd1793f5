"""The SQLite journal: round trips, durability across SIGKILL, resume semantics, bad files."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

import bayestune.storage.journal as journal_module
from bayestune.exceptions import JournalError
from bayestune.storage import LOST, SCHEMA_VERSION, Journal
from bayestune.trial import Result, TrialStatus


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "run.db"


@pytest.fixture
def journal(path: Path):
    with Journal(path) as j:
        yield j


class ListsToTuples:
    """Stands in for Space: anything with ``validate_config`` may canonicalise configs."""

    def validate_config(self, config):
        return {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()}


# ---- round trips --------------------------------------------------------------------------
def test_every_status_round_trips_through_the_file(path: Path) -> None:
    with Journal(path) as j:
        ok = j.finish(j.start({"x": 1.5, "n": 3}, batch=0), Result(values={"runtime": 2.5, "energy": 7.0}))
        inf = j.finish(j.start({"x": 2.5, "n": 4}, batch=0), Result(values={"runtime": 9.0}, feasible=False))
        failed = j.finish(j.start({"x": 3.5, "n": 5}, batch=1),
                          Result.failure("segfault in kernel\nstack: ...", "crash"))
        pending_id = j.start({"x": 4.5, "n": 6}, batch=1, origin="initial", attempt=2)

    with Journal.open(path) as j:
        trials = j.trials()
    assert [t.trial_id for t in trials] == [ok.trial_id, inf.trial_id, failed.trial_id, pending_id]
    t_ok, t_inf, t_failed, t_pending = trials
    assert t_ok == ok and t_inf == inf and t_failed == failed
    assert t_ok.status is TrialStatus.OK and t_ok.values == {"runtime": 2.5, "energy": 7.0}
    assert t_ok.config == {"x": 1.5, "n": 3} and isinstance(t_ok.config["n"], int)
    assert t_ok.batch == 0 and t_ok.origin == "suggested" and t_ok.attempt == 1
    assert t_ok.started_at <= t_ok.finished_at and t_ok.duration >= 0
    assert t_inf.status is TrialStatus.INFEASIBLE and t_inf.values == {"runtime": 9.0}
    assert t_failed.status is TrialStatus.FAILED
    assert t_failed.error == "segfault in kernel\nstack: ..." and t_failed.failure_kind == "crash"
    assert t_pending.status is TrialStatus.PENDING and t_pending.finished_at is None
    assert (t_pending.origin, t_pending.attempt, t_pending.batch) == ("initial", 2, 1)


def test_permutations_come_back_as_lists_or_through_a_space(journal: Journal) -> None:
    config = {"order": (2, 0, 1), "tile": np.int64(32), "unroll": True, "vec": "avx2"}
    tid = journal.finish(journal.start(config), Result(values={"t": 1.0})).trial_id
    plain = journal.trials()[0]
    assert plain.config == {"order": [2, 0, 1], "tile": 32, "unroll": True, "vec": "avx2"}
    canonical = journal.trials(space=ListsToTuples())[0]
    assert canonical.config["order"] == (2, 0, 1)
    assert journal.trial(tid, space=ListsToTuples()).config["order"] == (2, 0, 1)


def test_nan_values_are_stored_as_null_and_turn_success_into_failure(journal: Journal, path: Path) -> None:
    trial = journal.finish(journal.start({"x": 1}), Result(values={"t": 1.0, "power": math.nan}))
    assert trial.status is TrialStatus.FAILED and trial.failure_kind == "nan"
    assert "power" in trial.error
    assert trial.values["t"] == 1.0 and math.isnan(trial.values["power"])
    infeasible = journal.record({"x": 2}, Result(values={"t": math.inf}, feasible=False))
    assert infeasible.status is TrialStatus.INFEASIBLE and math.isnan(infeasible.values["t"])

    with closing(sqlite3.connect(path)) as con:
        raw = con.execute('SELECT "values" FROM trials ORDER BY trial_id').fetchall()
    assert [json.loads(r[0]) for r in raw] == [{"t": 1.0, "power": None}, {"t": None}]


def test_finish_rejects_unknown_and_already_finished_trials(journal: Journal) -> None:
    tid = journal.start({"x": 1})
    journal.finish(tid, Result(values={"t": 1.0}))
    with pytest.raises(JournalError, match="already finished"):
        journal.finish(tid, Result(values={"t": 2.0}))
    with pytest.raises(JournalError, match="no trial 999"):
        journal.finish(999, Result(values={"t": 2.0}))
    assert journal.trial(tid).values == {"t": 1.0}


def test_record_inserts_a_finished_trial(journal: Journal) -> None:
    trial = journal.record({"x": 1}, Result(values={"t": 3.0}), origin="imported", batch=7,
                           started_at=100.0, finished_at=160.0)
    assert trial.status is TrialStatus.OK and trial.origin == "imported" and trial.batch == 7
    assert trial.duration == 60.0
    assert journal.pending() == []
    assert journal.record({"x": 2}, Result(values={"t": 1.0})).finished_at is not None


def test_unstorable_configs_and_results_are_journal_errors(journal: Journal) -> None:
    with pytest.raises(JournalError, match="cannot store configuration"):
        journal.start({"x": object()})
    with pytest.raises(JournalError, match="cannot store configuration"):
        journal.start({"x": math.nan})
    with pytest.raises(JournalError, match="mapping"):
        journal.start([1, 2])  # type: ignore[arg-type]
    tid = journal.start({"x": 1})
    with pytest.raises(JournalError, match="Result"):
        journal.finish(tid, 3.0)  # type: ignore[arg-type]
    assert journal.trial(tid).status is TrialStatus.PENDING  # the failed call changed nothing


def test_metadata_round_trips_and_has_defaults(path: Path) -> None:
    scenario = {"name": "gemm", "parameters": [{"name": "tile", "type": "ordinal", "values": [1, 2, 4]}]}
    with Journal(path) as j:
        assert j.get_meta("created_at") <= time.time()
        assert isinstance(j.get_meta("bayestune_version"), str)
        j.set_meta("scenario", scenario)
        j.set_meta("objectives", [{"name": "runtime", "minimize": True}])
        j.set_meta("budget", 100)
        j.set_meta("seed", np.int64(7))
        j.set_meta("budget", 120)  # overwrite
        with pytest.raises(JournalError, match="not JSON-serialisable"):
            j.set_meta("bad", {"f": object()})
    with Journal.open(path) as j:
        assert j.get_meta("scenario") == scenario
        assert j.get_meta("budget") == 120 and j.get_meta("seed") == 7
        assert j.get_meta("missing", "dflt") == "dflt"
        assert set(j.meta()) >= {"scenario", "objectives", "budget", "seed", "created_at", "bayestune_version"}


# ---- resume semantics ---------------------------------------------------------------------
def test_abandon_pending_marks_lost_and_keeps_them_off_the_budget(journal: Journal) -> None:
    a = journal.start({"x": 1})
    b = journal.start({"x": 2})
    c = journal.start({"x": 3})
    journal.finish(b, Result(values={"t": 1.0}))
    journal.record({"x": 4}, Result.failure("boom"))
    assert [t.trial_id for t in journal.pending()] == [a, c]

    lost = journal.abandon_pending()
    assert [t.trial_id for t in lost] == [a, c]
    assert [t.config for t in lost] == [{"x": 1}, {"x": 3}]
    for t in lost:
        assert t.status is TrialStatus.FAILED and t.failure_kind == LOST
        assert t.error == "evaluation in flight when the optimizer stopped; re-run"
    assert journal.pending() == []
    assert journal.n_finished() == 2  # b and the real failure
    assert journal.n_finished(count_lost=True) == 4
    assert journal.abandon_pending() == []

    retry = journal.start(lost[0].config, attempt=lost[0].attempt + 1)
    journal.finish(retry, Result(values={"t": 2.0}))
    assert [t.attempt for t in journal.find({"x": 1})] == [1, 2]
    assert journal.n_finished() == 3


def test_n_finished_ignores_pending(journal: Journal) -> None:
    journal.start({"x": 1})
    assert journal.n_finished() == 0
    journal.record({"x": 2}, Result(values={"t": 1.0}, feasible=False))
    assert journal.n_finished() == 1


def test_best_uses_feasible_successes_only(journal: Journal) -> None:
    journal.record({"x": 0}, Result(values={"t": 0.1}, feasible=False))  # infeasible: excluded
    journal.record({"x": 1}, Result.failure("crash"))
    journal.record({"x": 2}, Result(values={"t": 5.0, "e": 1.0}))
    journal.record({"x": 3}, Result(values={"t": 2.0, "e": 9.0}))
    journal.record({"x": 4}, Result(values={"t": 2.0, "e": 3.0}))  # ties with x=3: later id loses
    journal.record({"x": 5}, Result(values={"e": 0.5}))  # no "t" at all
    journal.start({"x": 6})

    assert [t.config["x"] for t in journal.best("t")] == [3]
    assert [t.config["x"] for t in journal.best("t", k=3)] == [3, 4, 2]
    assert [t.config["x"] for t in journal.best("t", minimize=False, k=2)] == [2, 3]
    assert [t.config["x"] for t in journal.best("e", k=10)] == [5, 2, 4, 3]
    assert journal.best("unknown") == []


def test_contains_and_find_use_a_canonical_key(journal: Journal) -> None:
    journal.record({"tile": 4, "order": (1, 0), "x": 0.5}, Result(values={"t": 1.0}))
    assert journal.contains({"x": 0.5, "order": [1, 0], "tile": 4.0})  # other order, list, 4.0
    assert journal.contains({"x": 0.5, "order": (1, 0), "tile": np.int32(4)})
    assert not journal.contains({"tile": 4, "order": (0, 1), "x": 0.5})
    assert not journal.contains({"tile": 4, "order": (1, 0)})
    journal.start({"tile": 4, "order": (1, 0), "x": 0.5})  # a repeat, still pending
    found = journal.find({"x": 0.5, "order": (1, 0), "tile": 4}, space=ListsToTuples())
    assert [t.status for t in found] == [TrialStatus.OK, TrialStatus.PENDING]
    assert found[0].config["order"] == (1, 0)


def test_status_filters(journal: Journal) -> None:
    journal.record({"x": 1}, Result(values={"t": 1.0}))
    journal.record({"x": 2}, Result.failure("e"))
    journal.start({"x": 3})
    assert len(journal.trials(TrialStatus.OK)) == 1
    assert len(journal.trials("failed")) == 1
    assert len(journal.trials([TrialStatus.OK, TrialStatus.PENDING])) == 2
    assert len(journal.trials([])) == 0
    with pytest.raises(JournalError, match="unknown trial status"):
        journal.trials("done")


# ---- storage details ----------------------------------------------------------------------
def test_file_is_in_wal_mode_with_a_schema_version(journal: Journal, path: Path) -> None:
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("SELECT version FROM bayestune_schema").fetchone()[0] == SCHEMA_VERSION
    con.close()


def test_in_memory_journal(tmp_path: Path) -> None:
    with Journal(":memory:") as j:
        j.record({"x": 1}, Result(values={"t": 1.0}))
        assert j.n_finished() == 1
    assert not any(tmp_path.iterdir())


def test_closed_journal_refuses_work(path: Path) -> None:
    j = Journal(path)
    j.close()
    j.close()  # idempotent
    with pytest.raises(JournalError, match="closed"):
        j.start({"x": 1})
    assert "closed" in repr(j)


def test_concurrent_finishes_from_worker_threads(journal: Journal) -> None:
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        try:
            for i in range(25):
                tid = journal.start({"w": w, "i": i}, batch=w)
                journal.finish(tid, Result(values={"t": float(i)}))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    trials = journal.trials()
    assert len(trials) == 200 and journal.n_finished() == 200
    assert all(t.values["t"] == t.config["i"] for t in trials)


# ---- files that are not (usable) journals -------------------------------------------------
def test_open_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    with pytest.raises(JournalError, match="nope.db.*does not exist"):
        Journal.open(missing)
    assert not missing.exists()


def test_unopenable_path(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="cannot open journal.*no_such_dir"):
        Journal(tmp_path / "no_such_dir" / "run.db")


def test_open_text_file(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("this is not a database, just some notes\n" * 50)
    for create in (True, False):
        with pytest.raises(JournalError, match="notes.db.*not a bayestune journal"):
            Journal(bogus, create=create)
    assert bogus.read_text().startswith("this is not")


def test_open_foreign_sqlite_database(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE users (id INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(JournalError, match=r"other.db.*not a bayestune journal.*users"):
        Journal(other)


def test_open_empty_database_without_create(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(JournalError, match="empty.db.*empty"):
        Journal.open(empty)
    with Journal(empty) as j:  # create=True initialises it
        assert j.n_finished() == 0


def test_open_newer_schema(path: Path) -> None:
    Journal(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.close()
    with pytest.raises(JournalError, match=r"run.db.*schema version 99.*newer"):
        Journal.open(path)


# ---- durability ---------------------------------------------------------------------------
CHILD = textwrap.dedent(
    """
    import sys
    from bayestune.storage import Journal
    from bayestune.trial import Result

    journal = Journal.open(sys.argv[1])
    journal.start({"x": -1}, origin="manual")  # in flight until the process dies
    i = 0
    while True:
        tid = journal.start({"x": i})
        journal.finish(tid, Result(values={"y": float(i)}))
        i += 1
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_run_loses_nothing_that_was_finished(path: Path) -> None:
    Journal(path).close()
    src_dir = Path(journal_module.__file__).absolute().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src_dir), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with Journal.open(path) as watcher:
            deadline = time.monotonic() + 60
            while watcher.n_finished() < 20:
                assert child.poll() is None, child.stderr.read().decode()
                assert time.monotonic() < deadline, "the child wrote too slowly"
                time.sleep(0.01)
            seen = {t.trial_id: t for t in watcher.trials(TrialStatus.OK)}
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    with Journal.open(path) as j:
        after = {t.trial_id: t for t in j.trials()}
        assert len(seen) >= 20
        for tid, trial in seen.items():
            assert after[tid] == trial
        finished = [t for t in after.values() if t.status is TrialStatus.OK]
        assert all(t.values == {"y": float(t.config["x"])} for t in finished)
        pending = j.pending()
        assert pending[0].config == {"x": -1}
        assert len(pending) <= 2  # the stuck one, plus possibly one started just before the kill
        lost = j.abandon_pending()
        assert [t.trial_id for t in lost] == [t.trial_id for t in pending]
        assert j.n_finished() == len(finished)
        assert j.n_finished(count_lost=True) == len(finished) + len(lost)
