"""Guard for refactors: the same seeds must give the same evaluated configurations.

``python -m benchmarks.trajectory_check record OUT.json`` runs each strategy on each problem
for fixed seeds and stores the sequence of evaluated configurations and values;
``python -m benchmarks.trajectory_check compare OUT.json`` re-runs every stored cell (or those
``--problems``/``--strategies`` select) and reports the first evaluation where a trajectory
departs from the stored one. A refactor
that claims "behaviour does not move" shows ``0 differing`` here.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import numpy as np

from bayestune.optimizer import Optimizer
from benchmarks.bograph_problems import PROBLEMS as LOGGED_PROBLEMS
from benchmarks.contenders import STRATEGIES, make_contender, parse_variant, resolve_strategies
from benchmarks.problems import get_problem, resolve_problems

DEFAULT_PROBLEMS = "gpu,taco_like,branin_mixed,sparse_chain"
DEFAULT_STRATEGIES = "bo,random,cot_random,genetic,annealing,local"


def _problems(spec: str) -> list[str]:
    """The harness's problems, plus the logged-metric problems of ``bograph`` (``soc``,
    ``forrester2d``, or the group ``logged``)."""
    out: list[str] = []
    for item in (s.strip() for s in spec.split(",")):
        if item == "logged":
            out.extend(LOGGED_PROBLEMS)
        elif item in LOGGED_PROBLEMS:
            out.append(item)
        elif item:
            out.extend(resolve_problems(item))
    return list(dict.fromkeys(out))


def _fits(problem: str, strategy: str) -> bool:
    """Whether the strategy takes the problem (single- against multi-objective)."""
    if problem in LOGGED_PROBLEMS:
        return True
    return STRATEGIES[strategy].unsupported(problem, get_problem(problem).multi_objective) is None


def _cells(problems: str, strategies: str, seeds: list[int]) -> list[tuple[str, str, int]]:
    names = resolve_strategies(strategies)
    return [(p, s, seed) for p in _problems(problems) for s in names if _fits(p, s) for seed in seeds]


def _run_logged(problem_name: str, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    """A logged-metric problem through ask/tell, with its metrics reported (as bograph_compare)."""
    problem = LOGGED_PROBLEMS[problem_name]()
    base, options, _ = parse_variant(strategy)
    opt = Optimizer(
        problem.space, objectives=[problem.objective], strategy=base, strategy_options=options or None, seed=seed
    )
    noise = np.random.default_rng(10_000 + seed)
    configs, values = [], []
    while opt.n_evaluated < budget:
        config = opt.ask()[0]
        result = problem.evaluate(config, noise)
        opt.tell(config, result)
        configs.append({k: (v.item() if hasattr(v, "item") else v) for k, v in config.items()})
        values.append(float(result[problem.objective]))
    return {"configs": json.loads(json.dumps(configs, default=list)), "values": values}


def run_cell(problem_name: str, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    if problem_name in LOGGED_PROBLEMS:
        return _run_logged(problem_name, strategy, seed, budget)
    problem = get_problem(problem_name)
    record = make_contender(strategy, problem, seed).run(problem, budget, seed).to_record()
    return {"configs": record["configs"], "values": record["values"]}


def _key(problem: str, strategy: str, seed: int) -> str:
    return f"{problem}|{strategy}|{seed}"


def same_value(a: Any, b: Any) -> bool:
    """Values equal up to the last bits: a problem computed on another CPU or BLAS build can
    differ by an ulp (seen: 4e-16 on hartmann6 and taco_like) while every configuration agrees;
    a real change of trajectory shows up in the configurations."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300) or (math.isnan(a) and math.isnan(b))
    return a == b


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> int | None:
    """Index of the first evaluation that differs (config, or value beyond rounding), or None if
    identical."""
    pairs = list(zip(old["configs"], new["configs"]))
    for i, (a, b) in enumerate(pairs):
        if a != b or not same_value(old["values"][i], new["values"][i]):
            return i
    if len(old["configs"]) != len(new["configs"]):
        return len(pairs)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.trajectory_check", description=__doc__)
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("path")
    parser.add_argument(
        "--problems", default=None, help=f"record: default {DEFAULT_PROBLEMS}; compare: default every problem stored"
    )
    parser.add_argument(
        "--strategies",
        default=None,
        help=f"record: default {DEFAULT_STRATEGIES}; compare: default every strategy stored",
    )
    parser.add_argument("--seeds", default=None, help="record: default 0,1; compare: default every seed stored")
    parser.add_argument("--budget", type=int, default=60)
    args = parser.parse_args(argv)
    seeds = [int(s) for s in (args.seeds or "0,1").split(",")]

    if args.action == "record":
        out = {"budget": args.budget, "runs": {}}
        for p, s, seed in _cells(args.problems or DEFAULT_PROBLEMS, args.strategies or DEFAULT_STRATEGIES, seeds):
            out["runs"][_key(p, s, seed)] = run_cell(p, s, seed, args.budget)
            print(f"recorded {p} {s} seed {seed}", file=sys.stderr, flush=True)
        with open(args.path, "w") as fh:
            json.dump(out, fh)
        return 0

    with open(args.path) as fh:
        stored = json.load(fh)
    differing = 0
    stored_cells = [(p, s, int(seed)) for p, s, seed in (key.split("|") for key in stored["runs"])]
    if args.problems is None and args.strategies is None:
        cells = [c for c in stored_cells if args.seeds is None or c[2] in seeds]
    else:
        cells = _cells(
            args.problems or ",".join(dict.fromkeys(c[0] for c in stored_cells)),
            args.strategies or ",".join(dict.fromkeys(c[1] for c in stored_cells)),
            seeds if args.seeds else sorted({c[2] for c in stored_cells}),
        )
    for p, s, seed in cells:
        old = stored["runs"].get(_key(p, s, seed))
        if old is None:
            print(f"{p} {s} seed {seed}: not in {args.path}")
            continue
        at = first_difference(old, run_cell(p, s, seed, stored["budget"]))
        differing += at is not None
        print(f"{p} {s} seed {seed}: " + ("identical" if at is None else f"differs from evaluation {at}"), flush=True)
    print(f"{differing} differing")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
