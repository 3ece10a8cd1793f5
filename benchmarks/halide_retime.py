"""Re-time the schedules Halide runs reported as their best, interleaved on today's machine.

The Halide problems (:mod:`benchmarks.halide_problems`) cache every measurement, so a schedule
already in the cache costs nothing and reads the same for every strategy. A strategy that
explores schedules outside the cache gets them timed *now*, at today's load, while the cached
values were timed at another: a variant run on a quieter machine than the one the cache was
filled on looks better than it is (issue 31: new schedules of ``halide_matmul`` timed up to 25 %
below the cache's best). This command takes the schedule each run reported as its best within
each budget, times all of them in the same process in ``--rounds`` interleaved rounds
(alternating order), and compares strategies on those medians, paired by seed.

    python -m benchmarks.halide_retime RUNS.jsonl[.gz] ... --strategies bo,VARIANT --budgets 40,60 --rounds 5

Output (Markdown, stdout or ``--out``): per problem, budget and strategy the mean re-timed best
over the best re-timed schedule of the problem, and each strategy against the first one: the
geometric mean of the per-seed ratios, seeds better / worse, and Wilcoxon's p.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from benchmarks.jsonl import load_records

#: (problem, strategy, seed, budget) -> the schedule the run reported as its best within that budget
Picks = dict[tuple[str, str, int, int], dict[str, Any]]


def schedule_key(config: Mapping[str, Any]) -> str:
    return json.dumps(dict(config), sort_keys=True)


def reported_bests(runs: Iterable[Mapping[str, Any]], strategies: Sequence[str], budgets: Sequence[int]) -> Picks:
    """The best schedule of each run within each budget (failures count as worst); runs of other
    strategies, without configurations, or shorter than a budget are left out of that budget."""
    picks: Picks = {}
    for run in runs:
        if run.get("strategy") not in strategies or not run.get("configs"):
            continue
        values = [math.inf if v is None or not math.isfinite(v) else float(v) for v in run["values"]]
        for budget in budgets:
            if len(values) < budget or not np.isfinite(min(values[:budget])):
                continue
            best = int(np.argmin(values[:budget]))
            picks[(run["problem"], run["strategy"], int(run["seed"]), budget)] = run["configs"][best]
    return picks


def retime(picks: Picks, rounds: int) -> dict[str, dict[str, float]]:
    """Median time of every picked schedule per problem, from ``rounds`` interleaved rounds in one evaluator."""
    from benchmarks.halide_problems import HalideEvaluator, blur_space, matmul_space

    spaces = {"halide_blur": blur_space, "halide_matmul": matmul_space}
    medians: dict[str, dict[str, float]] = {}
    for problem in sorted({p for p, *_ in picks}):
        schedules = {schedule_key(c): c for (p, *_), c in picks.items() if p == problem}
        order = sorted(schedules)
        times: dict[str, list[float]] = {k: [] for k in order}
        evaluator = HalideEvaluator(problem, spaces[problem]())
        try:
            for r in range(rounds):
                for k in order if r % 2 == 0 else order[::-1]:
                    result = evaluator.evaluate(schedules[k])
                    if result.values and result.values.get("time") is not None:
                        times[k].append(float(result.values["time"]))
                print(f"{problem}: round {r + 1} of {rounds}", flush=True)
        finally:
            evaluator.close()
        medians[problem] = {k: statistics.median(v) for k, v in times.items() if v}
    return medians


def compare(picks: Picks, medians: Mapping[str, Mapping[str, float]], strategies: Sequence[str]) -> list[str]:
    """The Markdown table and the paired comparisons (see the module docstring)."""
    ratio: dict[tuple[str, int, str], dict[int, float]] = {}
    for (problem, strategy, seed, budget), config in picks.items():
        t = medians.get(problem, {}).get(schedule_key(config))
        if t is not None:
            best = min(medians[problem].values())
            ratio.setdefault((problem, budget, strategy), {})[seed] = t / best
    lines = ["| problem | budget | strategy | mean re-timed best / best re-timed | seeds |", "|---|---|---|---|---|"]
    for (problem, budget, strategy), seeds in sorted(ratio.items()):
        lines.append(f"| {problem} | {budget} | `{strategy}` | {np.mean(list(seeds.values())):.3f} | {len(seeds)} |")
    lines += [
        "",
        "| problem | budget | strategy | ÷ `" + strategies[0] + "` (geo-mean, paired) | better / worse | Wilcoxon p |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for (problem, budget, strategy), seeds in sorted(ratio.items()):
        reference = ratio.get((problem, budget, strategies[0]), {})
        common = sorted(set(seeds) & set(reference))
        if strategy == strategies[0] or not common:
            continue
        logs = np.log([seeds[s] / reference[s] for s in common])
        p = stats.wilcoxon(logs).pvalue if np.any(logs != 0) else math.nan
        lines.append(
            f"| {problem} | {budget} | `{strategy}` | {math.exp(float(np.mean(logs))):.3f} | "
            f"{int(np.sum(logs < 0))} / {int(np.sum(logs > 0))} | {p:.3f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.halide_retime", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="JSON lines of `python -m benchmarks run` (.jsonl[.gz])")
    parser.add_argument("--strategies", required=True, help="comma list; the first is the reference")
    parser.add_argument("--budgets", default="40,60")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="Markdown file (default: stdout)")
    args = parser.parse_args(argv)
    strategies = [s for s in args.strategies.split(",") if s]
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    runs = [r for path in args.results for r in load_records(path) if str(r.get("problem", "")).startswith("halide")]
    picks = reported_bests(runs, strategies, budgets)
    if not picks:
        parser.error(f"no Halide run of {strategies} with configurations reaches a budget of {budgets}")
    text = "\n".join(compare(picks, retime(picks, args.rounds), strategies)) + "\n"
    if args.out is None:
        print(text)
    else:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
