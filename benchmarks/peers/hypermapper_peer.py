"""HyperMapper 2.2 as a peer (``hypermapper``) for one objective or several.

Install: HyperMapper 2.2 pins old dependencies, so it lives in a virtual environment that sees the
global packages: ``python -m venv --system-site-packages V && V/bin/pip install hypermapper``;
run the benchmark with ``V/bin/python -m benchmarks run --strategies hypermapper ...``. Without
the package the strategy reports itself unavailable and is skipped.

The strategy is HyperMapper's default: Bayesian optimisation with random-forest models
(``"optimization_method": "bayesian_optimization"``, its default ``models``), here with a
random-sampling design of 10 configurations (like bayestune's design size) and its feasibility
classifier (``feasible_output``) enabled, one suggestion per iteration, one CPU (its default
forks a pool of workers for every iteration: slower on this machine, not better). With several
objectives it is HyperMapper's multi-objective BO (random forests, random scalarisations).

Known constraints: HyperMapper 2.2's scenario has no constraint expressions (its schema knows
only parameter types, values, defaults and priors), so a proposal outside the known-feasible
set is rejected free of charge by :class:`CountedObjective` and reported to HyperMapper as
infeasible (``Valid=False``, with the worst objective values seen so far as placeholders); so are
recorded failures (counted). Its feasibility classifier learns both. A run stops (noted in the
trajectory) after ``MAX_FREE_PROPOSALS_PER_EVALUATION`` free proposals per budget unit.

Parameter mapping (:func:`hypermapper_parameter`, :func:`to_hypermapper`,
:func:`from_hypermapper`): ``Real`` -> ``real`` (log-scaled ones on ``[ln low, ln high]``, back
through ``exp``), ``Integer`` -> ``integer`` (log-scaled ones -> ``real`` on
``[ln low, ln high]``, back through ``round(exp(.))``), ``Ordinal`` -> ``ordinal`` (its numeric
values; HyperMapper's forests are invariant to a monotone rescaling, so ``log`` is not needed),
``Categorical`` -> ``categorical`` on ``str`` of the values, ``Permutation`` -> ``categorical``
with every ordering as a category ``"2-0-3-1"`` (HyperMapper 2.2 has no permutations).

scikit-learn compatibility: HyperMapper 2.2.13 passes ``sparse=`` to ``OneHotEncoder`` (renamed
``sparse_output`` in scikit-learn 1.2, removed in 1.4); :func:`install_sklearn_shim` maps it,
nothing else is changed.

Seeding: HyperMapper draws from Python's ``random`` and NumPy's global RNG (its forests get no
``random_state``); both are seeded with the run's seed and restored afterwards.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
import math
import os
import random
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from bayestune.space import Categorical, Integer, Ordinal, Real
from bayestune.trial import Result, TrialStatus
from benchmarks.budget import BudgetExhausted, CountedObjective, Trajectory, run_measured, worse_values
from benchmarks.contenders import register_strategy
from benchmarks.problem import Problem

DESIGN_SIZE = 10
#: Stop a run (noted in the trajectory) after this many proposals per budget unit that were free
#: (rejected or repeated): a guard against a model stuck proposing outside the known set.
MAX_FREE_PROPOSALS_PER_EVALUATION = 20


def hypermapper_available() -> str | None:
    if importlib.util.find_spec("hypermapper") is None:
        return (
            "hypermapper is not installed (it needs its own venv: python -m venv --system-site-packages V "
            "&& V/bin/pip install hypermapper; run the benchmark with V/bin/python)"
        )
    return None


# ---- parameter mapping ----------------------------------------------------------------------------
def _is_permutation(p: Any) -> bool:
    return getattr(p, "kind", None) == "permutation"


def hypermapper_parameter(p: Any) -> dict[str, Any]:
    """A bayestune parameter as a HyperMapper 2.2 ``input_parameters`` entry."""
    if isinstance(p, Real):
        if p.log:
            return {"parameter_type": "real", "values": [math.log(p.low), math.log(p.high)]}
        return {"parameter_type": "real", "values": [p.low, p.high]}
    if isinstance(p, Integer):
        if p.log:
            return {"parameter_type": "real", "values": [math.log(p.low), math.log(p.high)]}
        return {"parameter_type": "integer", "values": [p.low, p.high]}
    if isinstance(p, Ordinal):
        return {"parameter_type": "ordinal", "values": list(p.values)}
    if isinstance(p, Categorical):
        return {"parameter_type": "categorical", "values": [str(v) for v in p.values]}
    if _is_permutation(p):
        return {
            "parameter_type": "categorical",
            "values": ["-".join(map(str, q)) for q in itertools.permutations(range(p.n))],
        }
    raise TypeError(f"no HyperMapper mapping for parameter {p!r}")


def to_hypermapper(p: Any, value: Any) -> Any:
    """One of our values as HyperMapper's value of the mapped parameter."""
    if isinstance(p, (Real, Integer)):
        return math.log(value) if p.log else value
    if isinstance(p, Ordinal):
        return value
    if isinstance(p, Categorical):
        return str(value)
    if _is_permutation(p):
        return "-".join(str(int(v)) for v in value)
    raise TypeError(f"no HyperMapper mapping for parameter {p!r}")


