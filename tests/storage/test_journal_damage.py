"""A damaged journal is reported by name (the row or metadata key, what is wrong), never a
traceback where the value is used; a success holding NaN/inf is read as a failure of kind
``nan``, so ``--resume`` fits its models to finite values only. Fuzzed over cells and values."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.cli import cli
from bayestune.exceptions import JournalError
from bayestune.objectives import Objective
from bayestune.run import describe_run, load_run
from bayestune.scenario.records import DesignSpec
from bayestune.space import Integer, Permutation, Space
from bayestune.storage import Journal
from bayestune.trial import Result, TrialStatus

COLUMNS = [
    "config",
    "config_key",
    "status",
    "values",
    "error",
    "failure_kind",
    "started_at",
    "finished_at",
    "batch",
    "attempt",
    "origin",
    "repeats",
    "timings",
]
META_KEYS = [
    "objectives",
    "strategy",
    "strategy_options",
    "seed",
    "design",
    "space",
    "budget",
    "created_at",
    "bayestune_version",
    "output_constraints",
    "scenario",
]
HOSTILE = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.sampled_from(
        [
            "[]",
            "{}",
            "[1]",
            '"s"',
            "[" * 3000,
            '{"runtime": NaN}',
            '{"runtime": Infinity}',
            '{"runtime": "x"}',
            '{"x": "a"}',
            '{"x": 1, "p": [0, 0, 0]}',
            "ok",
            "failed",
            "pending",
            '[{"name": 5}]',
            '{"a": 1}',
            '{"runtime": [1]}',
            "null",
            "1e999",
        ]
    ),
)


def _journal(path: Path) -> Path:
    space = Space([Integer("x", 0, 50), Permutation("p", 3)])
    with Journal(path) as journal:
        describe_run(
            journal,
            objectives=[Objective("runtime")],
            space=space,
            strategy="bo",
            strategy_options=None,
            seed=1,
            design=DesignSpec(size=3),
        )
        journal.set_meta("budget", 6)
        for x in (3, 9, 27):
            journal.record({"x": x, "p": [0, 1, 2]}, Result({"runtime": float(x)}))
    return path


@pytest.fixture(scope="module")
def clean_journal(tmp_path_factory) -> Path:
    return _journal(tmp_path_factory.mktemp("damage") / "base.db")


def _damaged(base: Path, where: str, column: str, value) -> Path | None:
    tmp = Path(tempfile.mkdtemp(prefix="bt-damage-"))
    path = tmp / "d.db"
    shutil.copy(base, path)
    conn = sqlite3.connect(path)
    try:
        if where == "trials":
            conn.execute(f'UPDATE trials SET "{column}" = ? WHERE trial_id = 2', (value,))
        else:
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, column))
        conn.commit()
    except (sqlite3.Error, OverflowError):
        return None  # a NOT NULL column refuses None: not a journal this bayestune can be given
    finally:
        conn.close()
    return path


def _read_everything(path: Path) -> None:
    try:
        with Journal.open(path, read_only=True) as journal:
            journal.meta()
            for trial in journal.trials():
                if trial.status is TrialStatus.OK:
                    assert all(v == v and abs(v) != float("inf") for v in [trial.values["runtime"]])
        load_run(str(path), read_only=True)
    except JournalError:
        pass


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    place=st.one_of(
        st.tuples(st.just("trials"), st.sampled_from(COLUMNS)), st.tuples(st.just("meta"), st.sampled_from(META_KEYS))
    ),
    value=HOSTILE,
)
def test_fuzzed_cells_and_metadata_read_or_give_a_journal_error(clean_journal, place, value):
    path = _damaged(clean_journal, *place, value)
    if path is not None:
        _read_everything(path)
        shutil.rmtree(path.parent)


@pytest.mark.parametrize("values", ['{"runtime": NaN}', '{"runtime": Infinity}', '{"runtime": null}', "{}"])
def test_a_success_without_a_finite_objective_reads_as_a_nan_failure(clean_journal, values):
    path = _damaged(clean_journal, "trials", "values", values)
    with Journal.open(path) as journal:
        trial = journal.trial(2)
        assert trial.status is TrialStatus.FAILED and trial.failure_kind == "nan"
        assert "no finite value for objective(s) ['runtime']" in trial.error


@pytest.mark.parametrize(
    "column, value, says",
    [
        ("config", "5", "not a JSON object"),
        ("config", "[" * 3000, "trial 2 is damaged"),
        ("started_at", "", "column 'started_at'"),
        ("attempt", b"\xff", "column 'attempt'"),
    ],
)
def test_damaged_cells_are_named(clean_journal, column, value, says):
    with Journal.open(_damaged(clean_journal, "trials", column, value)) as journal:
        with pytest.raises(JournalError, match=f"trial 2 is damaged.*{says}|{says}"):
            journal.trials()


@pytest.mark.parametrize(
    "key, value",
    [("objectives", "5"), ("seed", '"s"'), ("design", '{"a": 1}'), ("bayestune_version", ""), ("strategy", "{}")],
)
def test_damaged_metadata_is_named(clean_journal, key, value):
    with Journal.open(_damaged(clean_journal, "meta", key, value)) as journal:
        with pytest.raises(JournalError, match=f"metadata '{key}' is damaged"):
            journal.meta()


def test_resume_past_a_nan_success_fits_finite_values(tmp_path):
    scenario = tmp_path / "s.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "n",
                "parameters": [{"name": "x", "type": "integer", "bounds": [0, 50]}],
                "objectives": ["runtime"],
                "seed": 1,
                "strategy": "bo",
                "initial_design": {"size": 3},
                "budget": 5,
                "blackbox": {"command": "echo runtime: {x}"},
                "measurement": {"echo_check": False},  # the value is x on purpose
            }
        )
    )
    runner = CliRunner()
    journal = tmp_path / "j.db"
    assert runner.invoke(cli, ["optimize", str(scenario), "--journal", str(journal), "--no-progress"]).exit_code == 0
    conn = sqlite3.connect(journal)
    conn.execute("""UPDATE trials SET "values" = '{"runtime": NaN}' WHERE trial_id = 1""")
    conn.commit()
    conn.close()
    resumed = runner.invoke(
        cli, ["optimize", str(scenario), "--journal", str(journal), "--resume", "--budget", "7", "--no-progress"]
    )
    assert resumed.exit_code == 0 and resumed.exception is None, resumed.output
    with Journal.open(journal) as j:
        assert len(j.trials()) == 7 and j.trial(1).failure_kind == "nan"


def test_a_boolean_in_a_values_cell_is_damage_not_one(tmp_path):
    import sqlite3

    from bayestune.exceptions import JournalError
    from bayestune.storage import Journal
    from bayestune.trial import Result

    path = tmp_path / "j.db"
    with Journal(path) as journal:
        journal.record({"x": 1}, Result(values={"value": 2.0}))
    con = sqlite3.connect(path)
    con.execute("""UPDATE trials SET "values" = '{"value": true}'""")
    con.commit()
    con.close()
    with Journal(path, create=False) as journal, pytest.raises(JournalError, match="is damaged"):
        journal.trials()
