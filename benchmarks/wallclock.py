"""Time to a tuned kernel on a simulated clock: replays of the GPU caches with their recorded
compile and timing costs, B builders, D devices, repeats and early stop.

Why a simulated clock: the recorded spaces carry what each configuration cost on its GPU
(``compile_time``, ``verification_time``, ``benchmark_time`` and every repeat in ``times``, all
in ms), so the wall time a user would wait can be replayed exactly, without the GPU. Nothing is
invented: none of the seven shared caches lacks one of these fields for any configuration (the
run checks, and counts any record that does; such a record would fail the run rather than get a
made-up duration). A failed build costs its recorded compile time and never reaches a device.

The scheduling rules are the product's own (:class:`bayestune.execution.pipeline_schedule.PipelineSchedule`),
driven by the product's own optimizer: the simulation only replaces processes by a clock. The
optimizer's suggestion time is real (process CPU seconds of ``ask``) and blocks the loop as it
does in a real run, while builds and measurements go on.

Arms (``--arms``):

- ``sequential``: bayestune as it runs today without workers: ask, build, measure, tell;
- ``b8d1``: 8 builders and 1 device, at most 8 configurations in flight;
- ``b8d1_es``: the same with early stop (``measurement.early_stop``: a configuration whose
  second-best of >= 3 repeats is 10 % worse than the incumbent stops, recorded censored);
- ``b16d4_es``: 16 builders, 4 devices, early stop (at most 20 in flight);
- ``q4``: 4 in flight (3 builders, 1 device), for quality per evaluation;
- ``random``: random search, sequential;
- ``kt_bayes_opt`` / ``kt_genetic_algorithm``: Kernel Tuner's own strategies in its simulation
  mode (sequential, as Kernel Tuner runs them today), on the same clock: their evaluations'
  recorded costs plus their own strategy time.

    python -m benchmarks.wallclock run --seeds 10 --budget 150 --out benchmarks/results/wallclock/runs.jsonl
    python -m benchmarks.wallclock table benchmarks/results/wallclock/runs.jsonl

Runs are appended one by one; a rerun skips what the file already has.
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import itertools
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bayestune.evaluators.replay import ReplayProblem, load_kernel_tuner_cache
from bayestune.execution.pipeline_schedule import PipelineSchedule
from bayestune.measurement.early_stop import early_stop_bound
from bayestune.optimizer import Optimizer
from bayestune.trial import Result
from benchmarks.harness import parse_seeds
from benchmarks.outputs import add_output_option, output_path
from benchmarks.problems import data_dir, gpu_problem_names, t1_file_for


@dataclass(frozen=True)
class Arm:
    strategy: str
    builders: int = 1
    devices: int = 1
    in_flight: int = 1
    early_stop: bool = False


ARMS = {
    "sequential": Arm("bo"),
    "b8d1": Arm("bo", 8, 1, 8),
    "b8d1_es": Arm("bo", 8, 1, 8, True),
    "b16d4_es": Arm("bo", 16, 4, 20, True),
    "q4": Arm("bo", 3, 1, 4),
    "random": Arm("random"),
}
KT_ARMS = ("kt_bayes_opt", "kt_genetic_algorithm")
TARGETS = (1.05, 1.02)
CHECKPOINTS = (20, 40, 60, 100)


# ---- what a configuration costs ---------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    build_s: float
    device_s: float  # verification + every repeat
    verify_s: float
    times: tuple[float, ...]  # the repeats (ms), empty for a failure
    value: float | None  # the recorded mean, None for a failure

    def device_after(self, runs: int) -> float:
        """Device seconds of verification plus the first ``runs`` repeats (the recorded benchmark
        time shared evenly over its repeats: their own time plus the per-run overhead)."""
        if not self.times:
            return self.device_s
        return self.verify_s + (self.device_s - self.verify_s) * runs / len(self.times)


class Costs:
    """The recorded costs of one cache, looked up by configuration."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.replay: ReplayProblem = load_kernel_tuner_cache(
            data_dir() / f"{name}.json.gz", t1_path=t1_file_for(name), name=name
        )
        self.evaluator = self.replay.evaluator()
        self.optimum = self.replay.optimum
        self.missing = 0

    def of(self, config: dict[str, Any]) -> tuple[Cost, Result]:
        record = self.replay.records.get(self.replay.key(config), {})
        result = self.evaluator.evaluate(config)
        fields = [record.get(k) for k in ("compile_time", "verification_time", "benchmark_time")]
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in fields):
            self.missing += 1
            raise ValueError(f"{self.name}: configuration {config} lacks a recorded cost ({fields}); not invented")
        compile_ms, verify_ms, bench_ms = (float(v) for v in fields)  # type: ignore[arg-type]
        times = tuple(float(t) for t in record.get("times") or ()) if result.feasible else ()
        compiled = result.kind != "compile"
        cost = Cost(
            build_s=compile_ms / 1000,
            device_s=(verify_ms + bench_ms) / 1000 if compiled else 0.0,
            verify_s=verify_ms / 1000 if compiled else 0.0,
            times=times,
            value=result.values.get(self.replay.objective) if result.feasible else None,
        )
        return cost, result


