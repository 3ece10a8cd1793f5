"""The journal contract: every TrialJournal implementation passes this whole battery.

A new journal gets it by adding one entry to the ``journal`` fixture.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bayestune.exceptions import JournalError
from bayestune.storage import Journal, MemoryJournal, TrialJournal
from bayestune.storage.base import LOST_ERROR, encode_config
from bayestune.trial import FailureKind, Origin, Result, TrialStatus


@pytest.fixture(params=["sqlite", "memory"])
def journal(request: pytest.FixtureRequest, tmp_path: Path):
    j = Journal(tmp_path / "run.db") if request.param == "sqlite" else MemoryJournal()
    with j:
        yield j


class ListsToTuples:
    """Stands in for Space: anything with ``validate_config`` may canonicalise configs."""

    def validate_config(self, config):
        return {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()}


def test_implements_the_protocol(journal) -> None:
    assert isinstance(journal, TrialJournal)


def test_ids_increase_and_pending_becomes_finished(journal) -> None:
    ids = [journal.start({"x": i}) for i in range(3)]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert [t.trial_id for t in journal.pending()] == ids
    trial = journal.finish(ids[1], Result(values={"t": 2.5, "e": 7.0}))
    assert trial.status is TrialStatus.OK and trial.values == {"t": 2.5, "e": 7.0}
    assert trial.started_at <= trial.finished_at and trial.duration >= 0
    assert [t.trial_id for t in journal.pending()] == [ids[0], ids[2]]
    assert journal.trials()[1] == trial
    later = journal.record({"x": 9}, Result(values={"t": 1.0}))
    assert later.trial_id > ids[-1]


def test_every_status_and_field_is_kept(journal) -> None:
    ok = journal.finish(journal.start({"x": 1.5, "n": 3}, batch=0), Result(values={"t": 2.5}))
    inf = journal.finish(journal.start({"x": 2.5, "n": 4}, batch=0), Result(values={"t": 9.0}, feasible=False))
    failed = journal.finish(
        journal.start({"x": 3.5, "n": 5}, batch=1), Result.failure("segfault in kernel\nstack: ...", FailureKind.CRASH)
    )
    pending_id = journal.start({"x": 4.5, "n": 6}, batch=1, origin=Origin.INITIAL, attempt=2)
    t_ok, t_inf, t_failed, t_pending = journal.trials()
    assert (t_ok, t_inf, t_failed) == (ok, inf, failed)
    assert t_ok.config == {"x": 1.5, "n": 3} and isinstance(t_ok.config["n"], int)
    assert (t_ok.batch, t_ok.origin, t_ok.attempt) == (0, Origin.SUGGESTED, 1)
    assert t_inf.status is TrialStatus.INFEASIBLE and t_inf.values == {"t": 9.0}
    assert t_failed.status is TrialStatus.FAILED and t_failed.failure_kind == FailureKind.CRASH
    assert t_failed.error == "segfault in kernel\nstack: ..."
    assert t_pending.trial_id == pending_id and t_pending.finished_at is None
    assert (t_pending.origin, t_pending.attempt, t_pending.batch) == (Origin.INITIAL, 2, 1)


def test_permutations_come_back_as_lists_or_through_a_space(journal) -> None:
    config = {"order": (2, 0, 1), "tile": np.int64(32), "unroll": True, "vec": "avx2"}
    tid = journal.finish(journal.start(config), Result(values={"t": 1.0})).trial_id
    assert journal.trials()[0].config == {"order": [2, 0, 1], "tile": 32, "unroll": True, "vec": "avx2"}
    assert journal.trials(space=ListsToTuples())[0].config["order"] == (2, 0, 1)
    assert journal.trial(tid, space=ListsToTuples()).config["order"] == (2, 0, 1)


def test_nan_results_become_failures_of_kind_nan(journal) -> None:
    trial = journal.finish(journal.start({"x": 1}), Result(values={"t": 1.0, "power": math.nan}))
    assert trial.status is TrialStatus.FAILED and trial.failure_kind == FailureKind.NAN
    assert "power" in trial.error
    assert trial.values["t"] == 1.0 and math.isnan(trial.values["power"])
    infeasible = journal.record({"x": 2}, Result(values={"t": math.inf}, feasible=False))
    assert infeasible.status is TrialStatus.INFEASIBLE and math.isnan(infeasible.values["t"])
    assert math.isnan(journal.trials()[1].values["t"])


def test_finish_rejects_unknown_and_already_finished_trials(journal) -> None:
    tid = journal.start({"x": 1})
    journal.finish(tid, Result(values={"t": 1.0}))
    with pytest.raises(JournalError, match="already finished"):
        journal.finish(tid, Result(values={"t": 2.0}))
    with pytest.raises(JournalError, match="no trial 999"):
        journal.finish(999, Result(values={"t": 2.0}))
    assert journal.trial(tid).values == {"t": 1.0}


def test_record_inserts_a_finished_trial(journal) -> None:
    trial = journal.record(
        {"x": 1}, Result(values={"t": 3.0}), origin=Origin.IMPORTED, batch=7, started_at=100.0, finished_at=160.0
    )
    assert trial.status is TrialStatus.OK and trial.origin == Origin.IMPORTED and trial.batch == 7
    assert trial.duration == 60.0
    assert journal.pending() == []
    manual = journal.record({"x": 2}, Result(values={"t": 1.0}), origin=Origin.MANUAL)
    assert manual.finished_at is not None and journal.trials()[-1].origin == Origin.MANUAL


def test_unstorable_configs_and_results_are_journal_errors(journal) -> None:
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
    assert len(journal.trials()) == 1


def test_metadata_round_trips_numpy_values_and_has_defaults(journal) -> None:
    scenario = {"name": "gemm", "parameters": [{"name": "tile", "type": "ordinal", "values": (1, 2, 4)}]}
    assert journal.get_meta("created_at") <= time.time()
    assert isinstance(journal.get_meta("bayestune_version"), str)
    journal.set_meta("scenario", scenario)
    journal.set_meta("seed", np.int64(7))
    journal.set_meta("bounds", np.array([0.5, 1.5]))
    journal.set_meta("budget", 100)
    journal.set_meta("budget", 120)  # overwrite
    with pytest.raises(JournalError, match="not JSON-serialisable"):
        journal.set_meta("bad", {"f": object()})
    assert journal.get_meta("scenario")["parameters"][0]["values"] == [1, 2, 4]
    assert journal.get_meta("seed") == 7 and type(journal.get_meta("seed")) is int
    assert journal.get_meta("bounds") == [0.5, 1.5]
    assert journal.get_meta("budget") == 120
    assert journal.get_meta("missing", "dflt") == "dflt"
    assert set(journal.meta()) >= {"scenario", "seed", "budget", "created_at", "bayestune_version"}


def test_abandon_pending_marks_lost_and_keeps_them_off_the_budget(journal) -> None:
    a = journal.start({"x": 1})
    b = journal.start({"x": 2})
    c = journal.start({"x": 3})
    journal.finish(b, Result(values={"t": 1.0}))
    journal.record({"x": 4}, Result.failure("boom"))
    lost = journal.abandon_pending()
    assert [t.trial_id for t in lost] == [a, c]
    assert [t.config for t in lost] == [{"x": 1}, {"x": 3}]
    for t in lost:
        assert t.status is TrialStatus.FAILED and t.failure_kind == FailureKind.LOST and t.error == LOST_ERROR
    assert journal.pending() == []
    assert journal.n_finished() == 2  # b and the real failure
    assert journal.n_finished(count_lost=True) == 4
    assert journal.abandon_pending() == []
    retry = journal.start(lost[0].config, attempt=lost[0].attempt + 1, origin=Origin.RERUN)
    journal.finish(retry, Result(values={"t": 2.0}))
    assert [(t.attempt, t.origin) for t in journal.trials() if t.config == {"x": 1}] == [
        (1, Origin.SUGGESTED),
        (2, Origin.RERUN),
    ]
    assert journal.n_finished() == 3


def test_best_uses_feasible_successes_only(journal) -> None:
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


def test_status_filters(journal) -> None:
    journal.record({"x": 1}, Result(values={"t": 1.0}))
    journal.record({"x": 2}, Result.failure("e"))
    journal.start({"x": 3})
    assert len(journal.trials(TrialStatus.OK)) == 1
    assert len(journal.trials("failed")) == 1
    assert len(journal.trials([TrialStatus.OK, TrialStatus.PENDING])) == 2
    assert len(journal.trials([])) == 0
    with pytest.raises(JournalError, match="unknown trial status"):
        journal.trials("done")


def test_closed_journal_refuses_work(journal) -> None:
    journal.close()
    journal.close()  # idempotent
    with pytest.raises(JournalError, match="closed"):
        journal.start({"x": 1})


def test_concurrent_finishes_from_worker_threads(journal) -> None:
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        try:
            for i in range(25):
                journal.finish(journal.start({"w": w, "i": i}, batch=w), Result(values={"t": float(i)}))
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
    assert [t.trial_id for t in trials] == sorted(t.trial_id for t in trials)
    assert all(t.values["t"] == t.config["i"] for t in trials)


def test_canonical_key_folds_integral_floats_lists_and_key_order() -> None:
    key = encode_config({"tile": 4, "order": (1, 0), "x": 0.5})[1]
    assert encode_config({"x": 0.5, "order": [1, 0], "tile": 4.0})[1] == key
    assert encode_config({"x": 0.5, "order": (1, 0), "tile": np.int32(4)})[1] == key
    assert encode_config({"tile": 4, "order": (0, 1), "x": 0.5})[1] != key


def test_repeats_and_timings_are_kept(journal) -> None:
    result = Result(values={"t": 2.0}, repeats={"t": (2.5, 2.0, 1.5)}, timings={"compile": 0.5, "run": 1.25})
    finished = journal.finish(journal.start({"x": 1}), result)
    recorded = journal.record({"x": 2}, Result(values={"t": 3.0}, repeats={"t": (3.0, math.inf)}))
    first, second = journal.trials()
    assert first == finished and first.repeats == {"t": (2.5, 2.0, 1.5)}
    assert first.timings == {"compile": 0.5, "run": 1.25}
    assert second == recorded and second.repeats["t"][0] == 3.0 and math.isnan(second.repeats["t"][1])
    assert second.timings == {}


def test_bad_repeats_or_timings_are_refused_naming_them(journal) -> None:
    trial_id = journal.start({"x": 1})
    with pytest.raises(JournalError, match="repeats of 't'"):
        journal.finish(trial_id, Result(values={"t": 1.0}, repeats={"t": ("fast",)}))
    with pytest.raises(JournalError, match="timing 'run'"):
        journal.finish(trial_id, Result(values={"t": 1.0}, timings={"run": -1.0}))
    assert journal.pending()[0].trial_id == trial_id


def test_remeasurement_rounds_are_kept_in_order(journal) -> None:
    a = journal.record({"x": 1}, Result(values={"t": 1.0}))
    b = journal.record({"x": 2}, Result(values={"t": 2.0}))
    journal.record_remeasurement(a.trial_id, 1, Result(values={"t": 1.1}))
    journal.record_remeasurement(b.trial_id, 1, Result(values={"t": 1.9}))
    journal.record_remeasurement(a.trial_id, 2, Result.failure("wrong answer", FailureKind.VERIFICATION))
    rounds = journal.remeasurements()
    assert [(r.trial_id, r.round) for r in rounds] == [(a.trial_id, 1), (b.trial_id, 1), (a.trial_id, 2)]
    assert rounds[0].values == {"t": 1.1} and rounds[0].error is None and rounds[0].measured_at is not None
    assert rounds[2].values == {} and rounds[2].error == "wrong answer"
    assert [r.round for r in journal.remeasurements(a.trial_id)] == [1, 2]
    with pytest.raises(JournalError, match="no trial 99"):
        journal.record_remeasurement(99, 1, Result(values={"t": 1.0}))
