"""Optuna as a peer: ``optuna_tpe`` (TPE, single- and multi-objective) and ``optuna_nsga2``
(NSGA-II, multi-objective).

Settings: Optuna's ``TPESampler(seed=seed, n_startup_trials=10)`` (10 = bayestune's initial
design size; also Optuna's default) with everything else at Optuna's defaults (independent
univariate TPE, 24 EI candidates, default gamma/weights). Note: ``n_startup_trials`` counts
Optuna *trials*, and rejected proposals are trials, so on a constrained space the random
startup can be used up after one or two real evaluations; TPE may then lock onto the first
feasible point (taco_like seed 0: best/optimum 18 at 100 evaluations, uniform random 1.15).
``OptunaTPEContender(startup="evaluations")`` is an experimental variant (random startup until 10
counted evaluations or 100 proposals, then ``TPESampler(n_startup_trials=0)``): it fixes
taco_like (seeds 0-2: 1.02/1.12/1.15 vs 18.3/1.12/3.09) but stalls on sparse_chain (~1 in 5,000
uniform proposals is feasible; the run did not finish in minutes), so it is not registered.

Multi-objective settings (:class:`OptunaMultiObjectiveContender`): ``TPESampler(seed=seed,
n_startup_trials=10)`` or ``NSGAIISampler(seed=seed, population_size=10)`` (10 to suit budgets of
30-60), one study direction per objective, both told the known constraints through
``constraints_func`` (a rejected proposal gets violation 1.0 and, once a feasible one exists,
the worst value seen per objective as placeholders; before that it is told as failed), hidden
failures told as ``TrialState.FAIL``, permutations in the ``"positions"`` mapping (below) so
the published results reproduce. Only the proposal cap guards it: live problems take longer
than the time cap.

Parameter mapping (:func:`optuna_suggest`):

* Real / Integer -> ``suggest_float`` / ``suggest_int`` with the same bounds and ``log`` flag.
* Ordinal (a sorted list of numbers) -> ``suggest_int`` over the *index* into the value list
  (``<name>__index``). Optuna has no ordinal type; the index keeps the order for TPE's
  Parzen estimators (``suggest_categorical`` would throw it away). For power-of-two lists the
  index is the log2 scale, which is what a tuner's user would pick.
* Categorical -> ``suggest_categorical`` over the values.
* Permutation -> Optuna has no permutation type. Single-objective (``permutation="lehmer"``):
  a Lehmer code, ``n - 1`` integers ``<name>__lehmer<k>`` in ``0..n-1-k`` (digit k picks which
  of the remaining elements takes position k), so every proposal is a valid permutation.
  The multi-objective contender keeps its original ``permutation="positions"`` mapping (one
  categorical position per element; proposals that are not permutations get rejected free of
  charge) so its published results reproduce.

Known constraints reach Optuna as trial constraints (constrained TPE: ``Trial.set_constraint``
on Optuna >= 5, ``constraints_func`` before): a proposal
outside the known-feasible set is rejected by :class:`CountedObjective` free of charge and
told to Optuna as a completed trial with violation 1.0 (feasible trials get 0.0). Its
objective value is a placeholder (the worst value seen so far, 0.0 before any success): c-TPE
ranks infeasible trials after every feasible one by violation, so the placeholder carries no
information. A hidden failure (the configuration was evaluated and failed) is told as
``TrialState.FAIL``, Optuna's native failed trial (TPE leaves failed trials out of its model).
A repeated proposal is free and is told the recorded answer again.

Guards: after ``MAX_PROPOSALS`` proposals (rejected and repeated ones included) or
``MAX_SECONDS`` of wall time the run stops with fewer evaluations than the budget, and
``Trajectory.notes`` says so. (sparse_chain: ~1 in 5,000 uniform proposals is feasible; c-TPE
can keep proposing infeasible configurations, and every ask scans all trials so far.)
"""

from __future__ import annotations

import math
from typing import Any

from bayestune.space import Categorical, Integer, Ordinal, Real
from bayestune.trial import TrialStatus
from benchmarks.budget import CountedObjective, ProposalGuard, Trajectory, run_measured, worse_values
from benchmarks.contenders import register_strategy
from benchmarks.peers import missing
from benchmarks.peers._lehmer import lehmer_to_positions, positions_to_lehmer
from benchmarks.problem import Problem

