"""Is the declared best still the best when re-measured? Live Halide schedules and a live Kernel
Tuner OpenCL kernel, with and without the measurement policy (repeats + early abort, then the
interleaved top-k re-measurement).

For each (pipeline, seed): a pool of ``--pool`` good schedules is drawn from the pipeline's
measurement cache (``benchmarks/results/<pipeline>.cache.jsonl``, the schedules earlier tuning
runs found fast: the close race where noise decides; a Kernel Tuner kernel's cache is screened
once, every valid configuration measured). Two arms measure the same pool in the same order,
each from a fresh evaluator (Halide server or Kernel Tuner worker):

``plain``
    one evaluation per schedule (the evaluator's own measurement: Halide compiles, verifies,
    runs once to warm up, then takes the minimum of 5-50 timed runs; Kernel Tuner compiles,
    checks the answer and takes the mean of 7 runs), the declared best is the lowest value;
``policy``
    :class:`~bayestune.measurement.policy.MeasuredEvaluator` with ``POLICY`` (3 evaluations,
    up to 6 until the 95 % interval of the mean is within ±3 %, early abort when clearly worse
    than the incumbent), then :func:`~bayestune.measurement.remeasure.remeasure_top` of the best
    ``TOP_K`` in ``ROUNDS`` interleaved rounds; the declared best is its winner.

Ground truth: every schedule of the pool is then measured ``--truth-rounds`` (30) more times in
interleaved rounds; the true best is the one with the lowest median. A record says whether each
arm's declared best is the true best, its regret (its true median over the best true median,
minus 1), and what each arm cost: evaluations and wall-clock seconds, with the time breakdown
(compile / run / other) an evaluator reports through ``Result.timings``.

Pipelines: ``halide_blur``, ``halide_matmul`` (live Halide) and ``kt_matmul`` (a live Kernel Tuner
OpenCL kernel, see :mod:`benchmarks.kernel_tuner_live`).

Run (slow; the machine's load is the noise; at normal priority, so that the measurements see the
machine as a tuning run would)::

    PYTHONPATH=src python -m benchmarks.measurement_policy --seeds 0-9

It appends one JSON line per (pipeline, seed) to ``benchmarks/results/measurement/measurement_policy.jsonl``
(resumable: done pairs are skipped) and rewrites ``benchmarks/results/measurement/measurement_policy.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.evaluators.base import Evaluator, evaluate_safely
from bayestune.measurement.build import for_remeasurement
from bayestune.measurement.policy import MeasuredEvaluator
from bayestune.measurement.remeasure import interleaved_order, remeasure_top
from bayestune.measurement.timing import time_breakdown
from bayestune.measurement_spec import MeasurementPolicy
from bayestune.objectives import Objective
from bayestune.storage import MemoryJournal
from bayestune.trial import Result, TrialStatus
from benchmarks.jsonl import append_record, load_records
from benchmarks.outputs import SCRATCH
from benchmarks.problem import config_key

RESULTS = Path(__file__).resolve().parent / "results"
PIPELINES = ("halide_blur", "halide_matmul", "kt_matmul")
POLICY = MeasurementPolicy(repeats=3, max_repeats=6, precision=0.03, statistic="mean", early_abort=True)
TOP_K = 3
ROUNDS = 5
#: A declared best whose true median is within this fraction of the true best counts as "near".
NEAR = 0.02
OBJECTIVE = Objective("time")


class PhasedHalide(Evaluator):
    """The benchmark's Halide evaluator reporting where its time went (what an evaluator should
    set): ``Result.timings = {"compile": s, "run": s}``; ``run`` is the call's wall time after
    compiling (verification, warm-up and timed runs, process fork). Counts its calls. The
    Halide server starts here, so its 1-2 s start-up is not charged to either arm."""

    def __init__(self, pipeline: str) -> None:
        from benchmarks.halide_problems import HALIDE_PROBLEMS, HalideEvaluator

        super().__init__(["time"])
        self.inner = HalideEvaluator(pipeline, HALIDE_PROBLEMS[pipeline][0]())
        self.inner._start()  # noqa: SLF001 - the benchmark's own evaluator; start-up outside the clock
        self.calls = 0

    def evaluate(self, config: Mapping[str, Any]) -> Result:
        self.calls += 1
        started = time.perf_counter()
        result = self.inner.evaluate(config)
        wall = time.perf_counter() - started
        if result.status is not TrialStatus.OK:
            return result
        compile_s = float(result.values.get("compile_s", 0.0))
        return Result(
            values={"time": result.values["time"]}, timings={"compile": compile_s, "run": max(wall - compile_s, 0.0)}
        )

    def close(self) -> None:
        self.inner.close()


def black_box(pipeline: str) -> Evaluator:
    """A fresh live evaluator: a Halide server, or a Kernel Tuner OpenCL worker (``kt_*``)."""
    if pipeline.startswith("kt_"):
        from benchmarks.kernel_tuner_live import KernelTunerEvaluator

        return KernelTunerEvaluator(pipeline)
    return PhasedHalide(pipeline)


def cache_of(pipeline: str) -> Path:
    """The measurement cache the pools are drawn from (a Kernel Tuner kernel is screened into one,
    every valid configuration measured once, when it has none)."""
    if pipeline.startswith("kt_"):
        from benchmarks.kernel_tuner_live import cache_file, screen

        path = cache_file(pipeline)
        return path if path.exists() else screen(pipeline, path)
    from benchmarks.halide_problems import cache_path

    return cache_path(pipeline) or RESULTS / f"{pipeline}.cache.jsonl"


def candidate_pool(pipeline: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` schedules drawn (seeded) from the ``3 * size`` fastest distinct ones in the cache."""
    from benchmarks.kernel_tuner_live import fastest as fastest_in

    path = cache_of(pipeline)
    best = fastest_in(path)
    fastest = sorted(best, key=best.__getitem__)[: 3 * size]
    if len(fastest) < size:
        raise SystemExit(f"{path} holds only {len(fastest)} measured schedules; need {size}")
    chosen = np.random.default_rng(seed).choice(len(fastest), size=size, replace=False)
    return [json.loads(fastest[i]) for i in chosen]


