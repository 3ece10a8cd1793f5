"""What a scenario asks of measurement: the repeat policy, the top-k re-measurement and the
correctness check, as frozen records (read from a scenario's ``measurement`` section).

Records only, at the bottom beside :mod:`bayestune.objectives`, so the scenario layer can hold
them without importing the code that applies them: :mod:`bayestune.measurement.policy`,
:mod:`~bayestune.measurement.remeasure` and :mod:`~bayestune.measurement.correctness` apply them,
:mod:`~bayestune.measurement.build` wraps a scenario's evaluator with them, and
:mod:`bayestune.run` keeps a run's section in its journal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bayestune.exceptions import EvaluationError

#: The statistics a measurement policy can report (computed by :mod:`bayestune.measurement.statistics`).
STATISTICS = ("median", "min", "mean")
#: Keys of a ``measurement`` section that make the :class:`MeasurementPolicy`.
POLICY_KEYS = (
    "warmup",
    "repeats",
    "statistic",
    "max_repeats",
    "precision",
    "confidence",
    "early_abort",
    "max_failure_share",
)
#: Keys of a scenario's ``measurement`` section and of its ``check``.
MEASUREMENT_KEYS = (
    *POLICY_KEYS,
    "race",
    "remeasure_top",
    "remeasure_rounds",
    "baseline",
    "check",
    "echo_check",
)
#: The confirmation a single-objective run ends with when its scenario does not set
#: ``remeasure_top``: the best 2 and the baseline in 6 interleaved rounds (18 evaluations), the
#: fewest rounds that bound the median's 95 % interval. (With racing, the best 4 or 6 measured no
#: lower true regret at 11 or 22 more calls: benchmarks/results/measurement/confirmation_racing.md.)
DEFAULT_CONFIRM_TOP = 2
DEFAULT_CONFIRM_ROUNDS = 6
#: Rounds when ``remeasure_top`` is set without ``remeasure_rounds``.
DEFAULT_REMEASURE_ROUNDS = 8
CHECK_KEYS = ("expected", "rtol", "atol", "function")


@dataclass(frozen=True)
class MeasurementPolicy:
    """How many times to run one configuration and which number to keep.

    ``repeats``: measured runs taken unless aborted early. ``max_repeats``: with ``precision``,
    the most runs taken (adaptive repeats): after ``repeats``, run again until the
    ``confidence`` interval's half-width is within ``precision`` times the statistic.
    ``early_abort``: stop once the runs show the configuration clearly worse than the incumbent
    (:mod:`bayestune.measurement.early_stop`: after 3 runs, the second-best 10 % worse); its
    value is then a censored bound.
    ``max_failure_share``: a run that crashes or times out is recorded (a NaN sample); above
    this share of failed runs a configuration is measured no further (the confirmation refuses a
    candidate whose rounds fail above it), but it keeps its successful runs as its value (it fails only when none
    succeeded); a wrong answer or an infeasible one always decides at once. The median's distribution-free interval needs 6 runs at 95 %
    confidence (5 at 90 %); the mean's and the minimum's (Student's t) need 2, so the mean
    suits small adaptive budgets.
    """

    warmup: int = 0
    repeats: int = 1
    statistic: str = "median"
    max_repeats: int | None = None
    precision: float | None = None
    confidence: float = 0.95
    early_abort: bool = False
    max_failure_share: float = 0.25

    def __post_init__(self) -> None:
        for name in ("warmup", "repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "warmup" else 1):
                rule = ">= 0" if name == "warmup" else ">= 1"
                raise EvaluationError(f"measurement {name} must be an integer {rule}, but got {value!r}")
        if self.statistic not in STATISTICS:
            raise EvaluationError(
                f"measurement statistic must be one of {list(STATISTICS)}, but got {self.statistic!r}"
            )
        if self.max_repeats is not None:
            if (
                isinstance(self.max_repeats, bool)
                or not isinstance(self.max_repeats, int)
                or self.max_repeats < self.repeats
            ):
                raise EvaluationError(
                    f"`max_repeats >= repeats` must hold, but got (max_repeats={self.max_repeats!r}, "
                    f"repeats={self.repeats})"
                )
            if self.precision is None:
                raise EvaluationError(
                    "max_repeats needs a precision to reach (e.g. 0.02 for ±2 %); "
                    "for a fixed number of runs set repeats instead"
                )
        if self.precision is not None and (
            isinstance(self.precision, bool) or not isinstance(self.precision, (int, float)) or not self.precision > 0
        ):
            raise EvaluationError(
                f"measurement precision must be a positive fraction (0.02 = ±2 %), but got {self.precision!r}"
            )
        if (
            isinstance(self.confidence, bool)
            or not isinstance(self.confidence, (int, float))
            or not 0 < self.confidence < 1
        ):
            raise EvaluationError(f"measurement confidence must lie in (0, 1), but got {self.confidence!r}")
        if not isinstance(self.early_abort, bool):
            raise EvaluationError(f"measurement early_abort must be true or false, but got {self.early_abort!r}")
        if (
            isinstance(self.max_failure_share, bool)
            or not isinstance(self.max_failure_share, (int, float))
            or not 0 <= self.max_failure_share < 1
        ):
            raise EvaluationError(
                f"measurement max_failure_share must lie in [0, 1), but got {self.max_failure_share!r}"
            )

    @property
    def most_runs(self) -> int:
        """Measured runs of one configuration at most (warm-up excluded)."""
        return self.max_repeats if self.max_repeats is not None else self.repeats

    @property
    def is_single_run(self) -> bool:
        return self.warmup == 0 and self.most_runs == 1


@dataclass(frozen=True)
class CorrectnessCheck:
    """What a right answer looks like: ``expected`` outputs within ``rtol``/``atol``, and/or a
    ``function`` ``(config, values) -> True | False | "reason"`` (a callable, or its
    ``"module:function"`` / ``"path/to/file.py:function"`` name, loaded by the evaluator)."""

    expected: Mapping[str, float] = field(default_factory=dict)
    rtol: float = 1e-6
    atol: float = 0.0
    function: str | Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.expected, Mapping):
            raise EvaluationError(f"check expected must map output names to numbers, but got {self.expected!r}")
        for name, value in self.expected.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise EvaluationError(f"expected output {name!r} must be a finite number, but got {value!r}")
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise EvaluationError(f"check {name} must be a number >= 0, but got {value!r}")
        if isinstance(self.function, str) and ":" not in self.function:
            raise EvaluationError(
                f'check function must be "module:function" or "path/to/file.py:function", but got {self.function!r}'
            )
        if self.function is not None and not isinstance(self.function, str) and not callable(self.function):
            raise EvaluationError(
                f"check function must be a function (config, values) -> bool or reason, but got {self.function!r}"
            )
        if not self.expected and self.function is None:
            raise EvaluationError("a correctness check needs 'expected' outputs, a 'function', or both")


@dataclass(frozen=True)
class MeasurementSpec:
    """A scenario's measurement: the repeat policy, the confirmation that ends a run, and an
    optional correctness check.

    ``race``: measure by racing (:mod:`bayestune.measurement.racing`: repeats only for
    configurations that may be the best). None, the default, races whenever the section gives
    no other repeat rule (``repeats``, ``max_repeats``, ``precision``, ``early_abort``);
    ``False`` measures each configuration as the policy says (once by default).

    The confirmation re-measures the top ``remeasure_top`` trials and the ``baseline`` in
    ``remeasure_rounds`` interleaved rounds (``remeasure_top: 0``: none). Left unset it is
    on, with :data:`DEFAULT_CONFIRM_TOP` and :data:`DEFAULT_CONFIRM_ROUNDS`; a ``remeasure_top``
    given without rounds takes :data:`DEFAULT_REMEASURE_ROUNDS`, which bound the median's
    interval up to 99 % confidence (fewer than 6 leave the 95 % interval unbounded: the winner
    then comes without one). ``baseline``: ``"default"`` (the space's default configuration),
    a configuration, or None (no baseline, no speedup). ``echo_check``: stop a command's run
    whose objective echoes its arguments or never varies (:mod:`bayestune.measurement.echo_check`).
    """

    policy: MeasurementPolicy = field(default_factory=MeasurementPolicy)
    remeasure_top: int | None = None
    remeasure_rounds: int | None = None
    check: CorrectnessCheck | None = None
    baseline: str | Mapping[str, Any] | None = "default"
    race: bool | None = None
    echo_check: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.echo_check, bool):
            raise EvaluationError(f"measurement echo_check must be true or false, but got {self.echo_check!r}")
        if self.race is not None and not isinstance(self.race, bool):
            raise EvaluationError(f"measurement race must be true or false, but got {self.race!r}")
        if self.race and self.has_repeat_rule:
            raise EvaluationError(
                "measurement race: true chooses the repeats itself; drop repeats, max_repeats, "
                "precision and early_abort, or set race: false to use them"
            )
        for name, least in (("remeasure_top", 0), ("remeasure_rounds", 1)):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
                raise EvaluationError(f"measurement {name} must be an integer >= {least}, but got {value!r}")
        if not (self.baseline is None or self.baseline == "default" or isinstance(self.baseline, Mapping)):
            raise EvaluationError(
                f'measurement baseline must be "default", a configuration (an object of parameter '
                f"values) or null, but got {self.baseline!r}"
            )

    @property
    def has_repeat_rule(self) -> bool:
        """Whether the policy says how often to run a configuration (so the default racing is off)."""
        policy, default = self.policy, MeasurementPolicy()
        return policy.most_runs > 1 or policy.precision is not None or policy.early_abort != default.early_abort

    @property
    def races(self) -> bool:
        """Whether configurations are raced: asked for, or by default when no repeat rule is given."""
        return self.race if self.race is not None else not self.has_repeat_rule

    @property
    def confirmation(self) -> tuple[int, int]:
        """``(top, rounds)`` of the confirmation (top 0: none)."""
        if self.remeasure_top is None:
            return DEFAULT_CONFIRM_TOP, self.remeasure_rounds or DEFAULT_CONFIRM_ROUNDS
        return self.remeasure_top, self.remeasure_rounds or DEFAULT_REMEASURE_ROUNDS

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MeasurementSpec:
        """The record of a ``measurement`` section; EvaluationError naming an unknown or bad key."""
        _known(data, MEASUREMENT_KEYS, "measurement")
        policy = MeasurementPolicy(**{k: data[k] for k in POLICY_KEYS if k in data})
        check = None
        if "check" in data:
            raw = data["check"]
            if not isinstance(raw, Mapping):
                raise EvaluationError(
                    f"measurement check must be an object with keys {list(CHECK_KEYS)}, but got {raw!r}"
                )
            _known(raw, CHECK_KEYS, "measurement.check")
            check = CorrectnessCheck(**dict(raw))
        extra = {
            k: data[k] for k in ("remeasure_top", "remeasure_rounds", "baseline", "race", "echo_check") if k in data
        }
        return cls(policy=policy, check=check, **extra)

    def to_dict(self) -> dict[str, Any]:
        """The section :meth:`from_dict` reads back, without the keys left at their defaults."""
        out: dict[str, Any] = {}
        default = MeasurementPolicy()
        for name in POLICY_KEYS:
            if getattr(self.policy, name) != getattr(default, name):
                out[name] = getattr(self.policy, name)
        for name in ("race", "remeasure_top", "remeasure_rounds"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if not self.echo_check:
            out["echo_check"] = False
        if self.baseline != "default":
            out["baseline"] = dict(self.baseline) if isinstance(self.baseline, Mapping) else self.baseline
        if self.check is not None:
            check: dict[str, Any] = {"rtol": self.check.rtol, "atol": self.check.atol}
            if self.check.expected:
                check["expected"] = dict(self.check.expected)
            if self.check.function is not None:
                check["function"] = self.check.function
            out["check"] = check
        return out


def _known(data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise EvaluationError(f"{where}: unknown key(s) {unknown}; allowed: {list(allowed)}")
