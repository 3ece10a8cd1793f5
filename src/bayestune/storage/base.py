"""What a journal of one run is, whatever holds it: the :class:`TrialJournal` protocol and the
rules every implementation shares (how configurations and results are stored, what "lost" means).

The optimizer always writes to a journal: the SQLite file (:class:`bayestune.storage.Journal`)
when the run must survive a crash, a :class:`~bayestune.storage.memory.MemoryJournal` otherwise.
Both pass the same contract tests, so a trial looks the same whichever one recorded it: configurations
come back as JSON would give them (permutations as lists unless a ``space`` is passed), non-finite
values as NaN, and a success carrying NaN as a failure of kind ``nan``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from bayestune.exceptions import JournalError
from bayestune.jsonable import to_jsonable
from bayestune.trial import FailureKind, Remeasurement, Result, Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Metadata every journal writes when it is created (the run's own keys are in :mod:`bayestune.run`).
META_CREATED_AT = "created_at"
META_VERSION = "bayestune_version"
#: The run's objectives (written by :mod:`bayestune.run`); a non-finite value fails a trial only
#: when it is one of them (a NaN extra metric must not discard a valid measurement).
META_OBJECTIVES = "objectives"

#: Error text of trials that were in flight when the optimizer stopped.
LOST_ERROR = "evaluation in flight when the optimizer stopped; re-run"

StatusFilter = TrialStatus | str | Iterable[TrialStatus | str] | None


@runtime_checkable
class TrialJournal(Protocol):
    """Where the optimizer records every trial before it is returned and every result before the next ask.

    ``start`` writes a pending row *before* the evaluation, which is what lets a resumed run
    find the evaluations that were in flight; ``abandon_pending`` marks them lost.
    """

    def start(self, config: Mapping[str, Any], *, batch: int | None = None, origin: str = ..., attempt: int = 1) -> int:
        """Record that ``config`` is about to be evaluated; return its trial id (ids increase)."""

    def finish(self, trial_id: int, result: Result) -> Trial:
        """Store the result of a started trial; JournalError if unknown or already finished."""

    def record(
        self,
        config: Mapping[str, Any],
        result: Result,
        *,
        origin: str = ...,
        batch: int | None = None,
        started_at: float | None = None,
        finished_at: float | None = None,
        attempt: int = 1,
    ) -> Trial:
        """Insert an already finished trial (manual entries, imports)."""

    def abandon_pending(self) -> list[Trial]:
        """Mark pending trials as FAILED of kind ``lost`` and return them, to be re-run."""

    def record_remeasurement(self, trial_id: int, round: int, result: Result) -> Remeasurement:
        """Keep one re-measurement of a finished trial (round ``round`` of the top-k check)."""

    def remeasurements(self, trial_id: int | None = None) -> list[Remeasurement]:
        """Re-measurements in the order they were taken, of one trial or of all."""

    def trials(self, status: StatusFilter = None, *, space: Any = None) -> list[Trial]:
        """Trials ordered by id; ``space`` (anything with ``validate_config``) canonicalises configs."""

    def best(self, objective: str, *, minimize: bool = True, k: int = 1) -> list[Trial]:
        """The ``k`` best feasible trials by ``objective`` (:class:`JournalQueries` answers it)."""

    def get_meta(self, key: str, default: Any = None) -> Any:
        """A run property stored with :meth:`set_meta`, else ``default``."""

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable run property (numpy values and tuples are converted)."""

    def meta(self) -> dict[str, Any]:
        """All run properties."""

    def close(self) -> None:
        """Release the storage (idempotent); every write is already durable."""


class JournalQueries:
    """Questions every journal answers the same way from :meth:`TrialJournal.trials`."""

    def trials(self, status: StatusFilter = None, *, space: Any = None) -> list[Trial]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def pending(self) -> list[Trial]:
        return self.trials(TrialStatus.PENDING)

    def n_finished(self, *, count_lost: bool = False) -> int:
        """Finished evaluations, the budget's unit: lost rows are excluded unless asked for."""
        return sum(
            1 for t in self.trials() if t.status.is_finished and (count_lost or t.failure_kind != FailureKind.LOST)
        )

    def best(self, objective: str, *, minimize: bool = True, k: int = 1) -> list[Trial]:
        """The ``k`` best feasible (status OK) trials by ``objective``; ties keep the earlier trial."""
        scored = [
            t for t in self.trials(TrialStatus.OK) if objective in t.values and math.isfinite(t.values[objective])
        ]
        scored.sort(key=lambda t: (t.values[objective] if minimize else -t.values[objective], t.trial_id))
        return scored[: max(int(k), 0)]

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


# ---- how configurations, values and metadata are stored ----------------------------------------
def _canonical(value: Any) -> Any:
    """Integral floats become ints so ``{"x": 4.0}`` and ``{"x": 4}`` get one key.

    Safe because no parameter type distinguishes 4 from 4.0 (categorical values must differ
    under ``==`` as well).
    """
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def encode_config(config: Mapping[str, Any]) -> tuple[str, str]:
    """``(config JSON, canonical key JSON)`` of a configuration; JournalError if not storable."""
    if not isinstance(config, Mapping):
        raise JournalError(f"a configuration must be a mapping of parameter names to values, but got {config!r}")
    try:
        plain = to_jsonable(config)
        key = {k: _canonical(v) for k, v in plain.items()}
        return (
            json.dumps(plain, allow_nan=False),
            json.dumps(key, sort_keys=True, separators=(",", ":"), allow_nan=False),
        )
    except (TypeError, ValueError) as exc:
        raise JournalError(f"cannot store configuration {dict(config)!r}: {exc}") from None