# ---- one simulated run ------------------------------------------------------------------------
def simulate(costs: Costs, arm: Arm, seed: int, budget: int) -> dict[str, Any]:
    """One run of ``arm``: per told evaluation, when it finished on the simulated clock."""
    space = costs.replay.space
    opt = Optimizer(space, objectives=[costs.replay.objective], strategy=arm.strategy, seed=seed)
    schedule = PipelineSchedule(
        arm.builders, tuple(str(d) for d in range(arm.devices)), exclusive_host=False, max_in_flight=arm.in_flight
    )
    clock, ask_s, ids = 0.0, 0.0, itertools.count()
    events: list[tuple[float, int, str, int, str]] = []  # (time, order, kind, task, device)
    tasks: dict[int, tuple[dict[str, Any], Cost, Result]] = {}
    told: list[dict[str, Any]] = []
    incumbent: float | None = None
    asked = 0
    while len(told) < budget:
        while schedule.accepts() and asked < budget:
            started = time.process_time()
            configs = opt.ask(1)
            spent = time.process_time() - started
            clock += spent
            ask_s += spent
            if not configs:
                asked = budget  # the space is exhausted
                break
            task = next(ids)
            tasks[task] = (configs[0], *costs.of(configs[0]))
            schedule.submit(task)
            asked += 1
        for task in schedule.start_builds():
            heapq.heappush(events, (clock + tasks[task][1].build_s, next(ids), "build", task, ""))
        for device, task in schedule.start_measurements():
            cost, result = tasks[task][1], tasks[task][2]
            runs, bound = _early_stop(cost, incumbent) if arm.early_stop else (len(cost.times), None)
            heapq.heappush(events, (clock + cost.device_after(runs), next(ids), f"run:{runs}:{bound}", task, device))
        if not events:
            break
        at, _, kind, task, device = heapq.heappop(events)
        clock = max(clock, at)
        config, cost, result = tasks[task]
        if kind == "build":
            ok = result.kind != "compile"
            schedule.build_finished(task, ok)
            if ok:
                continue
            outcome, runs, censored = result, 0, False
        else:
            schedule.measurement_finished(device)
            _, runs_text, bound_text = kind.split(":")
            runs, censored = int(runs_text), bound_text != "None"
            outcome = result
            if censored:
                outcome = Result(values={costs.replay.objective: float(bound_text)}, censored=True)
        opt.tell(config, outcome)
        if outcome.feasible and not censored and cost.value is not None:
            incumbent = cost.value if incumbent is None else min(incumbent, cost.value)
        told.append(
            {
                "t": round(clock, 4),
                "value": None if censored else cost.value,
                "censored": censored,
                "device_s": round(cost.device_after(runs) if cost.times else cost.device_s, 5),
                "device_full_s": round(cost.device_s, 5),
                "build_s": round(cost.build_s, 5),
            }
        )
    return {"told": told, "ask_s": ask_s, "optimum": costs.optimum}


def _early_stop(cost: Cost, incumbent: float | None) -> tuple[int, float | None]:
    """How many repeats the early-stop rule lets this configuration run, and its bound if stopped."""
    for runs in range(1, len(cost.times)):
        bound = early_stop_bound(cost.times[:runs], incumbent)
        if bound is not None:
            return runs, bound
    return len(cost.times), None