def run_arm(pool: Sequence[Mapping[str, Any]], pipeline: str, *, with_policy: bool) -> dict[str, Any]:
    """Measure the pool as one arm does; the declared best's key, what it cost, where time went."""
    box = black_box(pipeline)
    journal = MemoryJournal()
    started = time.perf_counter()
    try:
        evaluator: Evaluator = MeasuredEvaluator(box, POLICY) if with_policy else box
        runs = []
        for config in pool:
            t0 = time.time()
            result = evaluate_safely(evaluator, config)
            journal.record(config, result, started_at=t0, finished_at=time.time())
            runs.append(len(result.repeats.get("time", ())) or 1)
        best = journal.best("time", k=1)
        declared = best[0] if best else None
        winner_interval = None
        if with_policy and declared is not None:
            outcome = remeasure_top(
                journal, for_remeasurement(evaluator), OBJECTIVE, k=TOP_K, rounds=ROUNDS, statistic="median"
            )
            if outcome.winner is not None:
                declared = next(t for t in journal.trials() if t.trial_id == outcome.winner.trial_id)
                winner_interval = [outcome.winner.low, outcome.winner.high]
    finally:
        box.close()
    return {
        "declared": config_key(declared.config) if declared else None,
        "declared_value": declared.values["time"] if declared else None,
        "winner_interval": winner_interval,
        "evaluations": box.calls,
        "runs_per_schedule": runs,
        "seconds": time.perf_counter() - started,
        "time_breakdown": time_breakdown(journal.trials()),
    }


def ground_truth(pool: Sequence[Mapping[str, Any]], pipeline: str, rounds: int) -> dict[str, list[float]]:
    """Every schedule of the pool measured ``rounds`` times, interleaved and rotated per round."""
    box = black_box(pipeline)
    samples: dict[str, list[float]] = {config_key(c): [] for c in pool}
    try:
        for round_number in range(1, rounds + 1):
            for i in interleaved_order(list(range(len(pool))), round_number):
                result = evaluate_safely(box, pool[i])
                if result.status is TrialStatus.OK:
                    samples[config_key(pool[i])].append(result.values["time"])
    finally:
        box.close()
    return samples


