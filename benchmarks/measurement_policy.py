"""Is the declared best still the best when re-measured? Live Halide schedules and a live Kernel
Tuner OpenCL kernel, with and without the measurement policy (repeats + early abort, then the
interleaved top-k re-measurement); and, with the ``simulated`` sub-command, whole tuning runs on
simulated noisy and flaky black boxes with a known truth (:mod:`benchmarks.confirmation`).

Simulated (fast, one process; the true regret of the reported winner, interval coverage and
black-box calls of the default settings, racing without confirmation, no racing or confirmation,
and the full noise-aware settings, at σ = 0.3 and 0.15, with and without 7 % crashes)::

    python -m benchmarks.measurement_policy simulated --seeds 0-199 --out benchmarks/results/measurement/noise_levels.jsonl.gz

takes :mod:`benchmarks.confirmation`'s options (``--problems``, ``--arms``, ``--seeds``, ``--out``).
The rest of this docstring is the live benchmark.

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
import sys
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
from benchmarks.measurement_policy_table import ROUNDS, TOP_K, markdown
from benchmarks.outputs import SCRATCH
from benchmarks.problem import config_key

RESULTS = Path(__file__).resolve().parent / "results"
PIPELINES = ("halide_blur", "halide_matmul", "kt_matmul")
POLICY = MeasurementPolicy(repeats=3, max_repeats=6, precision=0.03, statistic="mean", early_abort=True)
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


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["simulated"]:
        from benchmarks import confirmation

        confirmation.main(argv[1:], prog="python -m benchmarks.measurement_policy simulated")
        return
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="`simulated --help`: the simulated black boxes' options"
    )
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