def kernel_tuner_run(costs: Costs, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    """Kernel Tuner's own strategy in simulation mode, its evaluations on the same clock."""
    from benchmarks.peers.kernel_tuner_peer import kt_setup, run_kernel_tuner
    from benchmarks.problems import build_gpu_problem

    setup = kt_setup(build_gpu_problem(costs.name))
    results = run_kernel_tuner(setup, strategy[len("kt_") :], {}, budget, seed, fix_failure_cost=True)
    clock, seen, told = 0.0, set(), []
    for r in results:
        key = setup.key(r)
        if key in seen:
            continue
        seen.add(key)
        cost, _ = costs.of(setup.from_kt(r))
        strategy_ms = r.get("strategy_time")
        clock += (
            cost.build_s + cost.device_s + (float(strategy_ms) / 1000 if isinstance(strategy_ms, (int, float)) else 0.0)
        )
        told.append(
            {
                "t": round(clock, 4),
                "value": cost.value,
                "censored": False,
                "device_s": cost.device_s,
                "device_full_s": cost.device_s,
                "build_s": cost.build_s,
            }
        )
        if len(told) >= budget:
            break
    return {"told": told, "ask_s": None, "optimum": costs.optimum}


# ---- metrics --------------------------------------------------------------------------------
def best_curve(told: list[dict[str, Any]], optimum: float) -> list[tuple[float, float]]:
    """(time, best/optimum so far) after each evaluation, over measured (uncensored) values."""
    best, out = math.inf, []
    for e in told:
        if e["value"] is not None and not e["censored"]:
            best = min(best, e["value"])
        out.append((e["t"], best / optimum))
    return out


def time_to(curve: list[tuple[float, float]], target: float) -> float:
    return next((t for t, ratio in curve if ratio <= target), math.inf)


def ratio_at_time(curve: list[tuple[float, float]], t: float) -> float:
    ratio = math.inf
    for when, r in curve:
        if when > t:
            break
        ratio = r
    return ratio


def ratio_at_evaluation(curve: list[tuple[float, float]], n: int) -> float:
    return curve[min(n, len(curve)) - 1][1] if curve else math.inf


# ---- the command line -----------------------------------------------------------------------
def run(args: argparse.Namespace) -> None:
    out = output_path(args, "wallclock", "runs.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {(r["problem"], r["arm"], r["seed"]) for r in map(json.loads, out.read_text().splitlines())}
    problems = args.problems.split(",") if args.problems else gpu_problem_names()
    arms = args.arms.split(",")
    for name in problems:
        costs = Costs(name)
        for seed in parse_seeds(args.seeds):
            for arm in arms:
                if (name, arm, seed) in done:
                    continue
                started = time.perf_counter()
                record = (
                    kernel_tuner_run(costs, arm, seed, args.budget)
                    if arm in KT_ARMS
                    else simulate(costs, ARMS[arm], seed, args.budget)
                )
                record.update(
                    {
                        "problem": name,
                        "arm": arm,
                        "seed": seed,
                        "budget": args.budget,
                        "elapsed_s": round(time.perf_counter() - started, 2),
                    }
                )
                with out.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                curve = best_curve(record["told"], record["optimum"])
                print(
                    f"{name} {arm} seed {seed}: {len(curve)} evals, sim {curve[-1][0]:.0f} s, "
                    f"best/opt {curve[-1][1]:.3f}, {record['elapsed_s']} s",
                    flush=True,
                )


def _geo(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v) and v > 0]
    return math.exp(sum(map(math.log, finite)) / len(finite)) if len(finite) == len(values) and finite else math.inf


def table(args: argparse.Namespace) -> str:
    records = [_expand(json.loads(line)) for p in args.results for line in _read_text(Path(p)).splitlines()]
    runs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        runs[(r["problem"], r["arm"])].append(r)
    problems = sorted({r["problem"] for r in records})
    arms = [a for a in [*ARMS, *KT_ARMS] if any((p, a) in runs for p in problems)]
    lines = ["# Time to a tuned kernel (simulated clock)", ""]
    # median simulated seconds to each target, per space and arm; "sequential's final quality" is
    # the median over its seeds of best/optimum at the end of its budget (always reached by it)
    final = {
        p: statistics.median(best_curve(r["told"], r["optimum"])[-1][1] for r in runs[(p, "sequential")])
        for p in problems
        if runs.get((p, "sequential"))
    }
    for target in (*TARGETS, None):
        title = f"{target}x the optimum" if target else "the sequential run's final median best/optimum"
        lines += [f"## Median simulated time (s) to {title}", ""]
        if target is None:
            lines += ["Per space: " + ", ".join(f"{p} {v:.3f}" for p, v in final.items()), ""]
        lines += ["| space | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
        speedups: dict[str, list[float]] = defaultdict(list)
        unreached = []
        for p in problems:
            goal = target if target is not None else final.get(p, math.nan)
            medians = {}
            for a in arms:
                times = [time_to(best_curve(r["told"], r["optimum"]), goal) for r in runs.get((p, a), [])]
                medians[a] = statistics.median(times) if times else math.nan
            lines.append(f"| {p} | " + " | ".join(_seconds(medians[a]) for a in arms) + " |")
            if not math.isfinite(medians.get("sequential", math.nan)):
                unreached.append(p)
                continue
            for a in arms:
                speedups[a].append(medians["sequential"] / medians[a] if math.isfinite(medians[a]) else 0.0)
        cells = []
        for a in arms:
            geo = _geo(speedups[a])
            cells.append(f"{geo:.2f}x" if math.isfinite(geo) else "– (its median not reached on a space)")
        lines.append(
            f"| **geo-mean speed-up vs sequential ({len(problems) - len(unreached)} spaces)** | "
            + " | ".join(cells)
            + " |"
        )
        if unreached:
            lines.append("")
            lines.append(
                f"Left out of the geo-mean: {', '.join(unreached)} (the sequential median does not reach the target within its budget)."
            )
        lines.append("")
    # the summary: throughput, and speed-ups over the spaces where both medians are reached
    lines += [
        "## Summary: speed-up against sequential bayestune (geo-mean over spaces)",
        "",
        "Throughput: median simulated time for the whole budget. Time to a target: over the spaces where "
        "both the sequential median and the arm's median reach it within the budget (the others listed).",
        "",
        "| arm | throughput | to 1.05x | to 1.02x |",
        "|---|---|---|---|",
    ]
    for a in arms:
        if a == "sequential" or not all(runs.get((p, a)) and runs.get((p, "sequential")) for p in problems):
            continue
        throughput = _geo(
            [
                statistics.median(r["told"][-1]["t"] for r in runs[(p, "sequential")])
                / statistics.median(r["told"][-1]["t"] for r in runs[(p, a)])
                for p in problems
            ]
        )
        cells = [f"{throughput:.2f}x"]
        for target in TARGETS:
            ratios, out = [], []
            for p in problems:
                seq, mine = (
                    statistics.median(time_to(best_curve(r["told"], r["optimum"]), target) for r in runs[(p, x)])
                    for x in ("sequential", a)
                )
                if math.isfinite(seq) and math.isfinite(mine):
                    ratios.append(seq / mine)
                else:
                    out.append(p)
            cells.append(f"{_geo(ratios):.2f}x ({len(ratios)} spaces" + (f"; not {', '.join(out)})" if out else ")"))
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines.append("")
    # best/optimum at fixed wall times: the sequential median time to 1.05 and fractions of it
    lines += [
        "## Geo-mean best/optimum at fixed simulated times",
        "",
        "Times per space: the sequential arm's median time at 20 / 40 / 60 / 100 evaluations.",
        "",
        "| arm | " + " | ".join(f"t(seq@{n})" for n in CHECKPOINTS) + " |",
        "|---|" + "---|" * len(CHECKPOINTS),
    ]
    for a in arms:
        cells = []
        for n in CHECKPOINTS:
            ratios = []
            for p in problems:
                seq = runs.get((p, "sequential"), [])
                at = statistics.median(best_curve(r["told"], r["optimum"])[min(n, len(r["told"])) - 1][0] for r in seq)
                ratios.append(
                    statistics.median(
                        ratio_at_time(best_curve(r["told"], r["optimum"]), at) for r in runs.get((p, a), [])
                    )
                    if runs.get((p, a))
                    else math.nan
                )
            cells.append(f"{_geo(ratios):.3f}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Geo-mean best/optimum per evaluation (quality, not time)",
        "",
        "| arm | " + " | ".join(f"@{n}" for n in CHECKPOINTS) + " |",
        "|---|" + "---|" * len(CHECKPOINTS),
    ]
    for a in arms:
        cells = []
        for n in CHECKPOINTS:
            ratios = [
                statistics.mean(ratio_at_evaluation(best_curve(r["told"], r["optimum"]), n) for r in runs[(p, a)])
                for p in problems
                if runs.get((p, a))
            ]
            cells.append(f"{_geo(ratios):.4f}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Device time spent (first 100 evaluations), early stop against full repeats",
        "",
        "| space | arm | device s used | device s without early stop | saved |",
        "|---|---|---|---|---|",
    ]
    for p in problems:
        for a in arms:
            if not ARMS.get(a, Arm("")).early_stop or not runs.get((p, a)):
                continue
            used = statistics.mean(sum(e["device_s"] for e in r["told"][:100]) for r in runs[(p, a)])
            full = statistics.mean(sum(e["device_full_s"] for e in r["told"][:100]) for r in runs[(p, a)])
            lines.append(f"| {p} | {a} | {used:.1f} | {full:.1f} | {100 * (1 - used / full):.0f} % |")
    return "\n".join(lines) + "\n"


def _expand(record: dict[str, Any]) -> dict[str, Any]:
    """A record whose evaluations were stored as rows under ``told_columns`` (the committed,
    compacted file) with its evaluations as mappings again."""
    columns = record.pop("told_columns", None)
    if columns:
        record["told"] = [dict(zip(columns, row)) for row in record["told"]]
    return record


def _read_text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _seconds(value: float) -> str:
    return "–" if math.isnan(value) else ("not reached" if math.isinf(value) else f"{value:.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.wallclock", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--problems", default=None, help="comma list (default: every GPU cache)")
    r.add_argument("--arms", default=",".join([*ARMS, *KT_ARMS]))
    r.add_argument("--seeds", default="10", help="N (seeds 0..N-1), A-B, or a comma list")
    r.add_argument("--budget", type=int, default=150)
    add_output_option(r, "wallclock", "runs.jsonl")
    t = sub.add_parser("table")
    t.add_argument("results", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args)
    else:
        sys.stdout.write(table(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
