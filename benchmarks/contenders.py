"""The contenders a benchmark compares: a registry name -> factory(problem, seed) -> contender.

A contender has ``run(problem, budget, seed) -> Trajectory``. Every bayestune strategy
(``bayestune.strategies.available_strategies()``: ``bo``, ``random``, ``cot_random``,
``genetic``, ``annealing``, ``local``, ...) is registered under its own name and runs through
``bayestune.optimizer.Optimizer(...).optimize``. A peer (Optuna, SMAC, Kernel Tuner, ...) is
just another entry: call :func:`register_strategy` with a factory whose contender drives the
peer's own loop through a :class:`benchmarks.budget.CountedObjective`, so that everyone runs
under the same budget rules.

A *variant* ``strategy:key=value+key=value`` (e.g. ``bo:trust_region.every=3+design=maximin``) is a
bayestune strategy with options (``design``, ``design_size``, ``design_default`` set the initial
design instead): registered on first use under its full name, so its runs are recorded and
reported apart from the defaults — the ablations and default-selection screens of issue 17.

An entry says whether it takes single-objective problems, multi-objective ones or both
(:meth:`StrategyEntry.unsupported`); the harness skips the pairs that do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

import benchmarks.kernel_tuner_emulation  # noqa: F401  (registers the bo_kt contender)
from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.settings import put_option
from bayestune.space import Integer, Space
from bayestune.strategies import available_strategies, make_strategy
from benchmarks.budget import CountedObjective, Trajectory, run_measured
from benchmarks.peers import load_all
from benchmarks.problem import Problem


class Contender(Protocol):
    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory: ...


class BayestuneContender:
    """A bayestune strategy through the Optimizer's own loop (with its options and, if given, an
    initial design other than the default)."""

    def __init__(self, strategy: str, options: dict[str, Any] | None = None, design: DesignSpec | None = None) -> None:
        self.strategy = strategy
        self.options = options
        self.design = design

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        def drive(objective: CountedObjective) -> None:
            opt = Optimizer(
                problem.space,
                objectives=list(problem.objectives),
                strategy=self.strategy,
                strategy_options=self.options,
                design=self.design,
                seed=seed,
            )
            opt.optimize(objective, budget)

        return run_measured(problem, budget, drive)


@dataclass
class StrategyEntry:
    name: str
    factory: Callable[[Problem, int], Contender]
    description: str = ""
    family: str = "bayestune"  # "bayestune" or "peer"
    available: Callable[[], str | None] = lambda: None  # None if usable, else why not
    single_objective: bool = True
    multi_objective: bool = False
    packages: tuple[str, ...] = ()  # whose versions a run records

    def describe(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("factory")
        d.pop("available")
        return d

    def unsupported(self, problem: str, multi_objective: bool) -> str | None:
        """Why this strategy cannot run ``problem`` (None if it can)."""
        if multi_objective and not self.multi_objective:
            return f"{self.name} optimises one objective, {problem} has several"
        if not multi_objective and not self.single_objective:
            return f"{self.name} is for several objectives, {problem} has one"
        return None


STRATEGIES: dict[str, StrategyEntry] = {}


def register_strategy(
    name: str,
    factory: Callable[[Problem, int], Contender],
    *,
    description: str = "",
    family: str = "peer",
    available: Callable[[], str | None] | None = None,
    single_objective: bool = True,
    multi_objective: bool = False,
    packages: Sequence[str] = (),
) -> None:
    """Add a strategy (e.g. a peer adapter) under ``name``; the factory gets the problem, so one
    entry may serve single- and multi-objective problems with different contenders."""
    STRATEGIES[name] = StrategyEntry(
        name,
        factory,
        description,
        family,
        available or (lambda: None),
        single_objective,
        multi_objective,
        tuple(packages),
    )


def _takes_several_objectives(name: str) -> bool:
    """Ask the bayestune strategy itself: it refuses several objectives when it cannot handle them."""
    try:
        make_strategy(name, Space([Integer("x", 0, 1)]), [Objective("a"), Objective("b")], np.random.default_rng(0))
    except BayestuneError:
        return False
    return True


def _register_bayestune() -> None:
    for name in available_strategies():
        register_strategy(
            name,
            lambda problem, seed, _n=name: BayestuneContender(_n),
            description=f"bayestune strategy {name!r}",
            family="bayestune",
            multi_objective=_takes_several_objectives(name),
        )


_register_bayestune()
load_all()  # every peer adapter registers itself

#: Keys of a variant name that set the initial design instead of a strategy option.
DESIGN_KEYS = {"design": "method", "design_size": "size", "design_default": "include_default"}


def _option_value(text: str) -> Any:
    """``1`` -> 1, ``0.2`` -> 0.2, ``true``/``false``/``none`` -> True/False/None, else the text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_variant(name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """``"bo:trust_region.every=0+design=maximin"`` -> (``"bo"``, strategy options, design fields).

    A variant is a bayestune strategy with options, named in full so that its runs are recorded
    (and reported) apart from the defaults: the ablations and the default-selection screens."""
    base, _, spec = name.partition(":")
    options: dict[str, Any] = {}
    design: dict[str, Any] = {}
    for item in filter(None, spec.split("+")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"variant {name!r}: each option must read key=value, but got {item!r}")
        if key in DESIGN_KEYS:
            design[DESIGN_KEYS[key]] = _option_value(value)
        else:  # a dotted key sets an option of a group: trust_region.every=3
            put_option(options, key, _option_value(value), f"variant {name!r}")
    return base, options, design


def _ensure_registered(name: str) -> None:
    """Register a variant name (``strategy:key=value+...``) of a bayestune strategy on first use;
    its options are checked now, so a typo fails before any run starts."""
    if name in STRATEGIES or ":" not in name:
        return
    base, options, design = parse_variant(name)
    entry = STRATEGIES.get(base)
    if entry is None or entry.family != "bayestune":
        raise ValueError(
            f"variant {name!r}: {base!r} is not a bayestune strategy; known: "
            f"{sorted(n for n, e in STRATEGIES.items() if e.family == 'bayestune')}"
        )
    try:
        make_strategy(base, Space([Integer("x", 0, 1)]), [Objective("a")], np.random.default_rng(0), options)
        spec = DesignSpec(**design) if design else None
    except (BayestuneError, TypeError) as exc:
        raise ValueError(f"variant {name!r}: {exc}") from exc
    register_strategy(
        name,
        lambda problem, seed: BayestuneContender(base, options, spec),
        description=f"bayestune strategy {base!r} with {options or {}} {design or ''}".strip(),
        family="bayestune",
        multi_objective=entry.multi_objective,
    )


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
        _ensure_registered(item)
        if item not in STRATEGIES:
            raise ValueError(f"unknown strategy {item!r}; known: {sorted(STRATEGIES)}")
        if item not in out:
            out.append(item)
    return out


def make_contender(name: str, problem: Problem, seed: int) -> Contender:
    _ensure_registered(name)
    entry = STRATEGIES[name]
    why = entry.available() or entry.unsupported(problem.name, problem.multi_objective)
    if why:
        raise RuntimeError(f"strategy {name!r} is unavailable: {why}")
    return entry.factory(problem, seed)
