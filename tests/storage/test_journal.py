"""The SQLite journal beyond the shared contract: the file, durability across SIGKILL, bad files."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

import bayestune.storage.journal as journal_module
from bayestune.exceptions import JournalError
from bayestune.storage import SCHEMA_VERSION, Journal
from bayestune.trial import Result, TrialStatus


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "run.db"


@pytest.fixture
def journal(path: Path):
    with Journal(path) as j:
        yield j


# ---- round trips --------------------------------------------------------------------------
def test_every_status_round_trips_through_the_file(path: Path) -> None:
    with Journal(path) as j:
        ok = j.finish(j.start({"x": 1.5, "n": 3}, batch=0), Result(values={"runtime": 2.5, "energy": 7.0}))
        inf = j.finish(j.start({"x": 2.5, "n": 4}, batch=0), Result(values={"runtime": 9.0}, feasible=False))
        failed = j.finish(
            j.start({"x": 3.5, "n": 5}, batch=1), Result.failure("segfault in kernel\nstack: ...", "crash")
        )
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


def test_nan_values_are_stored_as_null(journal: Journal, path: Path) -> None:
    journal.finish(journal.start({"x": 1}), Result(values={"t": 1.0, "power": math.nan}))
    journal.record({"x": 2}, Result(values={"t": math.inf}, feasible=False))

    with closing(sqlite3.connect(path)) as con:
        raw = con.execute('SELECT "values" FROM trials ORDER BY trial_id').fetchall()
    assert [json.loads(r[0]) for r in raw] == [{"t": 1.0, "power": None}, {"t": None}]


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


# ---- storage details ----------------------------------------------------------------------
def test_closed_journal_says_so(path: Path) -> None:
    j = Journal(path)
    j.close()
    assert "closed" in repr(j)


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
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
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


# ---- damaged rows, NaN metrics ------------------------------------------
@pytest.mark.parametrize(
    "column, text, fragment",
    [
        ("status", "weird", "status 'weird' is not one of"),
        ('"values"', "{not json", "column 'values' is not valid JSON"),
        ("config", "[1,", "column 'config' is not valid JSON"),
    ],
)
def test_a_damaged_row_is_a_journal_error_naming_it(tmp_path, column, text, fragment):
    import sqlite3

    from bayestune.exceptions import JournalError
    from bayestune.storage import Journal
    from bayestune.trial import Result

    path = tmp_path / "run.db"
    with Journal(path) as journal:
        for x in range(3):
            journal.finish(journal.start({"x": x}), Result({"v": float(x)}))
    conn = sqlite3.connect(path)
    conn.execute(f"UPDATE trials SET {column} = ? WHERE trial_id = 2", (text,))
    conn.commit()
    conn.close()
    with Journal.open(path) as journal:
        with pytest.raises(JournalError, match=f"trial 2 is damaged \\({fragment}"):
            journal.trials()
        assert journal.trial(1).values == {"v": 0.0}


def test_a_nan_extra_metric_keeps_a_valid_objective(tmp_path):
    import math

    from bayestune.storage import Journal
    from bayestune.trial import Result, TrialStatus

    with Journal(tmp_path / "run.db") as journal:
        journal.set_meta("objectives", [{"name": "runtime", "minimize": True}])
        ok = journal.finish(journal.start({"x": 1}), Result({"runtime": 2.0, "power": float("nan")}))
        bad = journal.finish(journal.start({"x": 2}), Result({"runtime": float("nan"), "power": 1.0}))
    assert ok.status is TrialStatus.OK and ok.values["runtime"] == 2.0 and math.isnan(ok.values["power"])
    assert bad.status is TrialStatus.FAILED and bad.failure_kind == "nan"


_VERSION_1_TRIALS = """
CREATE TABLE bayestune_schema (version INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trials (trial_id INTEGER PRIMARY KEY, config TEXT NOT NULL, config_key TEXT NOT NULL,
    status TEXT NOT NULL, "values" TEXT NOT NULL DEFAULT '{}', error TEXT, failure_kind TEXT,
    started_at REAL, finished_at REAL, batch INTEGER, attempt INTEGER NOT NULL DEFAULT 1,
    origin TEXT NOT NULL DEFAULT 'suggested');
INSERT INTO bayestune_schema VALUES (1, 0.0);
INSERT INTO meta VALUES ('created_at', '0.0');
INSERT INTO trials (config, config_key, status, "values", started_at, finished_at)
    VALUES ('{"x": 1}', '{"x":1}', 'ok', '{"t": 2.0}', 1.0, 2.0);
PRAGMA user_version = 1;
"""


def test_a_version_1_journal_is_migrated_and_stays_readable(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript(_VERSION_1_TRIALS)
    con.close()
    with Journal.open(path) as journal:
        (old,) = journal.trials()
        assert old.values == {"t": 2.0} and old.repeats == {} and old.timings == {}
        new = journal.record({"x": 2}, Result(values={"t": 1.0}, repeats={"t": (1.0, 1.0)}))
        journal.record_remeasurement(old.trial_id, 1, Result(values={"t": 2.1}))
    with Journal.open(path) as journal:
        assert journal.trials()[1] == new and len(journal.remeasurements()) == 1
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.close()