N_STARTUP = 10
MAX_PROPOSALS = 200_000
MAX_SECONDS = 300.0  # wall-time cap per run (see the module doc)
STARTUP_MAX_PROPOSALS = 100  # random startup ends after this many proposals even if short of 10
MULTI_OBJECTIVE_POPULATION = 10  # NSGA-II's population, and TPE's startup, for several objectives


# ---- parameter mapping ---------------------------------------------------------------------
def optuna_suggest(trial: Any, p: Any, permutation: str = "positions") -> Any:
    """Suggest a value of bayestune parameter ``p`` through an Optuna trial (see the module doc)."""
    if isinstance(p, Real):
        return trial.suggest_float(p.name, p.low, p.high, log=p.log)
    if isinstance(p, Integer):
        return trial.suggest_int(p.name, p.low, p.high, log=p.log)
    if isinstance(p, Ordinal):  # ordered: an integer index keeps the order for TPE/NSGA-II
        return p.values[trial.suggest_int(p.name + "__index", 0, len(p.values) - 1)]
    if isinstance(p, Categorical):
        return trial.suggest_categorical(p.name, p.values)
    if p.kind == "permutation":
        if permutation == "lehmer":
            code = [trial.suggest_int(f"{p.name}__lehmer{k}", 0, p.n - 1 - k) for k in range(p.n - 1)]
            return lehmer_to_positions(code, p.n)
        return tuple(trial.suggest_categorical(f"{p.name}__{i}", list(range(p.n))) for i in range(p.n))
    raise TypeError(f"no Optuna mapping for parameter {p!r}")


def optuna_params(config: dict[str, Any], space: Any, permutation: str = "lehmer") -> dict[str, Any]:
    """The Optuna parameters that :func:`optuna_suggest` would turn into ``config`` (for
    tests of the mapping and for enqueueing known configurations)."""
    out: dict[str, Any] = {}
    for p in space.parameters:
        v = p.validate(config[p.name])
        if isinstance(p, Ordinal):
            out[p.name + "__index"] = p.values.index(v)
        elif p.kind == "permutation":
            if permutation == "lehmer":
                for k, d in enumerate(positions_to_lehmer(v)):
                    out[f"{p.name}__lehmer{k}"] = d
            else:
                for i, pos in enumerate(v):
                    out[f"{p.name}__{i}"] = pos
        else:
            out[p.name] = v
    return out


# ---- the contender ----------------------------------------------------------------------------
def _available() -> str | None:
    return missing(("optuna",), "pip install optuna")


class OptunaTPEContender:
    """``startup="trials"`` (the registered default): a plain ``TPESampler(n_startup_trials=10)``.
    ``startup="evaluations"`` (experimental, see the module doc): the first ``N_STARTUP`` *counted
    evaluations* come from Optuna's ``RandomSampler`` (what TPE's own startup phase uses), then
    the study switches to ``TPESampler(n_startup_trials=0)`` over the whole history.
    """

    def __init__(
        self, max_proposals: int = MAX_PROPOSALS, startup: str = "trials", max_seconds: float = MAX_SECONDS
    ) -> None:
        if startup not in ("evaluations", "trials"):
            raise ValueError(f"startup must be 'evaluations' or 'trials', but got {startup!r}")
        self.max_proposals = max_proposals
        self.startup = startup
        self.max_seconds = max_seconds

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        import optuna
        from optuna.trial import TrialState

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        # Optuna >= 5 reads constraints set on the trial; older versions need constraints_func.
        native_constraints = hasattr(optuna.trial.Trial, "set_constraint")

        def violation(trial: Any) -> list[float]:
            return [trial.user_attrs.get("violation", 0.0)]

        def tpe(n_startup: int) -> Any:
            kw: dict[str, Any] = {} if native_constraints else {"constraints_func": violation}
            return optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup, **kw)

        def mark(trial: Any, v: float) -> None:
            if native_constraints:
                trial.set_constraint("known_constraints", v)
            else:
                trial.set_user_attr("violation", v)

        name = problem.objective
        params = problem.space.parameters
        guard = ProposalGuard(self.max_proposals, self.max_seconds)

        def drive(objective: CountedObjective) -> None:
            if self.startup == "evaluations":
                sampler = optuna.samplers.RandomSampler(seed=seed)
            else:
                sampler = tpe(N_STARTUP)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            in_startup = self.startup == "evaluations"
            worst: float | None = None
            while not objective.exhausted:
                if in_startup and (objective.n_counted >= N_STARTUP or guard.proposals >= STARTUP_MAX_PROPOSALS):
                    study.sampler = tpe(0)
                    in_startup = False
                if not guard.allow():
                    return
                trial = study.ask()
                config = {p.name: optuna_suggest(trial, p, permutation="lehmer") for p in params}
                res = objective(config)  # BudgetExhausted ends the run (caught by run_measured)
                value = res.values.get(name) if res.status.value == "ok" else None
                if value is not None and math.isfinite(value):
                    worst = value if worst is None else max(worst, value)
                    mark(trial, 0.0)
                    study.tell(trial, float(value))
                elif res.kind == "invalid":
                    mark(trial, 1.0)
                    study.tell(trial, worst if worst is not None else 0.0)
                else:
                    study.tell(trial, state=TrialState.FAIL)

        return guard.annotate(run_measured(problem, budget, drive), budget)


