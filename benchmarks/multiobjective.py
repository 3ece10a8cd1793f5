"""Multi-objective benchmark: hypervolume against evaluations (issue 6).

Problems (two objectives, both minimised):

``chakong_haimes``
    ``f1 = 2 + (x-2)^2 + (y-1)^2``, ``f2 = 9x - (y-1)^2`` over ``x, y in [-20, 20]`` with the
    known constraints ``x^2 + y^2 <= 225`` and ``x - 3y + 10 <= 0`` (about 30 % of the box).
    Known Pareto set: ``x = -2.5``, ``2.5 <= y <= sqrt(225 - 6.25)``, i.e. the segment
    ``f2 = -0.25 - f1`` for ``f1`` in ``[24.5, 212.45]``.
``zdt_mixed``
    ZDT1 over mixed variables: ``x1`` real in [0, 1] is ``f1``; the distance function
    ``g = 1 + 9 * mean(x2/10, x3, c(x4), x5)`` reads an integer ``x2`` in 0..10, an ordinal
    ``x3`` in {0, .1, .2, .5, 1}, a categorical ``x4`` in {a, b, c} (c(a)=0, c(b)=.5, c(c)=1)
    and a real ``x5`` in [0, 1]; ``f2 = g (1 - sqrt(f1 / g))``. Hidden constraint: ``x4 = c``
    with ``x2 >= 5`` crashes (the true front, at g = 1, is unaffected). Known front:
    ``f2 = 1 - sqrt(f1)``.
``halide_blur_mo``
    The live Halide 3x3 blur schedule of ``benchmarks/halide_problems.py`` with two measured
    objectives: run time (ms) and JIT compile time (s). No known front: the reference front is
    the non-dominated set of every feasible evaluation of every run in the results file
    (HyperMapper 2.0's procedure). Hypervolume is computed on log10 of both objectives, scaled
    so that the reference front's ideal is 0 and the 90th percentile of all feasible
    evaluations is 1, which is the reference point (the union front alone spans too narrow a
    box: 1.1-1.6 ms and 73-107 ms of compile time, so almost no single run would count).
    Measurements are cached per configuration, so all strategies and seeds see the same value
    for the same schedule.

Metric: the hypervolume of the feasible evaluations after k counted evaluations, divided by
the hypervolume of the known (or reference) front, with the reference point at the front's
nadir plus 10 % of its range (known fronts) or as described for Halide. Budget rules as in ``benchmarks/strategies.py``: every
evaluation of a known-feasible configuration counts once (failures too), repeated proposals
are free, and peers that cannot express known constraints (Optuna) have proposals outside them
rejected without charge (told that they failed).

Strategies: bayestune's ``pareto_rf`` and ``parego``, ``random`` (uniform over the feasible
set), Optuna's multi-objective ``TPESampler`` (``optuna_tpe``) and ``NSGAIISampler``
(``optuna_nsga2``, population 10 to suit these budgets), both told the known constraints
through ``constraints_func``, and HyperMapper 2.2 (``hypermapper``: its default multi-objective
BO with random forests; it conflicts with this environment's scikit-learn, so run it from a
virtual environment, ``python -m venv --system-site-packages V && V/bin/pip install hypermapper``,
as ``V/bin/python -m benchmarks.multiobjective run --strategies hypermapper ...``). Every run
starts with 10 random configurations (bayestune: default configuration + 9; Optuna:
``n_startup_trials=10``; HyperMapper: 10 random samples).

Usage (from the repository root)::

    python -m benchmarks.multiobjective run --problems chakong_haimes,zdt_mixed --seeds 10 --budget 60
    python -m benchmarks.multiobjective run --problems halide_blur_mo --seeds 10 --budget 30
    python -m benchmarks.multiobjective report benchmarks/results/multiobjective.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.optimizer import Optimizer
from bayestune.pareto import hypervolume, hypervolume_trace, pareto_mask
from bayestune.objectives import Objective
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Real, Space
from bayestune.trial import Result, TrialStatus, coerce_result

from benchmarks.halide_problems import cache_key as _config_key
from benchmarks.peers.hypermapper_peer import _from_hypermapper, _hypermapper_parameter, install_sklearn_shim
from benchmarks.peers.optuna_peer import _optuna_suggest  # positions mapping for permutations

RESULTS = Path(__file__).resolve().parent / "results"
OURS = ("pareto_rf", "parego", "random")
PEERS = ("optuna_tpe", "optuna_nsga2", "hypermapper")
DESIGN_SIZE = 10
#: Where the reference point sits beyond the front's nadir, as a fraction of its range.
REF_OFFSET = 0.1
#: Measured problems: the reference point is this percentile of all feasible evaluations.
MEASURED_PERCENTILE = 90


# ---------------------------------------------------------------------------------------
# problems
# ---------------------------------------------------------------------------------------
@dataclass
class MOProblem:
    name: str
    space: Space
    objectives: list[Objective]
    evaluate: Callable[[Mapping[str, Any]], Any]
    front: np.ndarray | None = None     # a dense sample of the true Pareto front, if known
    log_scale: bool = False             # compute hypervolume on log10 of the objectives
    description: str = ""
    timing_sensitive: bool = False
    close: Callable[[], None] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def chakong_haimes_space() -> Space:
    return Space([Real("x", -20.0, 20.0, default=-5.0), Real("y", -20.0, 20.0, default=5.0)],
                 ["x**2 + y**2 <= 225", "x - 3*y + 10 <= 0"])


def chakong_haimes(config: Mapping[str, Any]) -> dict[str, float]:
    x, y = float(config["x"]), float(config["y"])
    return {"f1": 2.0 + (x - 2.0) ** 2 + (y - 1.0) ** 2, "f2": 9.0 * x - (y - 1.0) ** 2}


def chakong_haimes_front(n: int = 2001) -> np.ndarray:
    y = np.linspace(2.5, math.sqrt(225.0 - 6.25), n)
    values = [chakong_haimes({"x": -2.5, "y": v}) for v in y]
    return np.array([[v["f1"], v["f2"]] for v in values])


ZDT_X3 = [0.0, 0.1, 0.2, 0.5, 1.0]
ZDT_X4 = {"a": 0.0, "b": 0.5, "c": 1.0}


def zdt_mixed_space() -> Space:
    return Space([Real("x1", 0.0, 1.0), Integer("x2", 0, 10), Ordinal("x3", ZDT_X3),
                  Categorical("x4", list(ZDT_X4)), Real("x5", 0.0, 1.0)])


def zdt_mixed(config: Mapping[str, Any]) -> Any:
    if config["x4"] == "c" and config["x2"] >= 5:
        return Result.failure("x4=c with x2>=5 does not build", "crash")
    g = 1.0 + 9.0 * (config["x2"] / 10.0 + config["x3"] + ZDT_X4[config["x4"]] + config["x5"]) / 4.0
    f1 = float(config["x1"])
    return {"f1": f1, "f2": g * (1.0 - math.sqrt(f1 / g))}


def zdt_front(n: int = 2001) -> np.ndarray:
    f1 = np.linspace(0.0, 1.0, n)
    return np.column_stack([f1, 1.0 - np.sqrt(f1)])


def get_problem(name: str) -> MOProblem:
    if name == "chakong_haimes":
        return MOProblem(name, chakong_haimes_space(), [Objective("f1"), Objective("f2")], chakong_haimes,
                         front=chakong_haimes_front(), description="Chakong-Haimes, 2 reals, 2 known constraints")
    if name == "zdt_mixed":
        return MOProblem(name, zdt_mixed_space(), [Objective("f1"), Objective("f2")], zdt_mixed,
                         front=zdt_front(), description="ZDT1 over real/integer/ordinal/categorical, hidden constraint")
    if name == "halide_blur_mo":
        from benchmarks.halide_problems import HalideEvaluator, MeasurementCache, blur_space, cache_path

        space = blur_space()
        evaluator = HalideEvaluator("halide_blur", space)
        path = cache_path("halide_blur")
        bb = MeasurementCache(evaluator, path) if path is not None else evaluator
        return MOProblem(name, space, [Objective("time"), Objective("compile_s")], bb, log_scale=True,
                         description="live Halide blur schedule: run time (ms) vs JIT compile time (s)",
                         timing_sensitive=True, close=bb.close)
    raise ValueError(f"unknown problem {name!r}; known: chakong_haimes, zdt_mixed, halide_blur_mo")


# ---------------------------------------------------------------------------------------
# counted evaluations (the budget rules) and runners
# ---------------------------------------------------------------------------------------


class BudgetExhausted(Exception):
    pass


class Counted:
    """Applies the budget rules and records what each counted evaluation returned."""

    def __init__(self, problem: MOProblem, budget: int) -> None:
        self.problem, self.budget = problem, budget
        self.names = [o.name for o in problem.objectives]
        self.answers: dict[str, Result] = {}
        self.values: list[list[float] | None] = []
        self.feasible: list[bool] = []
        self.ask_s: list[float] = []
        self.rejected = 0
        self._last = time.perf_counter()

    @property
    def n(self) -> int:
        return len(self.values)

    def __call__(self, config: Mapping[str, Any]) -> Result:
        space = self.problem.space
        try:
            X = space.to_matrix([space.validate_config(config)])
            known_ok = bool(space.is_feasible(X)[0])
        except Exception:
            known_ok = False
        if not known_ok:
            self.rejected += 1
            return Result.failure("outside the known constraints", "invalid")
        key = _config_key(config)
        if key in self.answers:
            return self.answers[key]
        if self.n >= self.budget:
            raise BudgetExhausted
        start = time.perf_counter()
        self.ask_s.append(start - self._last)
        res = coerce_result(self.problem.evaluate(dict(config)), self.names)
        self.answers[key] = res
        ok = res.status is TrialStatus.OK
        self.feasible.append(ok)
        self.values.append([float(res.values[n]) for n in self.names] if res.values and all(
            n in res.values for n in self.names) else None)
        self._last = time.perf_counter()
        return res


def run_bayestune(problem: MOProblem, strategy: str, budget: int, seed: int) -> Counted:
    counted = Counted(problem, budget)
    opt = Optimizer(problem.space, objectives=problem.objectives, strategy=strategy, seed=seed,
                    design=DesignSpec(size=DESIGN_SIZE))
    opt.optimize(counted, budget)
    return counted


def run_optuna(problem: MOProblem, sampler_name: str, budget: int, seed: int, max_rejections: int = 200_000) -> Counted:
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def violation(trial: Any) -> list[float]:
        return [trial.user_attrs.get("violation", 0.0)]

    # Known constraints reach Optuna through its constraints_func (c-TPE, constrained NSGA-II):
    # without them TPE's independent per-parameter sampling stays outside the feasible region.
    if sampler_name == "optuna_tpe":
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=DESIGN_SIZE, constraints_func=violation)
    else:
        sampler = optuna.samplers.NSGAIISampler(seed=seed, population_size=DESIGN_SIZE, constraints_func=violation)
    study = optuna.create_study(directions=[o.direction for o in problem.objectives], sampler=sampler)
    counted = Counted(problem, budget)
    names = [o.name for o in problem.objectives]
    worst: list[float] | None = None  # placeholder values told for rejected proposals
    while counted.n < budget and counted.rejected < max_rejections:
        trial = study.ask()
        config = {p.name: _optuna_suggest(trial, p) for p in problem.space.parameters}
        try:
            res = counted(config)
        except BudgetExhausted:
            study.tell(trial, state=TrialState.FAIL)
            break
        if res.status is TrialStatus.OK:
            values = [res.values[n] for n in names]
            worst = values if worst is None else [max(a, b) if o.minimize else min(a, b)
                                                  for a, b, o in zip(worst, values, problem.objectives)]
            trial.set_user_attr("violation", 0.0)
            study.tell(trial, values)
        elif res.kind == "invalid" and worst is not None:
            # Outside the known constraints: not charged. Marked infeasible for the sampler;
            # the objective values are placeholders (the worst seen), not information.
            trial.set_user_attr("violation", 1.0)
            study.tell(trial, worst)
        else:
            study.tell(trial, state=TrialState.FAIL)
    return counted


def run_hypermapper(problem: MOProblem, budget: int, seed: int) -> Counted:
    """HyperMapper 2.2 (``pip install hypermapper``), multi-objective BO with its random forests
    and feasibility classifier, driven through its Python API.

    HyperMapper 2.2.13 still passes ``sparse=`` to scikit-learn's OneHotEncoder (renamed
    ``sparse_output`` in scikit-learn 1.2, removed in 1.4); a shim maps it, nothing else is
    changed. Proposals outside the known constraints are answered ``Valid=False`` with
    placeholder values (the worst seen) and not charged.
    """
    import contextlib
    import io
    import random
    import shutil
    import tempfile

    from hypermapper import optimizer as hm_optimizer

    install_sklearn_shim()
    random.seed(seed)
    np.random.seed(seed)
    counted = Counted(problem, budget)
    names = [o.name for o in problem.objectives]
    params = {p.name: p for p in problem.space.parameters}
    workdir = tempfile.mkdtemp(prefix="hypermapper-")
    scenario = {
        "application_name": problem.name, "optimization_objectives": names, "optimization_iterations": 100 * budget,
        "number_of_cpus": 1,  # its default (all CPUs) forks workers every iteration: slower here, not better
        "optimization_method": "bayesian_optimization", "run_directory": workdir,
        "log_file": os.path.join(workdir, "hypermapper.log"), "output_data_file": os.path.join(workdir, "samples.csv"),
        "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": DESIGN_SIZE},
        "feasible_output": {"enable_feasible_predictor": True, "name": "Valid", "true_value": "True",
                            "false_value": "False"},
        "input_parameters": {n: _hypermapper_parameter(p) for n, p in params.items()},
    }
    path = os.path.join(workdir, "scenario.json")
    with open(path, "w") as fh:
        json.dump(scenario, fh)
    worst: list[float] | None = None

    def black_box(x: Mapping[str, Any]) -> dict[str, Any]:
        nonlocal worst
        config = {n: _from_hypermapper(p, x[n]) for n, p in params.items()}
        res = counted(config)
        if res.values and all(n in res.values for n in names):
            values = [float(res.values[n]) for n in names]
            if res.status is TrialStatus.OK:
                worst = values if worst is None else [max(a, b) if o.minimize else min(a, b)
                                                      for a, b, o in zip(worst, values, problem.objectives)]
            return {**dict(zip(names, values)), "Valid": res.status is TrialStatus.OK}
        return {**dict(zip(names, worst or [0.0] * len(names))), "Valid": False}

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            hm_optimizer.optimize(path, black_box)
    except BudgetExhausted:
        pass
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return counted


def run_one(problem: MOProblem, strategy: str, budget: int, seed: int) -> dict[str, Any]:
    start = time.perf_counter()
    if strategy in OURS:
        counted = run_bayestune(problem, strategy, budget, seed)
    elif strategy == "hypermapper":
        counted = run_hypermapper(problem, budget, seed)
    elif strategy in PEERS:
        counted = run_optuna(problem, strategy, budget, seed)
    else:
        raise ValueError(f"unknown strategy {strategy!r}; known: {list(OURS + PEERS)}")
    return {"problem": problem.name, "strategy": strategy, "seed": seed, "budget": budget,
            "values": counted.values, "feasible": counted.feasible, "ask_s": counted.ask_s,
            "rejected": counted.rejected, "wall_s": time.perf_counter() - start}


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "sklearn", "optuna", "halide", "hypermapper"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            pass
    return out


def _task(args: tuple[str, str, int, int]) -> dict[str, Any]:
    problem_name, strategy, budget, seed = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    problem = get_problem(problem_name)
    try:
        return run_one(problem, strategy, budget, seed)
    finally:
        if problem.close:
            problem.close()


def run(problems: Sequence[str], strategies: Sequence[str], seeds: Sequence[int], budget: int, out: Path,
        jobs: int = 1, hypermapper_seeds: int | None = None) -> None:
    done = set()
    if out.exists():
        for rec in map(json.loads, filter(str.strip, out.read_text().splitlines())):
            if rec.get("budget", 0) >= budget:
                done.add((rec["problem"], rec["strategy"], rec["seed"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    versions = _versions()
    tasks = [(p, s, budget, seed) for p in problems for s in strategies for seed in seeds if (p, s, seed) not in done
             and not (s == "hypermapper" and hypermapper_seeds is not None and seed >= hypermapper_seeds)]
    # Live timing drifts with the machine's load: interleave strategies seed by seed, so that
    # drift (and the first-come measurement cache) favours none of them.
    serial = sorted((t for t in tasks if t[0] == "halide_blur_mo"), key=lambda t: (t[3], strategies.index(t[1])))
    parallel = [t for t in tasks if t[0] != "halide_blur_mo"]

    def write(rec: dict[str, Any]) -> None:
        rec["versions"] = versions
        with out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        n_ok = sum(rec["feasible"])
        print(f"{rec['problem']:16s} {rec['strategy']:13s} seed {rec['seed']:2d}: {len(rec['values'])} evals "
              f"({n_ok} feasible, {rec['rejected']} rejected) in {rec['wall_s']:.1f} s", flush=True)

    if jobs > 1 and parallel:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            for rec in pool.map(_task, parallel):
                write(rec)
    else:
        for t in parallel:
            write(_task(t))
    if serial:  # live timing: one problem instance, one run at a time
        problem = get_problem("halide_blur_mo")
        try:
            for _, s, b, seed in serial:
                write(run_one(problem, s, b, seed))
        finally:
            if problem.close:
                problem.close()


# ---------------------------------------------------------------------------------------
# metric and report
# ---------------------------------------------------------------------------------------
@dataclass
class Scale:
    """Maps raw objective values to the space hypervolume is measured in."""

    log: bool
    ideal: np.ndarray
    nadir: np.ndarray

    def __call__(self, Y: np.ndarray) -> np.ndarray:
        Y = np.log10(Y) if self.log else Y
        return (Y - self.ideal) / np.where(self.nadir > self.ideal, self.nadir - self.ideal, 1.0)


def reference_front(problem_name: str, records: Sequence[dict[str, Any]]) -> tuple[np.ndarray, bool]:
    """The known front, else the non-dominated feasible evaluations of every record."""
    if problem_name == "chakong_haimes":
        return chakong_haimes_front(), False
    if problem_name == "zdt_mixed":
        return zdt_front(), False
    rows = [v for r in records for v, ok in zip(r["values"], r["feasible"]) if ok and v is not None]
    Y = np.array(rows, dtype=float)
    return Y[pareto_mask(Y)], True


def hv_ratio_curves(problem_name: str, records: Sequence[dict[str, Any]]) -> tuple[dict[str, np.ndarray], float]:
    """Per strategy, an (n_seeds, budget) array of HV(first k) / HV(reference front)."""
    front, log = reference_front(problem_name, records)
    F = np.log10(front) if log else front
    if log:  # measured: the union front is narrow, so box it by the 90th percentile of all evaluations
        rows = [v for r in records for v, ok in zip(r["values"], r["feasible"]) if ok and v is not None]
        nadir = np.percentile(np.log10(np.array(rows, dtype=float)), MEASURED_PERCENTILE, axis=0)
        scale = Scale(log, F.min(axis=0), nadir)
        ref = np.ones(front.shape[1])
    else:
        scale = Scale(log, F.min(axis=0), F.max(axis=0))
        ref = np.full(front.shape[1], 1.0 + REF_OFFSET)
    hv_front = hypervolume(scale(front), ref)
    out: dict[str, list[np.ndarray]] = {}
    for r in records:
        budget = r["budget"]
        vals = np.array([v if v is not None else [np.nan] * front.shape[1] for v in r["values"]], dtype=float)
        trace = np.zeros(budget)
        if len(vals):
            feasible = np.array(r["feasible"], dtype=bool) & np.all(np.isfinite(vals), axis=1)
            safe = np.where(np.isfinite(vals) & (vals > 0 if log else True), vals, 1.0)
            t = hypervolume_trace(scale(safe), ref, feasible=feasible) / hv_front
            trace[:len(t)] = t
            trace[len(t):] = t[-1] if len(t) else 0.0
        out.setdefault(r["strategy"], []).append(trace)
    return {k: np.array(v) for k, v in out.items()}, hv_front


def _fmt(mean: float, std: float) -> str:
    return f"{mean:.3f} ± {std:.3f}"


def report(paths: Sequence[str], out_md: Path, plots: Path | None) -> str:
    records = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_problem.setdefault(r["problem"], []).append(r)
    order = [s for s in OURS + PEERS if any(r["strategy"] == s for r in records)]
    lines = ["# Multi-objective benchmark (issue 6)", "",
             "Hypervolume of the feasible evaluations after k evaluations, divided by the hypervolume of the",
             "known Pareto front, objectives scaled to [0, 1] by the front's ideal and nadir, reference point 10 %",
             "of the front's range beyond its nadir. Halide (no known front): the reference front is the",
             "non-dominated set of all runs' evaluations, on log10 of both objectives, scaled from its ideal (0)",
             "to the 90th percentile of all feasible evaluations (1 = the reference point).",
             "Mean ± standard deviation over seeds; **bold** = best mean.",
             "Produced by `python -m benchmarks.multiobjective report " + " ".join(paths) + "`.", ""]
    for name, recs in by_problem.items():
        curves, _ = hv_ratio_curves(name, recs)
        budget = min(r["budget"] for r in recs)
        points = [k for k in (10, 20, 30, 40, 60, 80, 100) if k <= budget]
        if budget not in points:
            points.append(budget)
        n_seeds = {s: len(curves[s]) for s in curves}
        desc = get_problem_description(name)
        lines += [f"## {name}", "", desc, "", f"seeds per strategy: {n_seeds}", ""]
        lines.append("| strategy | " + " | ".join(f"HV ratio @{k}" for k in points) + " | ms per suggestion (mean) |")
        lines.append("|---" * (len(points) + 2) + "|")
        means = {k: {s: curves[s][:, k - 1].mean() for s in order if s in curves} for k in points}
        for s in order:
            if s not in curves:
                continue
            cells = []
            for k in points:
                m, sd = curves[s][:, k - 1].mean(), curves[s][:, k - 1].std()
                cell = _fmt(m, sd)
                cells.append(f"**{cell}**" if m >= max(means[k].values()) - 1e-12 else cell)
            ask = [a for r in recs if r["strategy"] == s for a in r["ask_s"][DESIGN_SIZE:]]
            ms = f"{1e3 * float(np.mean(ask)):.0f}" if ask else "-"
            lines.append(f"| {s} | " + " | ".join(cells) + f" | {ms} |")
        lines.append("")
        if plots is not None:
            path = _plot_curves(name, curves, order, plots)
            lines += [f"![{name}]({os.path.relpath(path, out_md.parent)})", ""]
    text = "\n".join(lines)
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text(text)
    return text


def get_problem_description(name: str) -> str:
    return {
        "chakong_haimes": "Chakong-Haimes: 2 reals, 2 known constraints; known linear front.",
        "zdt_mixed": "ZDT1 over real/integer/ordinal/categorical variables with a hidden constraint; known front.",
        "halide_blur_mo": "Live Halide 3x3 blur schedule (7 parameters incl. a permutation, 2 known constraints): "
                          "run time (ms) vs JIT compile time (s) on this CPU; reference front = all runs' union.",
    }.get(name, name)


def _plot_curves(name: str, curves: Mapping[str, np.ndarray], order: Sequence[str], directory: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    directory.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(6.5, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for s in order:
        if s not in curves:
            continue
        c = curves[s]
        k = np.arange(1, c.shape[1] + 1)
        mean, lo, hi = c.mean(axis=0), np.percentile(c, 10, axis=0), np.percentile(c, 90, axis=0)
        ax.plot(k, mean, label=s, lw=2 if s in ("pareto_rf", "parego") else 1.2)
        ax.fill_between(k, lo, hi, alpha=0.12)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("hypervolume / reference front's")
    ax.set_title(f"{name}: mean, 10-90 % band over seeds")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = directory / f"multiobjective_{name}.png"
    fig.savefig(path, dpi=110)
    return path


def _available(strategy: str) -> bool:
    import importlib.util

    module = {"optuna_tpe": "optuna", "optuna_nsga2": "optuna", "hypermapper": "hypermapper"}.get(strategy)
    return module is None or importlib.util.find_spec(module) is not None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.multiobjective", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--problems", default="chakong_haimes,zdt_mixed")
    r.add_argument("--strategies", default=",".join(s for s in OURS + PEERS if _available(s)),
                   help="comma list (default: all whose packages are importable)")
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--budget", type=int, default=60)
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--out", default=str(RESULTS / "multiobjective.jsonl"))
    r.add_argument("--hypermapper-seeds", type=int, default=None, help="run HyperMapper (slow) on the first N seeds only")
    rep = sub.add_parser("report")
    rep.add_argument("results", nargs="+")
    rep.add_argument("--out", default=str(RESULTS / "multiobjective.md"))
    rep.add_argument("--plots", default=str(RESULTS / "plots"))
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.problems.split(","), args.strategies.split(","), list(range(args.seeds)), args.budget,
            Path(args.out), jobs=args.jobs, hypermapper_seeds=args.hypermapper_seeds)
    else:
        print(report(args.results, Path(args.out), Path(args.plots) if args.plots else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
