"""What one evaluation of the black box asked and answered: frozen records with a status enum.

Failures are data (hidden constraints), so a failed trial keeps its configuration and its
error text; it never carries a made-up penalty value.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class TrialStatus(str, enum.Enum):
    """Lifecycle of an evaluation. PENDING rows in a journal are in flight (or lost in a crash)."""

    PENDING = "pending"
    OK = "ok"  # measured and feasible
    INFEASIBLE = "infeasible"  # measured, but the black box or an output constraint says infeasible
    FAILED = "failed"  # crashed, timed out, produced garbage / NaN: a hidden-constraint failure

    @property
    def is_finished(self) -> bool:
        return self is not TrialStatus.PENDING


class FailureKind:
    """Why an evaluation failed: the vocabulary of ``Result.kind`` and ``Trial.failure_kind``.

    Plain strings (they are stored in journals and CSV files as they are); the names give
    them one home. Every kind except ``LOST`` is a hidden-constraint observation.
    """

    EXCEPTION = "exception"  # the Python black box raised
    CRASH = "crash"  # a process exited non-zero, died on a signal or could not start
    TIMEOUT = "timeout"  # stopped after the per-evaluation time limit
    PARSE = "parse"  # an answer that could not be read as objective values
    NAN = "nan"  # an objective value that is NaN or infinite
    TEMPLATE = "template"  # the command template or protocol line could not be filled
    PROTOCOL = "protocol"  # an external tool broke the line protocol
    INVALID = "invalid"  # a replayed configuration the recording marks invalid
    RUNTIME = "runtime"  # a kernel that failed at run time (live, or as recorded in a replayed cache)
    SCHEDULE = "schedule"  # a schedule the compiler refused before compiling (e.g. Halide's checks)
    COMPILE = "compile"  # a kernel or schedule that failed to compile
    VERIFICATION = "verification"  # ran, but its output differs from the reference answer (a wrong answer)
    OUTPUT_CONSTRAINT = "output_constraint"  # measured, but an output constraint is broken
    WORKER_LOST = "worker_lost"  # the worker running it died, more than the retries allow
    LOST = "lost"  # in flight when the process died; re-run on resume, never modelled


class Origin:
    """Why a trial was asked: the vocabulary of ``Trial.origin``."""

    DEFAULT = "default"  # the space's default configuration, first of the initial design
    INITIAL = "initial"  # the rest of the initial design
    SUGGESTED = "suggested"  # proposed by the strategy
    RERUN = "rerun"  # re-run on resume after being lost in flight
    MANUAL = "manual"  # asked by the user (``tell`` of an unsuggested configuration)
    IMPORTED = "imported"  # read from a CSV or another run


@dataclass(frozen=True)
class Result:
    """A black box's answer for one configuration.

    ``values`` maps objective names to numbers (and may carry extra metrics, e.g. for
    output constraints or structured BO); ``feasible=False`` or ``error`` marks a failure.
    """

    values: Mapping[str, float] = field(default_factory=dict)
    feasible: bool = True
    error: str | None = None
    kind: str | None = None  # a FailureKind
    #: Every repeated measurement behind ``values`` (objective name -> repeats), kept so the
    #: statistic can be re-derived and the model can read the measurement noise.
    repeats: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    #: Where the evaluation's time went, in seconds per phase (e.g. ``{"compile": 1.2, "run": 0.4}``);
    #: an evaluator fills what it knows, the loop adds ``"optimizer"`` (the suggestion's time).
    timings: Mapping[str, float] = field(default_factory=dict)
    #: The first objective's value is a bound, not a measurement of the whole policy: measuring
    #: stopped early because the first runs were clearly worse than the best so far, so the true
    #: value is at least this bad (``measurement.early_stop``). Models treat it as censored.
    censored: bool = False

    @classmethod
    def failure(cls, error: str, kind: str = FailureKind.EXCEPTION) -> Result:
        return cls(values={}, feasible=False, error=error, kind=kind)

    @property
    def status(self) -> TrialStatus:
        if self.error is not None:
            return TrialStatus.FAILED
        return TrialStatus.OK if self.feasible else TrialStatus.INFEASIBLE


#: Output names read as the feasibility flag when the scenario names none.
FEASIBLE_KEYS = ("feasible", "Valid", "valid")


def coerce_result(raw: Any, objectives: Sequence[str], feasible_key: str | None = None) -> Result:
    """Turn what a black box returned (number, sequence, mapping or Result) into a Result.

    ``feasible_key`` names the output that flags feasibility (HyperMapper's ``feasible_output``);
    by default ``feasible`` / ``Valid`` are recognised. NaN/inf objective values and missing
    objectives become a recorded failure, never a crash.
    """
    keys = (feasible_key,) if feasible_key else FEASIBLE_KEYS
    if isinstance(raw, Result):
        result = raw
    elif isinstance(raw, Mapping):
        values: dict[str, float] = {}
        feasible = True
        for key, v in raw.items():
            if key in keys and isinstance(v, (bool, str, int, float)):
                if isinstance(v, float) and not math.isfinite(v):
                    return Result.failure(
                        f"the feasibility flag {key!r} is {v!r}, not true or false", FailureKind.PARSE
                    )
                if isinstance(v, (bool, int, float)):
                    feasible = bool(v)
                else:
                    feasible = str(v).strip().lower() in ("true", "1", "yes")
                continue
            if isinstance(v, str) and "_" in v:  # float("1_000") is 1000: a typo, not a number
                return Result.failure(f"output {key!r} is not a number: {v!r}", FailureKind.PARSE)
            try:
                values[str(key)] = float(v)
            except (TypeError, ValueError):
                return Result.failure(f"output {key!r} is not a number: {v!r}", FailureKind.PARSE)
        result = Result(values=values, feasible=feasible)
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if len(objectives) != 1:
            return Result.failure(
                f"black box returned one number but the scenario has {len(objectives)} objectives {list(objectives)}",
                FailureKind.PARSE,
            )
        result = Result(values={objectives[0]: float(raw)})
    elif isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        if len(raw) != len(objectives):
            return Result.failure(
                f"black box returned {len(raw)} values but the scenario has objectives {list(objectives)}",
                FailureKind.PARSE,
            )
        try:
            result = Result(values={o: float(v) for o, v in zip(objectives, raw)})
        except (TypeError, ValueError):
            return Result.failure(f"black box returned non-numeric values {list(raw)!r}", FailureKind.PARSE)
    elif raw is None:
        return Result.failure("black box returned None", FailureKind.PARSE)
    else:
        try:
            return coerce_result(float(raw), objectives, feasible_key)  # numpy scalars and the like
        except (TypeError, ValueError):
            return Result.failure(f"cannot read objective values from {raw!r}", FailureKind.PARSE)

    if result.error is not None or not result.feasible:
        return result
    missing = [o for o in objectives if o not in result.values]
    if missing:
        return Result.failure(
            f"black box output lacks objective(s) {missing}; got {sorted(result.values)}", FailureKind.PARSE
        )
    bad = {o: result.values[o] for o in objectives if not math.isfinite(result.values[o])}
    if bad:
        return Result.failure(f"objective value is not finite: {bad}", FailureKind.NAN)
    return result


@dataclass(frozen=True)
class Remeasurement:
    """One extra measurement of an already journaled trial, taken in a re-measurement round.

    Kept apart from the trials (it is not charged to the budget and never seen by a model):
    the rounds re-measure the best configurations interleaved, to check the declared winner.
    """

    trial_id: int
    round: int
    values: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None  # the re-measurement failed (e.g. a wrong answer this time)
    measured_at: float | None = None  # unix time


@dataclass(frozen=True)
class Trial:
    """One journaled evaluation: the configuration asked and what came back."""

    trial_id: int
    config: Mapping[str, Any]
    status: TrialStatus
    values: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    failure_kind: str | None = None
    started_at: float | None = None  # unix time
    finished_at: float | None = None  # unix time
    batch: int | None = None
    attempt: int = 1
    origin: str = Origin.SUGGESTED
    repeats: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # see Result.repeats
    timings: Mapping[str, float] = field(default_factory=dict)  # see Result.timings
    censored: bool = False  # see Result.censored

    @property
    def feasible(self) -> bool:
        return self.status is TrialStatus.OK

    @property
    def duration(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at
