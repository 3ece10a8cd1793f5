"""Judge a search change as issue 39's diagnosis did: variant against baseline on the *same*
seeds, with a hit rate and the share of runs stuck at a true local minimum beside the geo-mean.

Why not only the geo-mean of best/optimum: the losses on needle-shaped spaces are bimodal (a run
either finds the optimum or stops in one secondary minimum), so a mean moves little while the
number of runs that end at the optimum moves a lot; and per-space "winners" over a handful of
seeds are mostly seed noise. Per (problem, seed) pair this reads:

* **hit** at a budget: best/optimum <= 1 + ``--tolerance`` (default 1 %);
* **stuck** at the largest budget: not a hit, and the incumbent has no strictly better feasible
  configuration one parameter away (enumerable spaces only; the recorded table or formula is
  asked for each neighbour, failures ignored) — a true local minimum of the landscape;
* **failures**: the share of evaluations that failed.

Paired tests: an exact sign test on the runs whose hit at the largest budget differs (McNemar),
and on the pairs whose final best differs. Command::

    python -m benchmarks.paired FILE [FILE ...] --baseline bo [--variants a,b] [--out table.md]
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import binomtest

from bayestune.search.trust_region import parameters_changed
from benchmarks.jsonl import load_records
from benchmarks.metrics import best_at, geometric_mean
from benchmarks.problem import Problem, config_key

BUDGETS = (20, 40, 60, 100)
HIT_BUDGETS = (60, 100)
#: neighbourhoods are only enumerated for spaces at most this large
ENUMERATION_LIMIT = 300_000


@dataclass
class Run:
    """One (problem, strategy, seed) run as this table reads it."""

    ratios: dict[int, float]  # budget -> best/optimum
    failure_share: float
    incumbent: dict[str, Any] | None  # the best feasible configuration at the largest budget
    stuck: bool | None = None  # None: not decidable (space too large or continuous)


@dataclass
class Landscape:
    """The one-parameter neighbours of configurations of one problem, with their values."""

    problem: Problem
    rows: np.ndarray | None = None
    cache: dict[str, float | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rows = self.problem.space.enumerate(limit=ENUMERATION_LIMIT)

    def value(self, config: Mapping[str, Any]) -> float | None:
        key = config_key(config)
        if key not in self.cache:
            result = self.problem.evaluate(config)
            v = result.values.get(self.problem.objective) if result.feasible and result.error is None else None
            self.cache[key] = None if v is None or not math.isfinite(float(v)) else float(v)
        return self.cache[key]

    def is_local_minimum(self, config: Mapping[str, Any], value: float) -> bool | None:
        """No feasible one-parameter neighbour strictly better (None: not enumerable)."""
        if self.rows is None:
            return None
        space = self.problem.space
        x = space.to_matrix([space.validate_config(dict(config))])[0]
        near = self.rows[parameters_changed(space, self.rows, x) == 1]
        for neighbour in space.to_configs(near):
            v = self.value(neighbour)
            if v is not None and v < value * (1 - 1e-9):
                return False
        return True


def read_runs(records: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, dict[str, dict[int, Run]]]:
    """problem -> strategy -> seed -> Run, for single-objective records with a positive optimum."""
    out: dict[str, dict[str, dict[int, Run]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        optimum = r.get("optimum")
        if r.get("error") or not isinstance(optimum, (int, float)) or optimum <= 0 or r.get("kind") == "multiobjective":
            continue
        values = r["values"]
        feasible = r.get("feasible") or [v is not None for v in values]
        ratios = {b: best_at(values, b) / optimum for b in budgets}
        incumbent = None
        good = [(v, i) for i, v in enumerate(values[: max(budgets)]) if v is not None and feasible[i]]
        if good and r.get("configs"):
            incumbent = r["configs"][min(good)[1]]
        share = 1 - sum(bool(f) for f in feasible[: max(budgets)]) / max(1, min(len(values), max(budgets)))
        out[r["problem"]][r["strategy"]][int(r["seed"])] = Run(ratios, share, incumbent)
    return out


def mark_stuck(
    runs: dict[str, dict[str, dict[int, Run]]],
    budget: int,
    tolerance: float,
    lookup: Callable[[str], Problem] | None = None,
) -> None:
    """Decide ``stuck`` for every run of an enumerable problem (GPU tables, discrete synthetics);
    ``lookup`` builds a problem by name (default: the benchmark registry)."""
    if lookup is None:
        from benchmarks.problems import get_problem as lookup
    for problem_name, by_strategy in runs.items():
        try:
            landscape = Landscape(lookup(problem_name))
        except Exception:  # a problem this machine cannot build (data missing): left undecided
            continue
        if landscape.rows is None:
            continue
        optimum_value = landscape.problem.optimum or math.nan
        for by_seed in by_strategy.values():
            for run in by_seed.values():
                ratio = run.ratios[budget]
                if run.incumbent is None or not math.isfinite(ratio):
                    continue
                if ratio <= 1 + tolerance:
                    run.stuck = False
                else:
                    run.stuck = landscape.is_local_minimum(run.incumbent, ratio * optimum_value)


def _sign_p(wins: int, losses: int) -> float:
    n = wins + losses
    return float(binomtest(wins, n).pvalue) if n else 1.0


def summary_rows(
    runs: dict[str, dict[str, dict[int, Run]]],
    baseline: str,
    variants: Sequence[str],
    budgets: Sequence[int],
    tolerance: float,
) -> list[list[str]]:
    """One row per strategy (the baseline first) over the problems where every strategy ran, on
    the seeds every strategy ran there (paired)."""
    top = max(budgets)
    rows = []
    for strategy in [baseline, *variants]:
        ratios: dict[int, list[float]] = defaultdict(list)  # per problem: mean over paired seeds
        hits = {b: [0, 0] for b in HIT_BUDGETS if b in budgets}
        stuck, decided, fail, better, worse, hit_gain, hit_loss = 0, 0, [], 0, 0, 0, 0
        for by_strategy in runs.values():
            if any(s not in by_strategy for s in (baseline, *variants)):
                continue
            seeds = sorted(set.intersection(*(set(by_strategy[s]) for s in (baseline, *variants))))
            if not seeds:
                continue
            mine = [by_strategy[strategy][s] for s in seeds]
            base = [by_strategy[baseline][s] for s in seeds]
            for b in budgets:
                ratios[b].append(float(np.nanmean([r.ratios[b] for r in mine])))
            for b in hits:
                hits[b][0] += sum(r.ratios[b] <= 1 + tolerance for r in mine)
                hits[b][1] += len(mine)
            for r, q in zip(mine, base):
                stuck += bool(r.stuck)
                decided += r.stuck is not None
                fail.append(r.failure_share)
                better += r.ratios[top] < q.ratios[top] * (1 - 1e-12)
                worse += r.ratios[top] > q.ratios[top] * (1 + 1e-12)
                h_r, h_q = r.ratios[top] <= 1 + tolerance, q.ratios[top] <= 1 + tolerance
                hit_gain += h_r and not h_q
                hit_loss += h_q and not h_r
        if not ratios:
            continue
        cells = [strategy, str(len(ratios[top]))]
        cells += [f"{geometric_mean(ratios[b]):.4f}" for b in budgets]
        cells += [f"{100 * h / max(n, 1):.1f} %" for h, n in hits.values()]
        cells.append(f"{100 * stuck / decided:.1f} %" if decided else "–")
        cells.append(f"{100 * float(np.mean(fail)):.1f} %")
        if strategy == baseline:
            cells += ["–", "–"]
        else:
            cells.append(f"+{hit_gain} / −{hit_loss} (p={_sign_p(hit_gain, hit_loss):.3f})")
            cells.append(f"{better} / {worse} (p={_sign_p(better, worse):.3f})")
        rows.append(cells)
    return rows


def per_problem_rows(
    runs: dict[str, dict[str, dict[int, Run]]], strategies: Sequence[str], budget: int, tolerance: float
) -> list[list[str]]:
    """Per problem and strategy, on the seeds every strategy ran: hits at ``budget`` / runs, the
    stuck runs and the share of evaluations that failed."""
    rows = []
    for problem, by_strategy in sorted(runs.items()):
        seed_sets = [set(by_strategy[s]) for s in strategies if s in by_strategy]
        seeds = sorted(set.intersection(*seed_sets)) if seed_sets else []
        cells = [problem]
        for s in strategies:
            mine = [by_strategy[s][k] for k in seeds] if s in by_strategy else []
            hit = sum(r.ratios[budget] <= 1 + tolerance for r in mine)
            st = sum(bool(r.stuck) for r in mine)
            failed = 100 * float(np.mean([r.failure_share for r in mine])) if mine else 0.0
            cells.append(f"{hit}/{len(mine)} (stuck {st}, failed {failed:.0f} %)" if mine else "–")
        rows.append(cells)
    return rows


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def render(runs, baseline: str, variants: Sequence[str], budgets: Sequence[int], tolerance: float) -> str:
    hit_cols = [f"hit@{b}" for b in HIT_BUDGETS if b in budgets]
    header = ["strategy", "problems", *[f"@{b}" for b in budgets], *hit_cols, f"stuck@{max(budgets)}", "failures"]
    header += [f"hit@{max(budgets)} gained/lost vs {baseline}", f"final better/worse vs {baseline}"]
    out = [
        f"Paired on seeds; hit: within {100 * tolerance:g} % of the optimum; geo-mean over problems of the mean best/optimum.",
        "",
    ]
    out.append(table(header, summary_rows(runs, baseline, variants, budgets, tolerance)))
    out += [
        "",
        f"Hits at {max(budgets)} per problem (stuck: not a hit, at a true local minimum; failed: evaluations):",
        "",
    ]
    names = [baseline, *variants]
    out.append(table(["problem", *names], per_problem_rows(runs, names, max(budgets), tolerance)))
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paired", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--baseline", default="bo")
    parser.add_argument("--variants", default=None, help="comma list (default: every other strategy)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--problems", default=None, help="comma list (default: all in the files)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    records = [r for f in args.files for r in load_records(f)]
    runs = read_runs(records, budgets)
    if args.problems:
        keep = set(args.problems.split(","))
        runs = {p: v for p, v in runs.items() if p in keep}
    strategies = sorted({s for v in runs.values() for s in v})
    variants = args.variants.split(",") if args.variants else [s for s in strategies if s != args.baseline]
    mark_stuck(runs, max(budgets), args.tolerance)
    text = render(runs, args.baseline, variants, budgets, args.tolerance)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
