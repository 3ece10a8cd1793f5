"""A journal that lives as long as its optimizer: for runs that need no crash safety
(benchmarks, notebooks, tests), with exactly the SQLite journal's behaviour.

Configurations and metadata go through the same JSON encoding as the file would, so a
trial read back is the trial the SQLite journal would give.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bayestune._version import __version__
from bayestune.exceptions import JournalError
from bayestune.storage.base import (
    LOST_ERROR,
    META_CREATED_AT,
    META_OBJECTIVES,
    META_VERSION,
    JournalQueries,
    StatusFilter,
    encode_config,
    encode_meta,
    measurement_fields,
    objective_names,
    remeasurement_fields,
    result_fields,
    status_filter,
    with_space,
)
from bayestune.trial import FailureKind, Origin, Remeasurement, Result, Trial, TrialStatus


class MemoryJournal(JournalQueries):
    """In-memory :class:`~bayestune.storage.base.TrialJournal`; thread-safe like the SQLite one."""

    path = ":memory:"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._trials: dict[int, Trial] = {}
        self._remeasurements: list[Remeasurement] = []
        self._meta: dict[str, str] = {META_CREATED_AT: json.dumps(time.time()), META_VERSION: json.dumps(__version__)}
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError("journal ':memory:' is closed")

    # ---- metadata ----------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        text = encode_meta(key, value)
        with self._lock:
            self._check_open()
            self._meta[str(key)] = text

    def get_meta(self, key: str, default: Any = None) -> Any:
        with self._lock:
            text = self._meta.get(str(key))
        return default if text is None else json.loads(text)

    def meta(self) -> dict[str, Any]:
        with self._lock:
            return {k: json.loads(v) for k, v in sorted(self._meta.items())}

    # ---- trials ------------------------------------------------------------------------
    def _insert(self, trial: Trial) -> Trial:
        with self._lock:
            self._check_open()
            trial = replace(trial, trial_id=len(self._trials) + 1)
            self._trials[trial.trial_id] = trial
            return trial

    def start(
        self, config: Mapping[str, Any], *, batch: int | None = None, origin: str = Origin.SUGGESTED, attempt: int = 1
    ) -> int:
        stored = json.loads(encode_config(config)[0])
        return self._insert(
            Trial(
                0, stored, TrialStatus.PENDING, started_at=time.time(), batch=batch, attempt=int(attempt), origin=origin
            )
        ).trial_id

    def finish(self, trial_id: int, result: Result) -> Trial:
        status, values, error, kind = result_fields(result, trial_id, objective_names(self.get_meta(META_OBJECTIVES)))
        repeats, timings = measurement_fields(result)
        with self._lock:
            self._check_open()
            trial = self._trials.get(int(trial_id))
            if trial is None:
                raise JournalError(f"journal ':memory:' has no trial {trial_id}")
            if trial.status is not TrialStatus.PENDING:
                raise JournalError(
                    f"trial {trial_id} is already finished (status {trial.status.value!r}) in journal ':memory:'"
                )
            trial = replace(
                trial,
                status=status,
                values=values,
                error=error,
                failure_kind=kind,
                finished_at=time.time(),
                repeats=repeats,
                timings=timings,
                censored=result.censored and status is TrialStatus.OK,
            )
            self._trials[trial.trial_id] = trial
            return trial

    def record(
        self,
        config: Mapping[str, Any],
        result: Result,
        *,
        origin: str = Origin.SUGGESTED,
        batch: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        attempt: int = 1,
    ) -> Trial:
        stored = json.loads(encode_config(config)[0])
        status, values, error, kind = result_fields(result, None, objective_names(self.get_meta(META_OBJECTIVES)))
        repeats, timings = measurement_fields(result)
        finished_at = time.time() if finished_at is None else float(finished_at)
        started_at = finished_at if started_at is None else float(started_at)
        return self._insert(
            Trial(
                0,
                stored,
                status,
                values,
                error,
                kind,
                started_at,
                finished_at,
                batch,
                int(attempt),
                origin,
                repeats,
                timings,
                result.censored and status is TrialStatus.OK,
            )
        )

    def abandon_pending(self) -> list[Trial]:
        with self._lock:
            self._check_open()
            lost = [
                replace(
                    t,
                    status=TrialStatus.FAILED,
                    failure_kind=FailureKind.LOST,
                    error=LOST_ERROR,
                    finished_at=time.time(),
                )
                for t in self._trials.values()
                if t.status is TrialStatus.PENDING
            ]
            self._trials.update((t.trial_id, t) for t in lost)
            return lost

    def record_remeasurement(self, trial_id: int, round: int, result: Result) -> Remeasurement:
        values, error = remeasurement_fields(result)
        with self._lock:
            self._check_open()
            if int(trial_id) not in self._trials:
                raise JournalError(f"journal ':memory:' has no trial {trial_id}")
            item = Remeasurement(int(trial_id), int(round), values, error, time.time())
            self._remeasurements.append(item)
            return item

    def remeasurements(self, trial_id: int | None = None) -> list[Remeasurement]:
        with self._lock:
            self._check_open()
            return [r for r in self._remeasurements if trial_id is None or r.trial_id == int(trial_id)]

    def trials(self, status: StatusFilter = None, *, space: Any = None) -> list[Trial]:
        statuses = status_filter(status)
        with self._lock:
            self._check_open()
            chosen = [t for t in self._trials.values() if statuses is None or t.status.value in statuses]
        return [with_space(t, space) for t in chosen]

    def trial(self, trial_id: int, *, space: Any = None) -> Trial:
        with self._lock:
            trial = self._trials.get(int(trial_id))
        if trial is None:
            raise JournalError(f"journal ':memory:' has no trial {trial_id}")
        return with_space(trial, space)

    def close(self) -> None:
        self._closed = True

    def __repr__(self) -> str:
        return f"MemoryJournal({len(self._trials)} trials{', closed' if self._closed else ''})"