def judge(arm: dict[str, Any], truth: Mapping[str, float]) -> dict[str, Any]:
    best = min(truth.values())
    declared = truth.get(arm["declared"], math.nan) if arm["declared"] else math.nan
    return {
        **arm,
        "true_median": declared,
        "is_best": bool(declared == best),
        "regret": declared / best - 1.0 if math.isfinite(declared) else None,
        "near_best": bool(math.isfinite(declared) and declared <= best * (1 + NEAR)),
    }


def one_pair(pipeline: str, seed: int, pool_size: int, truth_rounds: int) -> dict[str, Any]:
    pool = candidate_pool(pipeline, pool_size, seed)
    load_start = list(__import__("os").getloadavg())
    plain = run_arm(pool, pipeline, with_policy=False)
    policy = run_arm(pool, pipeline, with_policy=True)
    started = time.perf_counter()
    samples = ground_truth(pool, pipeline, truth_rounds)
    truth_seconds = time.perf_counter() - started
    truth = {k: float(np.median(v)) for k, v in samples.items() if v}
    return {
        "pipeline": pipeline,
        "seed": seed,
        "pool": [config_key(c) for c in pool],
        "truth_rounds": truth_rounds,
        "truth_median": truth,
        "truth_samples": samples,
        "truth_spread": {
            k: [float(np.percentile(v, 10)), float(np.percentile(v, 90))] for k, v in samples.items() if v
        },
        "true_best": min(truth, key=truth.__getitem__),
        "plain": judge(plain, truth),
        "policy": judge(policy, truth),
        "policy_settings": {
            "repeats": POLICY.repeats,
            "max_repeats": POLICY.max_repeats,
            "precision": POLICY.precision,
            "statistic": POLICY.statistic,
            "early_abort": POLICY.early_abort,
            "remeasure_top": TOP_K,
            "rounds": ROUNDS,
        },
        "truth_seconds": truth_seconds,
        "load_average_start": load_start,
        "load_average": list(__import__("os").getloadavg()),
        "finished_at": time.time(),
    }


#: What each pipeline is, for the report.
PIPELINE_NOTES = {
    "halide_blur": "Halide 21 JIT on the CPU, separable 3x3 blur of a 2048x2048 float32 image; time = min of 5-50 runs after a warm-up, in a forked process",
    "halide_matmul": "Halide 21 JIT on the CPU, 256x256 float32 matmul; time = min of 5-50 runs after a warm-up, in a forked process",
    "kt_matmul": (
        "Kernel Tuner 1.5 tiled matmul 256x256 in OpenCL on PoCL (CPU), through bayestune's Kernel Tuner "
        "worker; every evaluation compiles, checks the answer against NumPy and times 7 runs (mean); pools "
        "from the 15 fastest of the 33 valid configurations (screened once into kt_matmul.cache.jsonl)"
    ),
}
#: The commands that produced benchmarks/results/measurement/measurement_policy.jsonl (in order).
COMMANDS = (
    "PYTHONPATH=src nice -n 10 python -m benchmarks.measurement_policy --seeds 0-9",
    "PYTHONPATH=src python -m benchmarks.measurement_policy --pipelines halide_blur,halide_matmul --seeds 4-9",
    "PYTHONPATH=src python -m benchmarks.measurement_policy --pipelines kt_matmul --seeds 0-9",
    "PYTHONPATH=src python -m benchmarks.measurement_policy --pipelines halide_blur,halide_matmul --seeds 10-13",
    "PYTHONPATH=src python -m benchmarks.measurement_policy --pipelines kt_matmul --seeds 10-13",
    "PYTHONPATH=src python -m benchmarks.measurement_policy --pipelines kt_matmul --seeds 14-17",
)
#: What the commands' list does not say.
COMMANDS_NOTE = (
    "The first command is an earlier session's (Halide only then; as its docstring said, at nice 10; "
    "stopped after seed 3, load 16-36); the others ran at normal priority, the Kernel Tuner and the "
    "Halide ones concurrently. Only kt_matmul seeds 10-17 keep their truth samples."
)


