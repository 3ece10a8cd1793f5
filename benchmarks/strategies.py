"""The strategies a benchmark compares: a registry name -> factory(problem, seed) -> runner.

A runner has ``run(problem, budget, seed) -> Trajectory``. Every bayestune strategy
(``bayestune.strategies.available_strategies()``: ``bo``, ``random``, ``cot_random``,
``genetic``, ``annealing``, ``local``, ...) is registered under its own name and runs through
``bayestune.optimizer.Optimizer(...).optimize``. A peer (Optuna, SMAC, Kernel Tuner, ...) is
just another entry: call :func:`register_strategy` with a factory whose runner drives the
peer's own loop through a :class:`CountedObjective`, which applies the same budget rules to
everyone (DESIGN.md, "Replay mode"):

* the budget counts unique evaluations of known-feasible configurations, failures included;
* a repeated proposal is free (it gets the recorded answer again);
* a proposal outside the known-feasible set is rejected without charge (it is told it failed:
  ``Result.failure(kind="invalid")``), for peers that cannot express known constraints;
* asking for more than the budget raises :class:`BudgetExhausted`.

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
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from benchmarks.problem import Problem
from bayestune.trial import Result, coerce_result


class BudgetExhausted(Exception):
    """A peer asked for an evaluation beyond its budget."""


@dataclass
class Evaluation:
    value: float | None  # the objective; None for a failure
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
    repeats: int = 0   # repeated proposals (free)
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
            "configs": [_jsonable(e.config) for e in ev],
            "wall_s": self.wall_s, "strategy_s": self.strategy_s, "eval_total_s": self.eval_s,
            "peak_rss_mb": self.peak_rss_mb, "rss_delta_mb": self.rss_delta_mb, "memory_method": self.memory_method,
            "rejected": self.rejected, "repeats": self.repeats, "notes": self.notes,
        }


def _jsonable(config: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in config.items():
        if isinstance(v, tuple):
            v = list(v)
        elif hasattr(v, "item"):
            v = v.item()
        out[k] = v
    return out


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
        self._answers: dict[bytes, Result] = {}
        self._t0 = time.perf_counter()
        self._last_end = self._t0

    @property
    def n_counted(self) -> int:
        return len(self.trajectory.evaluations)

    @property
    def exhausted(self) -> bool:
        return self.n_counted >= self.budget

    def key(self, config: Mapping[str, Any]) -> bytes | None:
        try:
            return self.problem.space.row_keys(self.problem.space.to_matrix([config]))[0]
        except Exception:
            return None

    def __call__(self, config: Mapping[str, Any]) -> Result:
        start = time.perf_counter()
        key = self.key(config)
        if key is None or not self.problem.known_feasible(config):
            self.trajectory.rejected += 1
            return Result.failure("outside the known-feasible set (not charged)", "invalid")
        if key in self._answers:
            self.trajectory.repeats += 1
            return self._answers[key]
        if self.exhausted:
            raise BudgetExhausted(f"budget of {self.budget} evaluations used up")
        try:
            result = coerce_result(self.problem.evaluate(dict(config)), [self.problem.objective])
        except Exception as exc:  # a crashing black box is a failed evaluation
            result = Result.failure(f"{type(exc).__name__}: {exc}", "exception")
        end = time.perf_counter()
        self._answers[key] = result
        value = result.values.get(self.problem.objective) if result.status.value == "ok" else None
        feasible = value is not None and math.isfinite(value)
        self.trajectory.evaluations.append(Evaluation(
            value=float(value) if feasible else None, feasible=feasible,
            kind=None if feasible else (result.kind or "infeasible"),
            ask_s=start - self._last_end, eval_s=end - start, config=dict(config)))
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


# ---- runners ------------------------------------------------------------------------------
class Runner(Protocol):
    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory: ...


class BayestuneRunner:
    """A bayestune strategy through the Optimizer's own loop."""

    def __init__(self, strategy: str, options: dict[str, Any] | None = None) -> None:
        self.strategy = strategy
        self.options = options

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        from bayestune.optimizer import Optimizer

        def drive(objective: CountedObjective) -> None:
            opt = Optimizer(problem.space, objectives=[problem.objective], strategy=self.strategy,
                            strategy_options=self.options, seed=seed)
            opt.optimize(objective, budget)

        return run_measured(problem, budget, drive)


@dataclass
class StrategyEntry:
    name: str
    factory: Callable[[Problem, int], Runner]
    description: str = ""
    family: str = "bayestune"  # "bayestune" or "peer"
    available: Callable[[], str | None] = lambda: None  # None if usable, else why not

    def describe(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("factory")
        d.pop("available")
        return d


STRATEGIES: dict[str, StrategyEntry] = {}


def register_strategy(name: str, factory: Callable[[Problem, int], Runner], *, description: str = "",
                      family: str = "peer", available: Callable[[], str | None] | None = None) -> None:
    """Add a strategy (e.g. a peer adapter) under ``name``."""
    STRATEGIES[name] = StrategyEntry(name, factory, description, family, available or (lambda: None))


def _register_bayestune() -> None:
    from bayestune.strategies import available_strategies

    for name in available_strategies():
        register_strategy(name, lambda problem, seed, _n=name: BayestuneRunner(_n),
                          description=f"bayestune strategy {name!r}", family="bayestune")


_register_bayestune()


def _register_peers() -> None:
    from benchmarks.peers import load_all

    load_all()


_register_peers()


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def resolve_strategies(spec: str) -> list[str]:
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "all":
            out.extend(n for n in STRATEGIES if n not in out)
            continue
        if item not in STRATEGIES:
            raise ValueError(f"unknown strategy {item!r}; known: {sorted(STRATEGIES)}")
        if item not in out:
            out.append(item)
    return out


def make_runner(name: str, problem: Problem, seed: int) -> Runner:
    entry = STRATEGIES[name]
    why = entry.available()
    if why:
        raise RuntimeError(f"strategy {name!r} is unavailable: {why}")
    return entry.factory(problem, seed)
