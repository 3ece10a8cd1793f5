"""SMAC3 as single-objective peers: ``smac_bb`` (``BlackBoxFacade``: Gaussian process, EI) and
``smac_hpo`` (``HyperparameterOptimizationFacade``: random forest, log-scaled EI), driven through
SMAC's ask/tell interface (``smac.ask()`` / ``smac.tell(info, TrialValue(...))``).

Settings: ``Scenario(configspace, deterministic=True, n_trials=N_TRIALS, seed=seed)`` in a
temporary output directory; every facade component is SMAC's default except the initial
design's cap. SMAC stops asking once ``n_trials`` trials are told, and rejected or repeated
proposals are SMAC trials but not our evaluations, so ``n_trials`` is large (the run ends when
the budget of counted evaluations is used, :class:`BudgetExhausted`). SMAC's default initial
design (Sobol; 8 configurations per hyperparameter for the BB facade, 10 for the HPO facade)
is capped at ``max_ratio=0.25`` of ``n_trials``; the cap is scaled so that the design has what a
user who sets ``n_trials = budget`` would get: ``min(k * n_hyperparameters, 0.25 * budget)``
configurations (25 at budget 100) -- not 80-100, which would be the whole budget on the GPU spaces.

Parameter mapping (a ConfigSpace ``ConfigurationSpace`` built from the bayestune Space):

* Real / Integer -> ``UniformFloatHyperparameter`` / ``UniformIntegerHyperparameter`` (same
  bounds, ``log`` where set).
* Ordinal -> ``OrdinalHyperparameter`` over the value list (SMAC's native ordered type).
* Categorical -> ``CategoricalHyperparameter`` over the values if they are all strings, else
  over their indices (ConfigSpace compares choices by value; indices keep bools/numbers exact).
* Permutation -> ConfigSpace has no permutation type: a Lehmer code of ``n - 1``
  ``UniformIntegerHyperparameter`` ``<name>__lehmer<k>`` in ``0..n-1-k`` (as the Optuna adapter),
  so every proposal is a valid permutation.

Known constraints: ConfigSpace's forbidden clauses cannot express arbitrary expressions (e.g.
``split_i * split_j <= 4096``), so SMAC is not told them. A proposal outside the known-feasible
set is rejected free of charge by :class:`CountedObjective` and told to SMAC as
``StatusType.CRASHED``, as is a hidden failure (an evaluated configuration that failed).
SMAC's default ``crash_cost`` is ``inf``, and crashed trials enter the surrogate's training data
(``RunHistoryEncoder`` considers SUCCESS, CRASHED and MEMORYOUT), where ``inf`` would break the
cost scaling; so a crash is told with the worst successful cost seen so far (crashes before the
first success are held back and told with the first success's cost). A repeated proposal is free
and told the recorded answer. Guards: ``MAX_PROPOSALS`` proposals, SMAC's
``ConfigurationSpaceExhaustedException``, and a wall-time cap per run (``MAX_SECONDS``: the
rejected proposals of tightly constrained spaces grow SMAC's run history, and the GP is refitted
after every trial); a capped run has fewer evaluations than the budget and says so in
``Trajectory.notes``.
"""

from __future__ import annotations

import math
import tempfile
from typing import Any

from bayestune.space import Categorical, Integer, Ordinal, Real
from benchmarks.budget import CountedObjective, ProposalGuard, Trajectory, run_measured
from benchmarks.contenders import register_strategy
from benchmarks.peers import missing
from benchmarks.peers._lehmer import lehmer_to_positions, positions_to_lehmer
from benchmarks.problem import Problem

N_TRIALS = 1_000_000
MAX_PROPOSALS = 200_000
MAX_SECONDS = 900.0
DESIGN_RATIO = 0.25  # SMAC's default max_ratio, applied to the budget (see the module doc)


# ---- parameter mapping ---------------------------------------------------------------------
def _categorical_choices(p: Categorical) -> list[Any]:
    return list(p.values) if all(isinstance(v, str) for v in p.values) else list(range(len(p.values)))


def build_configspace(space: Any, seed: int | None = None) -> Any:
    """A ConfigSpace ``ConfigurationSpace`` for a bayestune Space (see the module doc)."""
    from ConfigSpace import (
        CategoricalHyperparameter,
        ConfigurationSpace,
        OrdinalHyperparameter,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )

    hps: list[Any] = []
    for p in space.parameters:
        if isinstance(p, Real):
            hps.append(UniformFloatHyperparameter(p.name, lower=p.low, upper=p.high, log=p.log))
        elif isinstance(p, Integer):
            hps.append(UniformIntegerHyperparameter(p.name, lower=p.low, upper=p.high, log=p.log))
        elif isinstance(p, Ordinal):
            hps.append(OrdinalHyperparameter(p.name, sequence=list(p.values)))
        elif isinstance(p, Categorical):
            hps.append(CategoricalHyperparameter(p.name, choices=_categorical_choices(p)))
        elif p.kind == "permutation":
            for k in range(p.n - 1):
                hps.append(UniformIntegerHyperparameter(f"{p.name}__lehmer{k}", lower=0, upper=p.n - 1 - k))
        else:
            raise TypeError(f"no ConfigSpace mapping for parameter {p!r}")
    cs = ConfigurationSpace(seed=seed)
    cs.add(hps)
    return cs


