"""The fair black box every contender of a benchmark runs against, whatever the number of
objectives (:class:`CountedObjective`), and the record of a run (:class:`Trajectory`):

* the budget counts unique evaluations of known-feasible configurations, failures included;
* a repeated proposal is free (it gets the recorded answer again);
* a proposal outside the known-feasible set is rejected without charge (it is told it failed:
  ``Result.failure(kind="invalid")``), for peers that cannot express known constraints;
* asking for more than the budget raises :class:`BudgetExhausted`.

A peer whose loop could keep proposing without spending budget bounds it with a
:class:`ProposalGuard`.

Timing: ``ask_s`` of an evaluation is the wall time from the end of the previous counted
evaluation (or the run's start) to the start of this one, i.e. the strategy's own work for
that suggestion (its tell of the previous result included); ``eval_s`` is the black box's.

Memory (``peak_rss_mb``, ``rss_delta_mb``): on Linux the process's resident-set high-water
mark is reset before the run (``/proc/self/clear_refs`` <- 5) and read after it (``VmHWM``);
the delta subtracts the resident set at the start. It is the whole process (the problem's
data included), measured without tracemalloc's slowdown. Elsewhere ``ru_maxrss`` is used
(then only growth of the process's lifetime peak shows up in the delta).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bayestune.jsonable import to_jsonable
from bayestune.objectives import Objective
from bayestune.trial import Result, TrialStatus, coerce_result
from benchmarks.problem import Problem, config_key


class BudgetExhausted(Exception):
    """A peer asked for an evaluation beyond its budget."""


@dataclass
class Evaluation:
    value: float | list[float] | None  # the objective (a list for several); None for a failure
    feasible: bool
    kind: str | None  # failure kind (None when feasible)
    ask_s: float
    eval_s: float
    config: dict[str, Any]


@dataclass
class Trajectory:
    """Every counted evaluation of one run, in order, plus the run's cost."""

    evaluations: list[Evaluation] = field(default_factory=list)
    wall_s: float = 0.0
    strategy_s: float = 0.0
    eval_s: float = 0.0
    peak_rss_mb: float | None = None
    rss_delta_mb: float | None = None
    memory_method: str = ""
    rejected: int = 0  # proposals outside the known-feasible set (free)
    repeats: int = 0  # repeated proposals (free)
    notes: str = ""

    @property
    def values(self) -> list[float | None]:
        return [e.value for e in self.evaluations]

    def to_record(self) -> dict[str, Any]:
        ev = self.evaluations
        return {
            "n_evaluations": len(ev),
            "values": [e.value for e in ev],
            "feasible": [e.feasible for e in ev],
            "failure_kinds": [e.kind for e in ev],
            "ask_s": [round(e.ask_s, 6) for e in ev],
            "eval_s": [round(e.eval_s, 6) for e in ev],
            "configs": [to_jsonable(e.config) for e in ev],
            "wall_s": self.wall_s,
            "strategy_s": self.strategy_s,
            "eval_total_s": self.eval_s,
            "peak_rss_mb": self.peak_rss_mb,
            "rss_delta_mb": self.rss_delta_mb,
            "memory_method": self.memory_method,
            "rejected": self.rejected,
            "repeats": self.repeats,
            "notes": self.notes,
        }


