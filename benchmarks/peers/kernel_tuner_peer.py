"""Kernel Tuner's own strategies as peers, replaying the same cache files in its simulation mode.

Strategies (``pip install kernel_tuner``; written against Kernel Tuner 1.5):

``kt_bayes_opt``                  ``bayes_opt`` with its defaults (method ``multi-ultrafast``)
``kt_bayes_opt_multi_advanced``   ``bayes_opt``, ``method="multi-advanced"``
``kt_bayes_opt_ei``               ``bayes_opt``, ``method="ei"``
``kt_genetic_algorithm``          ``genetic_algorithm`` with its defaults
``kt_random_sample``              ``random_sample``

Only GPU problems (replays of Kernel Tuner cache files) can be run: the factory raises
``RuntimeError`` for any other problem.

How a run works
    Kernel Tuner runs first, on its own, through ``tune_kernel(..., cache=<file>,
    simulation_mode=True, strategy=..., strategy_options={"max_fevals": N})`` with the cache
    file's own header (kernel name, problem size, ``tune_params`` in ``tune_params_keys`` order,
    constants included; the device name is taken from the cache in simulation mode). Its known
    restrictions are the known-feasible set K of our replay (the cached configurations not marked
    ``InvalidConfig``), given as one ``FunctionConstraint`` over all parameters; configurations
    with recorded compile/runtime failures stay in its search space, exactly as in ours. The
    configurations it evaluated (its results list, failures and repeats included, in evaluation
    order) are then fed in that order into the shared :class:`CountedObjective` until our budget is
    used: a repeat is free, a configuration outside K is rejected free (cannot happen with this
    restriction). With this restriction Kernel Tuner's own budget accounting (unique configurations
    run, failures included) is the same as ours, so ``max_fevals = budget`` yields exactly
    ``budget`` counted evaluations; if it ever stops short (a strategy that ends on its own, or an
    exception), it is rerun with twice the ``max_fevals`` (up to twice more; none of these
    strategies' proposals depend on ``max_fevals`` before it is reached), and a remaining shortfall
    is recorded in ``Trajectory.notes``. Kernel Tuner's proposals that violate the restriction
    never reach the runner and are not in its results: they are not counted in
    ``Trajectory.rejected``.

Kernel Tuner 1.5 bug, fixed here
    ``bayes_opt`` marks an invalid observation with ``1e20`` and keeps it out of its Gaussian
    process, but the cost function it calls (``strategies.common.CostFunc`` via
    ``util.get_result_cost``) returns ``sys.float_info.max`` for a configuration that failed to
    compile or run. Such failures therefore enter the GP as observations of 1.8e308: the
    normalisation of the targets overflows (NaN) and the model is useless for the rest of the run
    (on convolution_A100, 161 recorded failures, 10 seeds at 100 evaluations, mean best/optimum:
    default 1.68, multi-advanced 1.74, ei 1.73 -- worse than random sampling, 1.46). During a run,
    ``BayesianOptimization.evaluate_objective_function`` is wrapped to map ``float_info.max`` to its
    own invalid marker (same run: 1.42, 1.38, 1.37). Nothing else is changed; the other strategies
    only rank costs, where ``float_info.max`` is fine. ``KernelTunerContender(fix_failure_cost=False)``
    runs the released behaviour.

Timing
    Kernel Tuner's whole wall time (search-space construction included) is strategy time; it is
    attributed evenly to the counted evaluations as ``ask_s`` (the replay lookups, ``eval_s``, are
    measured when the configurations are fed). ``wall_s`` and ``strategy_s`` of the run are real.

Seeding
    Kernel Tuner 1.5 takes no seed for these strategies (``tune_kernel(seed=...)`` only reaches the
    pymoo strategies): they draw from Python's ``random`` and NumPy's global RNG, and
    ``bayes_opt``'s Latin hypercube (``scipy.stats.qmc.LatinHypercube``) is created without a seed
    (fresh OS entropy). A run therefore seeds ``random`` and ``numpy.random`` with the run's seed
    and, for its duration, replaces ``LatinHypercube`` in ``kernel_tuner.strategies.bayes_opt`` and
    ``scipy.stats.qmc`` by a wrapper that passes ``rng`` drawn from the (seeded) NumPy global RNG;
    the global RNG states and the originals are restored afterwards. Runs are reproducible per seed.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.jsonable import to_jsonable
from benchmarks.budget import BudgetExhausted, CountedObjective, Trajectory, run_measured
from benchmarks.contenders import register_strategy
from benchmarks.problem import Problem

#: Our strategy name -> (Kernel Tuner strategy, strategy_options besides max_fevals).
KT_STRATEGIES: dict[str, tuple[str, dict[str, Any]]] = {
    "kt_bayes_opt": ("bayes_opt", {}),
    "kt_bayes_opt_multi_advanced": ("bayes_opt", {"method": "multi-advanced"}),
    "kt_bayes_opt_ei": ("bayes_opt", {"method": "ei"}),
    "kt_genetic_algorithm": ("genetic_algorithm", {}),
    "kt_random_sample": ("random_sample", {}),
}
INVALID_MARKER = "InvalidConfig"
MAX_RETRIES = 2  # reruns with doubled max_fevals after a shortfall


def kernel_tuner_available() -> str | None:
    for module, package in (("kernel_tuner", "kernel_tuner"), ("constraint", "python-constraint2 (kernel_tuner dep)")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install kernel_tuner)"
    return None


# ---- the cache file as Kernel Tuner sees it ---------------------------------------------------
@dataclass
class KTSetup:
    """What ``tune_kernel`` needs to replay one cache file, and the conversions to our configs."""

    cache_json: str  # an uncompressed copy (Kernel Tuner reads plain JSON)
    kernel_name: str
    problem_size: Any
    keys: list[str]  # tune_params_keys, Kernel Tuner's order
    tune_params: dict[str, list[Any]]
    known_feasible: frozenset  # tuples in `keys` order, not marked InvalidConfig
    constants: dict[str, Any]
    names: list[str]  # our space's (varying) parameter names

    def to_kt(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Our configuration -> Kernel Tuner's parameter dict (constants filled in)."""
        return {k: (config[k] if k in config else self.constants[k]) for k in self.keys}

    def from_kt(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Kernel Tuner's result/parameter dict -> our configuration (varying parameters only)."""
        return {n: to_jsonable(params[n]) for n in self.names}

    def key(self, params: Mapping[str, Any]) -> tuple:
        return tuple(to_jsonable(params[k]) for k in self.keys)


_SETUPS: dict[str, KTSetup] = {}


def _copy_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"bayestune-kt-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def kt_setup(problem: Problem) -> KTSetup:
    """The Kernel Tuner view of a GPU problem (cached per cache file)."""
    if problem.kind != "gpu" or "file" not in problem.metadata:
        raise RuntimeError("kernel tuner peers only run on GPU cache replays")
    src = Path(problem.metadata["file"])
    cache_key = f"{src}:{src.stat().st_mtime_ns}"
    if cache_key in _SETUPS:
        return _SETUPS[cache_key]
    opener = gzip.open if src.suffix == ".gz" else open
    with opener(src, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    keys = list(data["tune_params_keys"])
    tune_params = {k: list(data["tune_params"][k]) for k in keys}
    known = frozenset(
        tuple(rec[k] for k in keys) for rec in data["cache"].values() if rec.get("time") != INVALID_MARKER
    )
    constants = {k: v[0] for k, v in tune_params.items() if len(v) == 1}
    stem = src.name[: -len(".json.gz")] if src.name.endswith(".json.gz") else src.stem
    dst = _copy_dir() / f"{stem}-{src.stat().st_mtime_ns}.json"
    if not dst.exists():
        tmp = dst.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, dst)
    size = data.get("problem_size")
    setup = KTSetup(
        cache_json=str(dst),
        kernel_name=data["kernel_name"],
        problem_size=tuple(size) if isinstance(size, list) else size,
        keys=keys,
        tune_params=tune_params,
        known_feasible=known,
        constants=constants,
        names=list(problem.space.names),
    )
    _SETUPS[cache_key] = setup
    return setup


# ---- one Kernel Tuner run ------------------------------------------------------------------------
@contextlib.contextmanager
def bo_failure_fix():
    """Make ``bayes_opt`` treat a failed configuration as invalid, as its code intends (see the
    module docstring, "Kernel Tuner 1.5 bug"); restored afterwards."""
    import kernel_tuner.strategies.bayes_opt as kt_bo

    cls = kt_bo.BayesianOptimization
    original = cls.evaluate_objective_function

    def evaluate_objective_function(self: Any, param_config: tuple) -> float:
        value = original(self, param_config)
        return self.invalid_value if value >= sys.float_info.max else value

    cls.evaluate_objective_function = evaluate_objective_function
    try:
        yield
    finally:
        cls.evaluate_objective_function = original


@contextlib.contextmanager
def seeded(seed: int):
    """Seed Kernel Tuner's RNGs (see the module docstring); restore everything afterwards."""
    import kernel_tuner.strategies.bayes_opt as kt_bo
    from scipy.stats import qmc

    py_state, np_state = random.getstate(), np.random.get_state()
    original = qmc.LatinHypercube

    def seeded_lhs(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("rng") is None and kwargs.get("seed") is None:
            kwargs.pop("seed", None)
            kwargs["rng"] = np.random.default_rng(np.random.randint(0, 2**31 - 1))
        return original(*args, **kwargs)

    random.seed(seed)
    np.random.seed(seed)
    qmc.LatinHypercube, kt_bo.LatinHypercube = seeded_lhs, seeded_lhs
    try:
        yield
    finally:
        qmc.LatinHypercube, kt_bo.LatinHypercube = original, original
        random.setstate(py_state)
        np.random.set_state(np_state)


def run_kernel_tuner(
    setup: KTSetup, strategy: str, options: Mapping[str, Any], max_fevals: int, seed: int, fix_failure_cost: bool = True
) -> list[dict[str, Any]]:
    """Kernel Tuner's results list (evaluation order, failures and repeats included)."""
    import kernel_tuner
    from constraint import FunctionConstraint

    known = setup.known_feasible

    def in_known_set(*values: Any) -> bool:
        return values in known

    fix = bo_failure_fix() if fix_failure_cost else contextlib.nullcontext()
    with seeded(seed), fix, warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        results, _env = kernel_tuner.tune_kernel(
            setup.kernel_name,
            "",
            setup.problem_size,
            [],
            dict(setup.tune_params),
            restrictions=[FunctionConstraint(in_known_set)],
            cache=setup.cache_json,
            simulation_mode=True,
            strategy=strategy,
            strategy_options={**options, "max_fevals": int(max_fevals)},
            quiet=True,
            verbose=False,
        )
    return [r for r in results if r]


def count_unique_known(setup: KTSetup, results: Sequence[Mapping[str, Any]]) -> int:
    return len({setup.key(r) for r in results} & setup.known_feasible)


class KernelTunerContender:
    """One Kernel Tuner strategy, replayed in simulation mode and fed through the budget rules."""

    def __init__(
        self, strategy: str, options: Mapping[str, Any] | None = None, *, fix_failure_cost: bool = True
    ) -> None:
        self.strategy = strategy
        self.options = dict(options or {})
        self.fix_failure_cost = fix_failure_cost

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        setup = kt_setup(problem)
        notes: list[str] = []

        def drive(objective: CountedObjective) -> None:
            max_fevals = int(budget)
            limit = len(setup.known_feasible)
            results: list[dict[str, Any]] = []
            for attempt in range(MAX_RETRIES + 1):
                try:
                    results = run_kernel_tuner(
                        setup, self.strategy, self.options, min(max_fevals, limit), seed, self.fix_failure_cost
                    )
                except Exception as exc:  # noqa: BLE001 - recorded, then retried with a larger budget
                    notes.append(f"kernel tuner raised {type(exc).__name__}: {exc} (max_fevals {max_fevals})")
                    results = []
                got = count_unique_known(setup, results)
                if got >= budget or max_fevals >= limit:
                    break
                if attempt < MAX_RETRIES:
                    notes.append(
                        f"kernel tuner stopped after {got} unique evaluations with max_fevals "
                        f"{max_fevals}; rerun with {2 * max_fevals}"
                    )
                max_fevals *= 2
            try:
                for r in results:
                    objective(setup.from_kt(r))
            except BudgetExhausted:
                pass
            finally:
                _spread_ask_time(objective)
            if objective.n_counted < budget:
                notes.append(
                    f"shortfall: kernel tuner evaluated {objective.n_counted} unique configurations "
                    f"of the budget {budget}"
                )

        trajectory = run_measured(problem, budget, drive)
        trajectory.notes = "; ".join(notes)
        return trajectory


def _spread_ask_time(objective: CountedObjective) -> None:
    """Kernel Tuner ran before the feeding: spread its time evenly over the counted evaluations."""
    evs = objective.trajectory.evaluations
    if evs:
        share = sum(e.ask_s for e in evs) / len(evs)
        for e in evs:
            e.ask_s = share


def _factory(name: str):
    strategy, options = KT_STRATEGIES[name]

    def factory(problem: Problem, seed: int) -> KernelTunerContender:
        if problem.kind != "gpu" or "file" not in problem.metadata:
            raise RuntimeError("kernel tuner peers only run on GPU cache replays")
        return KernelTunerContender(strategy, options)

    return factory


for _name, (_strategy, _options) in KT_STRATEGIES.items():
    register_strategy(
        _name,
        _factory(_name),
        family="peer",
        available=kernel_tuner_available,
        packages=("kernel_tuner",),
        description=f"Kernel Tuner {_strategy} {_options or '(defaults)'} in simulation mode on the cache file",
    )