def from_configspace(values: Any, space: Any) -> dict[str, Any]:
    """bayestune configuration of a ConfigSpace ``Configuration`` (or its dict)."""
    values = dict(values)
    config: dict[str, Any] = {}
    for p in space.parameters:
        if isinstance(p, Real):
            config[p.name] = float(values[p.name])
        elif isinstance(p, Integer):
            config[p.name] = int(values[p.name])
        elif isinstance(p, Ordinal):
            config[p.name] = p.validate(values[p.name])
        elif isinstance(p, Categorical):
            v = values[p.name]
            config[p.name] = v if all(isinstance(x, str) for x in p.values) else p.values[int(v)]
        else:
            code = [int(values[f"{p.name}__lehmer{k}"]) for k in range(p.n - 1)]
            config[p.name] = lehmer_to_positions(code, p.n)
    return config


def to_configspace(config: dict[str, Any], space: Any) -> dict[str, Any]:
    """Inverse of :func:`from_configspace` (a dict for ``Configuration(cs, values=...)``)."""
    out: dict[str, Any] = {}
    for p in space.parameters:
        v = p.validate(config[p.name])
        if isinstance(p, Categorical) and not all(isinstance(x, str) for x in p.values):
            out[p.name] = p.values.index(v)
        elif p.kind == "permutation":
            for k, d in enumerate(positions_to_lehmer(v)):
                out[f"{p.name}__lehmer{k}"] = d
        else:
            out[p.name] = v
    return out


# ---- the contender ----------------------------------------------------------------------------
def _available() -> str | None:
    return missing(("ConfigSpace", "smac"), "pip install smac")


class SMACContender:
    def __init__(self, facade: str, max_proposals: int = MAX_PROPOSALS, max_seconds: float = MAX_SECONDS) -> None:
        if facade not in ("bb", "hpo"):
            raise ValueError(f"facade must be 'bb' or 'hpo', but got {facade!r}")
        self.facade = facade
        self.max_proposals = max_proposals
        self.max_seconds = max_seconds

    def _make(self, problem: Problem, budget: int, seed: int, outdir: str) -> Any:
        import logging

        from smac import BlackBoxFacade, HyperparameterOptimizationFacade, Scenario

        Facade = BlackBoxFacade if self.facade == "bb" else HyperparameterOptimizationFacade
        cs = build_configspace(problem.space, seed=seed)
        scenario = Scenario(
            cs,
            deterministic=True,
            n_trials=N_TRIALS,
            seed=seed,
            output_directory=outdir,
            name=f"{problem.name}_{self.facade}_{seed}",
        )
        design = Facade.get_initial_design(scenario, max_ratio=DESIGN_RATIO * budget / N_TRIALS)
        return Facade(scenario, None, initial_design=design, overwrite=True, logging_level=logging.ERROR)

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        from smac.runhistory.dataclasses import TrialValue
        from smac.runhistory.enumerations import StatusType

        try:
            from smac.main.exceptions import ConfigurationSpaceExhaustedException as Exhausted
        except ImportError:  # pragma: no cover - other SMAC versions
            Exhausted = RuntimeError  # type: ignore[misc,assignment]
        name = problem.objective
        guard = ProposalGuard(self.max_proposals, self.max_seconds)

        def drive(objective: CountedObjective) -> None:
            with tempfile.TemporaryDirectory(prefix="smac_") as outdir:
                smac = self._make(problem, budget, seed, outdir)
                worst: float | None = None
                held: list[Any] = []  # crashed trials before the first success
                while not objective.exhausted and guard.allow():
                    try:
                        info = smac.ask()
                    except Exhausted as exc:
                        guard.reason = f"SMAC: configuration space exhausted ({exc})"
                        return
                    config = from_configspace(info.config, problem.space)
                    res = objective(config)  # BudgetExhausted ends the run (caught by run_measured)
                    value = res.values.get(name) if res.status.value == "ok" else None
                    if value is not None and math.isfinite(value):
                        worst = value if worst is None else max(worst, value)
                        smac.tell(info, TrialValue(cost=float(value), status=StatusType.SUCCESS))
                        for h in held:
                            smac.tell(h, TrialValue(cost=worst, status=StatusType.CRASHED))
                        held.clear()
                    elif worst is None:
                        held.append(info)
                    else:
                        smac.tell(info, TrialValue(cost=worst, status=StatusType.CRASHED))

        return guard.annotate(run_measured(problem, budget, drive), budget)


_CONFIG = (
    "SMAC3 {facade} via ask/tell (seed, deterministic, SMAC defaults; Sobol initial design "
    "min({k} x n_hyperparameters, 0.25 x budget)); known constraints not expressible in "
    "ConfigSpace: rejected proposals and hidden failures told CRASHED with the worst cost "
    "seen; ordinals -> OrdinalHyperparameter, permutations -> Lehmer-code integers"
)

register_strategy(
    "smac_bb",
    lambda problem, seed: SMACContender("bb"),
    description=_CONFIG.format(facade="BlackBoxFacade (GP)", k=8),
    family="peer",
    available=_available,
    packages=("smac",),
)
register_strategy(
    "smac_hpo",
    lambda problem, seed: SMACContender("hpo"),
    description=_CONFIG.format(facade="HyperparameterOptimizationFacade (RF)", k=10),
    family="peer",
    available=_available,
    packages=("smac",),
)