def from_hypermapper(p: Any, value: Any) -> Any:
    """HyperMapper's value of a mapped parameter as our value."""
    if isinstance(p, Integer):
        v = round(math.exp(float(value))) if p.log else round(float(value))
        return min(max(v, int(p.low)), int(p.high))
    if isinstance(p, Real):
        v = math.exp(float(value)) if p.log else float(value)
        return min(max(v, float(p.low)), float(p.high))
    if isinstance(p, Ordinal):
        return p.validate(float(value))
    if isinstance(p, Categorical):
        return next(v for v in p.values if str(v) == str(value))
    if _is_permutation(p):
        return tuple(int(v) for v in str(value).split("-"))
    return value


def install_sklearn_shim() -> None:
    """Map HyperMapper 2.2's ``OneHotEncoder(sparse=...)`` to ``sparse_output`` (idempotent)."""
    import hypermapper.models as hm_models
    from sklearn import preprocessing

    if getattr(hm_models.OneHotEncoder, "_bayestune_shim", False):
        return
    one_hot = preprocessing.OneHotEncoder

    def compat_one_hot(categories: Any = "auto", sparse: bool = False, **kwargs: Any) -> Any:
        return one_hot(categories=categories, sparse_output=sparse, **kwargs)

    compat_one_hot._bayestune_shim = True  # type: ignore[attr-defined]
    hm_models.OneHotEncoder = compat_one_hot


@contextlib.contextmanager
def seeded(seed: int):
    py_state, np_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed)
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


# ---- the contender ----------------------------------------------------------------------------------
class _TooManyFreeProposals(Exception):
    pass


def scenario(
    name: str,
    parameters: Mapping[str, Any],
    objectives: list[str],
    budget: int,
    workdir: str,
    design_size: int = DESIGN_SIZE,
) -> dict[str, Any]:
    """HyperMapper's scenario (see the module docstring)."""
    return {
        "application_name": name,
        "optimization_objectives": objectives,
        "optimization_iterations": 100 * int(budget),  # we stop it (BudgetExhausted), not HyperMapper
        "number_of_cpus": 1,
        "optimization_method": "bayesian_optimization",
        "run_directory": workdir,
        "log_file": os.path.join(workdir, "hypermapper.log"),
        "output_data_file": os.path.join(workdir, "samples.csv"),
        "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": int(design_size)},
        "feasible_output": {
            "enable_feasible_predictor": True,
            "name": "Valid",
            "true_value": "True",
            "false_value": "False",
        },
        "input_parameters": {n: hypermapper_parameter(p) for n, p in parameters.items()},
    }


class _Answers:
    """What HyperMapper is told for each of our results (see the module docstring)."""

    def __init__(self, problem: Problem) -> None:
        self.objectives = problem.objectives
        self.names = problem.objective_names
        self.worst: list[float] | None = None

    def __call__(self, res: Result) -> dict[str, Any]:
        if len(self.names) == 1:
            name = self.names[0]
            value = res.values.get(name) if res.values else None
            if res.status is TrialStatus.OK and value is not None and math.isfinite(value):
                self.worst = [value if self.worst is None else max(self.worst[0], value)]
                return {name: float(value), "Valid": True}
            return {name: self.worst[0] if self.worst is not None else 0.0, "Valid": False}
        ok = res.status is TrialStatus.OK
        if res.values and all(n in res.values for n in self.names):
            values = [float(res.values[n]) for n in self.names]
            if ok:
                self.worst = worse_values(self.worst, values, self.objectives)
            return {**dict(zip(self.names, values)), "Valid": ok}
        return {**dict(zip(self.names, self.worst or [0.0] * len(self.names))), "Valid": False}


class HyperMapperContender:
    """HyperMapper 2.2's own loop (``hypermapper.optimizer.optimize``) on a CountedObjective."""

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        notes: list[str] = []

        def drive(objective: CountedObjective) -> None:
            from hypermapper import optimizer as hm_optimizer

            install_sklearn_shim()
            params = {p.name: p for p in problem.space.parameters}
            workdir = tempfile.mkdtemp(prefix="hypermapper-")
            path = os.path.join(workdir, "scenario.json")
            with open(path, "w") as fh:
                json.dump(scenario(problem.name, params, problem.objective_names, budget, workdir), fh)
            answer = _Answers(problem)
            max_free = MAX_FREE_PROPOSALS_PER_EVALUATION * budget

            def black_box(x: Mapping[str, Any]) -> dict[str, Any]:
                config = {n: from_hypermapper(p, x[n]) for n, p in params.items()}
                res = objective(config)
                if objective.trajectory.rejected + objective.trajectory.repeats > max_free:
                    raise _TooManyFreeProposals()
                return answer(res)

            try:
                with seeded(seed), contextlib.redirect_stdout(io.StringIO()):
                    hm_optimizer.optimize(path, black_box)
            except _TooManyFreeProposals:
                notes.append(f"stopped after {max_free} free (rejected or repeated) proposals")
            except BudgetExhausted:
                pass
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            if objective.n_counted < budget and not notes:
                notes.append(f"hypermapper stopped after {objective.n_counted} of {budget} evaluations")

        trajectory = run_measured(problem, budget, drive)
        trajectory.notes = "; ".join(notes)
        return trajectory


register_strategy(
    "hypermapper",
    lambda problem, seed: HyperMapperContender(),
    family="peer",
    available=hypermapper_available,
    multi_objective=True,
    packages=("hypermapper",),
    description="HyperMapper 2.2 Bayesian optimisation (random forests, feasibility classifier), 10 random samples",
)