# ---- memory -------------------------------------------------------------------------------
def _status_kb(field_name: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


class MemoryProbe:
    """Peak resident memory of this process during a run (see the module docstring)."""

    def __init__(self) -> None:
        self.method = "none"
        self.start_kb: float | None = None

    def start(self) -> None:
        self.start_kb = _status_kb("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            self.method = "VmHWM (reset per run)"
        except OSError:
            self.method = "ru_maxrss"
            self.start_kb = self._maxrss_kb()

    @staticmethod
    def _maxrss_kb() -> float | None:
        try:
            import resource
        except ImportError:
            return None
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss / 1024 if sys.platform == "darwin" else float(rss)

    def stop(self) -> tuple[float | None, float | None]:
        peak = _status_kb("VmHWM") if self.method.startswith("VmHWM") else self._maxrss_kb()
        if peak is None:
            return None, None
        delta = peak - self.start_kb if self.start_kb is not None else None
        return peak / 1024, (delta / 1024 if delta is not None else None)


# ---- the fair objective ---------------------------------------------------------------------
class CountedObjective:
    """The black box as every strategy sees it in a benchmark: applies the budget rules and
    records the trajectory (see the module docstring). Call it with a configuration dict."""

    def __init__(self, problem: Problem, budget: int) -> None:
        self.problem = problem
        self.budget = int(budget)
        self.trajectory = Trajectory()
        self._answers: dict[str, Result] = {}
        self._t0 = time.perf_counter()
        self._last_end = self._t0

    @property
    def n_counted(self) -> int:
        return len(self.trajectory.evaluations)

    @property
    def exhausted(self) -> bool:
        return self.n_counted >= self.budget

    def __call__(self, config: Mapping[str, Any]) -> Result:
        start = time.perf_counter()
        if not self.problem.known_feasible(config):
            self.trajectory.rejected += 1
            return Result.failure("outside the known-feasible set (not charged)", "invalid")
        key = config_key(config)
        if key in self._answers:
            self.trajectory.repeats += 1
            return self._answers[key]
        if self.exhausted:
            raise BudgetExhausted(f"budget of {self.budget} evaluations used up")
        names = self.problem.objective_names
        try:
            result = coerce_result(self.problem.evaluate(dict(config)), names)
        except Exception as exc:  # a crashing black box is a failed evaluation
            result = Result.failure(f"{type(exc).__name__}: {exc}", "exception")
        end = time.perf_counter()
        self._answers[key] = result
        values = [result.values.get(n) for n in names] if result.status is TrialStatus.OK else [None]
        feasible = all(v is not None and math.isfinite(v) for v in values)
        value = None
        if feasible:
            value = [float(v) for v in values] if len(names) > 1 else float(values[0])
        self.trajectory.evaluations.append(
            Evaluation(
                value=value,
                feasible=feasible,
                kind=None if feasible else (result.kind or "infeasible"),
                ask_s=start - self._last_end,
                eval_s=end - start,
                config=dict(config),
            )
        )
        self._last_end = end
        return result

    def finish(self) -> Trajectory:
        tr = self.trajectory
        tr.wall_s = time.perf_counter() - self._t0
        tr.eval_s = sum(e.eval_s for e in tr.evaluations)
        tr.strategy_s = tr.wall_s - tr.eval_s
        return tr


def run_measured(problem: Problem, budget: int, drive: Callable[[CountedObjective], None]) -> Trajectory:
    """Run ``drive(objective)`` (the strategy's loop) under the memory probe and budget rules."""
    probe = MemoryProbe()
    probe.start()
    objective = CountedObjective(problem, budget)
    try:
        drive(objective)
    except BudgetExhausted:
        pass
    trajectory = objective.finish()
    trajectory.peak_rss_mb, trajectory.rss_delta_mb = probe.stop()
    trajectory.memory_method = probe.method
    return trajectory


class ProposalGuard:
    """Ends a peer's loop that keeps proposing without spending budget (rejected or repeated
    proposals are free): after ``max_proposals`` proposals or ``max_seconds`` of wall time."""

    def __init__(self, max_proposals: int, max_seconds: float | None = None) -> None:
        self.max_proposals = max_proposals
        self.max_seconds = max_seconds
        self.proposals = 0
        self.reason = ""
        self._t0 = time.perf_counter()

    def allow(self) -> bool:
        """Count one more proposal, or refuse it (``reason`` then says why the run stops)."""
        if self.proposals >= self.max_proposals:
            self.reason = f"stopped after {self.proposals} proposals"
            return False
        if self.max_seconds is not None and time.perf_counter() - self._t0 > self.max_seconds:
            self.reason = f"stopped after {self.max_seconds:.0f} s ({self.proposals} proposals)"
            return False
        self.proposals += 1
        return True

    def annotate(self, trajectory: Trajectory, budget: int) -> Trajectory:
        if self.reason:
            trajectory.notes = f"{self.reason} ({len(trajectory.evaluations)} of {budget} evaluations)"
        return trajectory


def worse_values(worst: list[float] | None, values: Sequence[float], objectives: Sequence[Objective]) -> list[float]:
    """Per objective, the worse of ``worst`` and ``values``: the placeholder a peer is told for a
    proposal rejected outside the known constraints (it carries no information)."""
    if worst is None:
        return list(values)
    return [max(a, b) if o.minimize else min(a, b) for a, b, o in zip(worst, values, objectives)]