def _loads(rows: Sequence[dict[str, Any]]) -> list[float]:
    """The 1-minute load averages recorded at the start and the end of the repetitions."""
    return [r[key][0] for r in rows for key in ("load_average_start", "load_average") if r.get(key)]


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Rates, mean regrets and mean costs of both arms over some repetitions."""

    def mean(arm: str, key: str) -> float:
        values = [r[arm][key] for r in rows if r[arm][key] is not None]
        return statistics.fmean(values) if values else math.nan

    out: dict[str, Any] = {
        "reps": len(rows),
        "loads": _loads(rows),
        "truth_rounds": sorted({r.get("truth_rounds") for r in rows if r.get("truth_rounds")}),
        "pool": sorted({len(r["pool"]) for r in rows if r.get("pool")}),
    }
    for arm in ("plain", "policy"):
        out[arm] = {
            "best": sum(bool(r[arm]["is_best"]) for r in rows),
            "near": sum(bool(r[arm]["near_best"]) for r in rows),
            "regret": mean(arm, "regret"),
            "seconds": mean(arm, "seconds"),
            "evaluations": mean(arm, "evaluations"),
        }
    out["ratio"] = out["policy"]["seconds"] / out["plain"]["seconds"]
    out["policy_only"] = sum(bool(r["policy"]["is_best"] and not r["plain"]["is_best"]) for r in rows)
    out["plain_only"] = sum(bool(r["plain"]["is_best"] and not r["policy"]["is_best"]) for r in rows)
    out["sign_p"] = sign_test(out["policy_only"], out["plain_only"])
    return out


def sign_test(a: int, b: int) -> float:
    """Two-sided exact sign test of ``a`` vs ``b`` discordant pairs (1.0 when there are none)."""
    n = a + b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a, b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def truth_stability(record: Mapping[str, Any], resamples: int = 1000) -> float | None:
    """How sure the truth is: the fraction of bootstrap resamples of every configuration's truth
    samples in which the recorded true best still has the lowest median (None: no samples kept)."""
    samples = record.get("truth_samples")
    if not samples:
        return None
    keys = [k for k, v in samples.items() if v]
    rng = np.random.default_rng(0)
    medians = np.array(
        [[np.median(rng.choice(samples[k], size=len(samples[k]))) for k in keys] for _ in range(resamples)]
    )
    return float(np.mean(medians.argmin(axis=1) == keys.index(record["true_best"])))


def markdown(records: Sequence[dict[str, Any]]) -> str:
    """The table: per pipeline, how often each arm's declared best is the true best, and its cost."""
    lines = [
        "# Measurement policy on live pipelines (Halide, Kernel Tuner OpenCL)",
        "",
        "Is the declared best still the best when every candidate is re-measured 30 times? For each",
        "repetition a pool of fast configurations is drawn (seeded) from the pipeline's measurement cache,",
        "and both arms measure the same pool, each from a fresh evaluator. `plain` = one evaluation per",
        "configuration, lowest value wins; `policy` = repeats (mean of 3-6, until ±3 % at 95 %, early abort",
        f"when clearly worse than the incumbent) + top-{TOP_K} re-measurement in {ROUNDS} interleaved rounds "
        "(median). Truth: every configuration of the pool re-measured in interleaved, rotated rounds; the true "
        "best has the lowest median. `within 2 %`: the declared best's true median is at most 2 % above "
        "the true best's; regret = declared's true median / true best's - 1. `s / rep`: wall-clock seconds "
        "an arm took (evaluator start-up excluded). Load = the machine's 1-minute load average (2 cores) "
        "at the start and end of the repetitions (min-max): other engineers' benchmarks shared the machine.",
        "",
        "Pipelines:",
        "",
    ]
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["pipeline"], []).append(r)
    lines += [f"- `{name}`: {PIPELINE_NOTES.get(name, name)}." for name in groups]
    lines += [
        "",
        "| pipeline | reps | plain: true best | policy: true best | plain: within 2 % | policy: within 2 % "
        "| plain: mean regret | policy: mean regret | plain: s / rep | policy: s / rep | cost ratio | "
        "plain evals | policy evals | pool x truth rounds | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if len(groups) > 1:
        groups["all"] = list(records)
    summaries = {name: summarize(rows) for name, rows in groups.items()}
    for name, m in summaries.items():
        n, pl, po = m["reps"], m["plain"], m["policy"]
        loads = f"{min(m['loads']):.0f}-{max(m['loads']):.0f}" if m["loads"] else "?"
        shape = "/".join(map(str, m["pool"])) + " x " + "/".join(map(str, m["truth_rounds"]))
        lines.append(
            f"| {name} | {n} | {pl['best']}/{n} | {po['best']}/{n} | {pl['near']}/{n} | {po['near']}/{n} | "
            f"{100 * pl['regret']:.1f} % | {100 * po['regret']:.1f} % | "
            f"{pl['seconds']:.0f} | {po['seconds']:.0f} | {m['ratio']:.1f}x | "
            f"{pl['evaluations']:.0f} | {po['evaluations']:.0f} | {shape} | {loads} |"
        )
    lines += ["", "## What the policy buys and what it costs", ""]
    for name, m in summaries.items():
        n, pl, po = m["reps"], m["plain"], m["policy"]
        lines.append(
            f"- **{name}** ({n} repetitions): the declared best is the true best in {po['best']}/{n} "
            f"with the policy vs {pl['best']}/{n} without; within 2 % of it in {po['near']}/{n} vs "
            f"{pl['near']}/{n}; mean regret {100 * po['regret']:.1f} % vs {100 * pl['regret']:.1f} %. "
            f"Only the policy right in {m['policy_only']}, only plain right in {m['plain_only']} "
            f"(two-sided sign test p = {m['sign_p']:.2f}). "
            f"Cost: {po['seconds']:.0f} s vs {pl['seconds']:.0f} s per pool of {'/'.join(map(str, m['pool']))}"
            f" ({m['ratio']:.1f}x the wall-clock time, {po['evaluations']:.0f} vs {pl['evaluations']:.0f} "
            "evaluations)."
        )
    fewest = min(m["reps"] for m in summaries.values()) if summaries else 1
    lines += [
        "",
        f"With this few repetitions a rate is coarse (one repetition moves a pipeline's rate by up to "
        f"{100 / fewest:.0f} points); the per-repetition rows below show which pools were close races.",
        "",
    ]
    unbounded = sum(
        1
        for r in records
        if r["policy"].get("winner_interval") and not all(map(math.isfinite, r["policy"]["winner_interval"]))
    )
    lines += [
        "Caveats:",
        "",
        f"- The declared winner's 95 % interval was unbounded in {unbounded} of {len(records)} repetitions: "
        f"the top-{TOP_K} re-measurement takes {ROUNDS} rounds and the median's distribution-free interval "
        "needs at least 6 runs (`bayestune.measurement.statistics`). The winner is still chosen by the median; "
        "only the reported interval is uninformative. A next run should use 8 or more rounds.",
        "- `s / rep` and the cost ratio count the arms only: the 30-round truth, and the start-up of the "
        "evaluators (Halide server, Kernel Tuner worker with its warm-up run) are not charged to either.",
    ]
    for name, m in summaries.items():
        rows = groups[name]
        ratios = [
            r["truth_spread"][r["true_best"]][1] / r["truth_spread"][r["true_best"]][0]
            for r in rows
            if r.get("truth_spread", {}).get(r["true_best"])
        ]
        if name != "all" and ratios and m["loads"]:
            lines.append(
                f"- `{name}`: the true best's p90 / p10 over its truth rounds is {min(ratios):.2f}-"
                f"{max(ratios):.2f} (median {statistics.median(ratios):.2f}) at a 1-minute load of "
                f"{min(m['loads']):.0f}-{max(m['loads']):.0f} on 2 cores."
            )
    lines += [
        "- `kt_matmul`'s value is Kernel Tuner's mean of 7 runs, so a descheduled run lands in it: its noise "
        "is far wider than Halide's min-of-runs, its rates and regrets the noisiest here (`truth stable` "
        "shows, where the truth samples were kept, how often a bootstrap of the truth agrees).",
        "",
    ]
    breakdown: dict[str, dict[str, float]] = {"plain": {}, "policy": {}}
    for r in records:
        for arm in breakdown:
            for phase, seconds in r[arm]["time_breakdown"].items():
                breakdown[arm][phase] = breakdown[arm].get(phase, 0.0) + seconds
    lines += [
        "Where the arms' time went (seconds, all repetitions; the policy's re-measurement rounds are "
        "not trials and not in it):",
        "",
    ]
    for arm, phases in breakdown.items():
        lines.append(f"- {arm}: " + ", ".join(f"{p} {s:.0f}" for p, s in phases.items()))
    lines += [
        "",
        "## Repetitions",
        "",
        "| pipeline | seed | plain: best? | policy: best? | plain: regret | policy: regret | plain s | policy s "
        "| truth s | true best's median, p10-p90 spread | truth stable | load start / end |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:

        def regret(arm: str, r: dict = r) -> str:
            value = r[arm]["regret"]
            return "-" if value is None else f"{100 * value:.1f} %"

        spread = (r.get("truth_spread") or {}).get(r["true_best"])
        best = r["truth_median"][r["true_best"]]
        spread_text = f"{best:.3g} ({spread[0]:.3g}-{spread[1]:.3g})" if spread else f"{best:.3g}"
        truth_s = f"{r['truth_seconds']:.0f}" if r.get("truth_seconds") is not None else "-"
        start = f"{r['load_average_start'][0]:.1f}" if r.get("load_average_start") else "-"
        stable = truth_stability(r)
        stable_text = "-" if stable is None else f"{100 * stable:.0f} %"
        lines.append(
            f"| {r['pipeline']} | {r['seed']} | {'yes' if r['plain']['is_best'] else 'no'} | "
            f"{'yes' if r['policy']['is_best'] else 'no'} | {regret('plain')} | {regret('policy')} | "
            f"{r['plain']['seconds']:.0f} | {r['policy']['seconds']:.0f} | {truth_s} | {spread_text} | {stable_text} | "
            f"{start} / {r['load_average'][0]:.1f} |"
        )
    lines += (
        ["", "## Commands", "", "```"]
        + list(COMMANDS)
        + [
            "```",
            "",
            COMMANDS_NOTE,
            "",
            "The file is resumable (done pipeline/seed pairs are skipped), so "
            "`PYTHONPATH=src python -m benchmarks.measurement_policy --seeds 0-13 --out <new file>` runs the same "
            "protocol on all three pipelines in one go; the md is rewritten from the JSON lines after every "
            "repetition (`benchmarks/results/measurement/measurement_policy.jsonl`).",
        ]
    )
    return "\n".join(lines) + "\n"


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", default=",".join(PIPELINES))
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-9 or 0,3,5")
    parser.add_argument("--pool", type=int, default=5, help="schedules per repetition")
    parser.add_argument("--truth-rounds", type=int, default=30)
    parser.add_argument("--out", default=str(SCRATCH / "measurement" / "measurement_policy.jsonl"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    done = {(r["pipeline"], r["seed"]) for r in load_records(out)}
    for seed in parse_seeds(args.seeds):
        for pipeline in args.pipelines.split(","):
            if (pipeline, seed) in done:
                continue
            record = one_pair(pipeline, seed, args.pool, args.truth_rounds)
            append_record(out, record)
            print(
                f"{pipeline} seed {seed}: plain {'best' if record['plain']['is_best'] else 'not best'} "
                f"({record['plain']['seconds']:.0f} s), policy {'best' if record['policy']['is_best'] else 'not best'}"
                f" ({record['policy']['seconds']:.0f} s)",
                flush=True,
            )
            out.with_suffix(".md").write_text(markdown(load_records(out)))


if __name__ == "__main__":
    main()