class OptunaMultiObjectiveContender:
    """A multi-objective study with ``sampler`` ``"tpe"`` or ``"nsga2"`` (see the module doc)."""

    def __init__(self, sampler: str, max_proposals: int = MAX_PROPOSALS) -> None:
        if sampler not in ("tpe", "nsga2"):
            raise ValueError(f"sampler must be 'tpe' or 'nsga2', but got {sampler!r}")
        self.sampler = sampler
        self.max_proposals = max_proposals

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        import optuna
        from optuna.trial import TrialState

        optuna.logging.set_verbosity(optuna.logging.WARNING)

        def violation(trial: Any) -> list[float]:
            return [trial.user_attrs.get("violation", 0.0)]

        if self.sampler == "tpe":
            sampler = optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=MULTI_OBJECTIVE_POPULATION, constraints_func=violation
            )
        else:
            sampler = optuna.samplers.NSGAIISampler(
                seed=seed, population_size=MULTI_OBJECTIVE_POPULATION, constraints_func=violation
            )
        study = optuna.create_study(directions=[o.direction for o in problem.objectives], sampler=sampler)
        names = problem.objective_names
        guard = ProposalGuard(self.max_proposals)

        def drive(objective: CountedObjective) -> None:
            worst: list[float] | None = None
            while not objective.exhausted and guard.allow():
                trial = study.ask()
                config = {p.name: optuna_suggest(trial, p) for p in problem.space.parameters}
                res = objective(config)
                if res.status is TrialStatus.OK:
                    values = [res.values[n] for n in names]
                    worst = worse_values(worst, values, problem.objectives)
                    trial.set_user_attr("violation", 0.0)
                    study.tell(trial, values)
                elif res.kind == "invalid" and worst is not None:
                    trial.set_user_attr("violation", 1.0)
                    study.tell(trial, worst)
                else:
                    study.tell(trial, state=TrialState.FAIL)

        return guard.annotate(run_measured(problem, budget, drive), budget)


def _tpe(problem: Problem, seed: int) -> OptunaTPEContender | OptunaMultiObjectiveContender:
    return OptunaMultiObjectiveContender("tpe") if problem.multi_objective else OptunaTPEContender()


register_strategy(
    "optuna_tpe",
    _tpe,
    multi_objective=True,
    packages=("optuna",),
    description=(
        "Optuna TPESampler (seed, n_startup_trials=10 = bayestune's design size, Optuna "
        "defaults otherwise; startup counts trials incl. rejected proposals); known constraints "
        "as trial constraints (c-TPE), rejected proposals told violation 1, hidden failures "
        "told as TrialState.FAIL; ordinals as integer indices, permutations as Lehmer codes; "
        "several objectives: see OptunaMultiObjectiveContender"
    ),
    family="peer",
    available=_available,
)
register_strategy(
    "optuna_nsga2",
    lambda problem, seed: OptunaMultiObjectiveContender("nsga2"),
    single_objective=False,
    multi_objective=True,
    packages=("optuna",),
    family="peer",
    available=_available,
    description="Optuna NSGAIISampler (seed, population 10), known constraints through constraints_func",
)