def encode_meta(key: str, value: Any) -> str:
    """JSON text of a metadata value; JournalError naming the key if it cannot be stored."""
    try:
        return json.dumps(to_jsonable(value), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"metadata {key!r} is not JSON-serialisable: {exc}") from None


def result_fields(
    result: Result,
    trial_id: int | None,
    objectives: Sequence[str] | None = None,
) -> tuple[TrialStatus, dict[str, float], str | None, str | None]:
    """``(status, values, error, failure_kind)`` to store for a Result; non-finite values become NaN.

    A result that claims success but carries NaN/inf is stored as a FAILED trial of kind
    ``nan``: a non-finite number in an OK row would poison every model fitted later. With
    ``objectives`` known, only their values count: a NaN extra metric is stored as NaN and the
    measurement stays valid.
    """
    if not isinstance(result, Result):
        raise JournalError(f"expected a bayestune Result, but got {result!r}")
    values: dict[str, float] = {}
    bad: list[str] = []
    for name, v in result.values.items():
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise JournalError(f"value {name!r} is not a number: {v!r}") from None
        if not math.isfinite(f):
            f = math.nan
            if objectives is None or str(name) in objectives:
                bad.append(str(name))
        values[str(name)] = f
    status, error, kind = result.status, result.error, result.kind
    if bad and status is TrialStatus.OK:
        error = f"value(s) not finite: {sorted(bad)}"
        kind = FailureKind.NAN
        status = TrialStatus.FAILED
        logger.warning("trial %s: %s; recorded as a failure", trial_id if trial_id is not None else "(new)", error)
    return status, values, error, kind


def measurement_fields(result: Result) -> tuple[dict[str, tuple[float, ...]], dict[str, float]]:
    """``(repeats, timings)`` of a Result as plain floats; JournalError naming what is not a number.

    Non-finite repeats are kept as NaN (a journal stores them as null), so the record of what
    was measured stays complete; timings must be finite and non-negative.
    """
    repeats: dict[str, tuple[float, ...]] = {}
    for name, samples in (result.repeats or {}).items():
        if isinstance(samples, (str, bytes)) or not isinstance(samples, Iterable):
            raise JournalError(f"repeats of {name!r} must be a sequence of numbers, but got {samples!r}")
        try:
            floats = tuple(float(v) for v in samples)
        except (TypeError, ValueError):
            raise JournalError(f"repeats of {name!r} must be numbers, but got {samples!r}") from None
        repeats[str(name)] = tuple(v if math.isfinite(v) else math.nan for v in floats)
    timings: dict[str, float] = {}
    for phase, seconds in (result.timings or {}).items():
        try:
            value = float(seconds)
        except (TypeError, ValueError):
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise JournalError(f"timing {phase!r} must be a non-negative number of seconds, but got {seconds!r}")
        timings[str(phase)] = value
    return repeats, timings


def remeasurement_fields(result: Result) -> tuple[dict[str, float], str | None]:
    """``(values, error)`` to keep for one re-measurement: a failed or infeasible one keeps its reason."""
    if not isinstance(result, Result):
        raise JournalError(f"expected a bayestune Result, but got {result!r}")
    if result.status is not TrialStatus.OK:
        return {}, result.error or "the black box reported it infeasible"
    values = {}
    for name, v in result.values.items():
        try:
            values[str(name)] = float(v)
        except (TypeError, ValueError):
            raise JournalError(f"value {name!r} is not a number: {v!r}") from None
    bad = sorted(n for n, v in values.items() if not math.isfinite(v))
    if bad:
        return {}, f"value(s) not finite: {bad}"
    return values, None


def encode_repeats(repeats: Mapping[str, Sequence[float]]) -> str:
    """JSON object ``name -> [samples]`` with NaN as null."""
    return json.dumps({k: [None if math.isnan(v) else v for v in vs] for k, vs in repeats.items()}, allow_nan=False)


def decode_repeats(text: str | None) -> dict[str, tuple[float, ...]]:
    raw = json.loads(text) if text else {}
    return {k: tuple(math.nan if v is None else float(v) for v in vs) for k, vs in raw.items()}


def objective_names(meta_value: Any) -> list[str] | None:
    """The objective names of a journal's ``objectives`` metadata, or None if absent or unreadable."""
    if not isinstance(meta_value, list):
        return None
    names = [o.get("name") for o in meta_value if isinstance(o, dict)]
    return [n for n in names if isinstance(n, str)] or None


def status_filter(status: StatusFilter) -> list[str] | None:
    """The status values ``status`` selects (None: all); JournalError for an unknown one."""
    if status is None:
        return None
    items = [status] if isinstance(status, (TrialStatus, str)) else list(status)
    try:
        return [TrialStatus(s).value for s in items]
    except ValueError:
        raise JournalError(f"unknown trial status in {items!r}; allowed: {[s.value for s in TrialStatus]}") from None


def with_space(trial: Trial, space: Any) -> Trial:
    """``trial`` with its configuration validated by ``space`` (tuples for permutations)."""
    if space is None:
        return trial
    return replace(trial, config=space.validate_config(trial.config))
