"""Is the number a run reports the number the machine delivers? Simulated noisy black boxes with a
known truth, run through :func:`bayestune.tune` as a user would (issue 26).

Problems: 512 configurations (three ordinal parameters of 8 values) whose true run time is a
smooth bowl with a few near-ties, measured with multiplicative lognormal noise (σ = 0.3 on the
log scale: a shared, busy machine); ``flaky`` also crashes 7 % of the calls at random. The true
median of a configuration is its true time (the noise's median is 1).

Arms, each a default ``bo`` run of 30 evaluations (plus what the arm adds):

``none``
    ``confirm=False``, ``race: false``: the run reports its best single sample (the behaviour
    before issue 26);
``no_race``
    ``race: false``: one run per configuration, then the best 2 and the default configuration
    re-measured in 6 interleaved rounds — the default before racing;
``default``
    no measurement section: racing (:mod:`bayestune.measurement.racing`) and the default
    confirmation (the best 2 and the default configuration in 6 rounds);
``race_top4``, ``race_top6``, ``race_rounds8``
    racing with the best 4 or 6 confirmed, or the best 2 in 8 rounds (candidates for the default);
``noise_aware``
    the measurement settings of docs/measurement.md: median of 3 to 10 repeats until ±2 %, early abort, the
    best 3 and the default configuration re-measured in 8 rounds.

Per run: the true regret of the reported winner (its true time over the optimum's, minus 1),
whether the reported interval covers the winner's true median, whether the speedup interval
covers the true speedup over the default configuration, and the black box's calls.

    python -m benchmarks.confirmation --seeds 0-19

appends one JSON line per (problem, arm, seed) to ``benchmarks/results/measurement/confirmation_racing.jsonl``
(resumable) and writes ``benchmarks/results/measurement/confirmation_racing.md`` (``confirmation.md`` holds the
figures from before racing, whose ``default`` arm is this one's ``no_race``).
"""

from __future__ import annotations

import argparse
import importlib
import math
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from bayestune.scenario import scenario_from_dict
from bayestune.tuning import tune
from benchmarks.jsonl import append_record, load_records
from benchmarks.outputs import SCRATCH

OUT = SCRATCH / "measurement" / "confirmation_racing.jsonl"
VALUES = [1, 2, 3, 4, 5, 6, 7, 8]
SIGMA = 0.3
FLAKY = 0.07
BUDGET = 30
ARMS: dict[str, tuple[dict[str, Any] | None, bool]] = {
    "none": ({"race": False}, False),
    "no_race": ({"race": False, "remeasure_top": 2, "remeasure_rounds": 6}, True),
    "default": (None, True),
    "race_top4": ({"remeasure_top": 4, "remeasure_rounds": 6}, True),
    "race_top6": ({"remeasure_top": 6, "remeasure_rounds": 6}, True),
    "race_rounds8": ({"remeasure_top": 2, "remeasure_rounds": 8}, True),
    "noise_aware": (
        {
            "warmup": 0,
            "repeats": 3,
            "max_repeats": 10,
            "precision": 0.02,
            "statistic": "median",
            "early_abort": True,
            "remeasure_top": 3,
        },
        True,
    ),
}
PROBLEMS = ("noisy", "flaky")


def true_time(config: dict[str, Any]) -> float:
    """A bowl in (a, b, c) with its optimum at (6, 3, 5) and two near-tie basins (within 3-6 %)."""
    a, b, c = config["a"], config["b"], config["c"]
    bowl = 1.0 + 0.04 * (a - 6) ** 2 + 0.06 * (b - 3) ** 2 + 0.03 * (c - 5) ** 2
    ties = (
        1.0
        - 0.06 * math.exp(-((a - 2) ** 2 + (b - 7) ** 2 + (c - 2) ** 2))
        - 0.03 * math.exp(-((a - 7) ** 2 + (b - 2) ** 2 + (c - 7) ** 2))
    )
    return bowl * ties


def optimum() -> float:
    return min(true_time({"a": a, "b": b, "c": c}) for a in VALUES for b in VALUES for c in VALUES)


class NoisyBox:
    """The black box: the true time times lognormal noise; with ``flaky``, a crash now and then."""

    def __init__(self, seed: int, flaky: bool) -> None:
        self.rng, self.flaky, self.calls = np.random.default_rng(10_000 + seed), flaky, 0

    def __call__(self, config: dict[str, Any]) -> float:
        self.calls += 1
        if self.flaky and self.rng.random() < FLAKY:
            raise RuntimeError("simulated crash")
        return true_time(config) * float(np.exp(self.rng.normal(0.0, SIGMA)))


_BOX: NoisyBox | None = None


def measure(config: dict[str, Any]) -> float:
    """The scenario's black box (``benchmarks.confirmation:measure``)."""
    assert _BOX is not None
    return _BOX(config)


def run_one(problem: str, arm: str, seed: int) -> dict[str, Any]:
    measurement, confirm = ARMS[arm]
    # the scenario imports this module by name: under ``python -m`` that is another module object
    box = importlib.import_module("benchmarks.confirmation")._BOX = NoisyBox(seed, problem == "flaky")
    data = {
        "name": f"{problem}-{arm}",
        "budget": BUDGET,
        "seed": seed,
        "parameters": [{"name": n, "type": "ordinal", "values": VALUES, "default": 4} for n in "abc"],
        "objectives": ["time"],
        "blackbox": {"python": "benchmarks.confirmation:measure"},
    }
    if measurement is not None:
        data["measurement"] = measurement
    scenario = scenario_from_dict(data, source="<benchmark>")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tune(scenario, Path(tmp) / "run.db", confirm=confirm)
    best = optimum()
    record: dict[str, Any] = {
        "problem": problem,
        "arm": arm,
        "seed": seed,
        "calls": box.calls,
        "evaluations": result.optimizer.n_evaluated,
    }
    outcome = result.remeasured
    winner = outcome.winner if outcome is not None else None
    trials = {t.trial_id: t for t in result.optimizer.trials}
    chosen = trials[winner.trial_id] if winner is not None else result.best
    if chosen is None:
        return {**record, "regret": None}
    truth = true_time(chosen.config)
    record.update(
        regret=truth / best - 1.0, reported=(winner.value if winner is not None else chosen.values["time"]), truth=truth
    )
    if winner is not None and math.isfinite(winner.low) and math.isfinite(winner.high):
        record["covered"] = bool(winner.low <= truth <= winner.high)
    base = outcome.baseline if outcome is not None else None
    if base is not None and outcome.speedup is not None and math.isfinite(outcome.speedup[1]):
        true_speedup = true_time(trials[base.trial_id].config) / truth
        record["speedup_covered"] = bool(outcome.speedup[1] <= true_speedup <= outcome.speedup[2])
    return record


def table(records: list[dict[str, Any]]) -> str:
    lines = [
        "| problem | arm | runs | mean true regret | median | winner's interval covers | "
        "speedup interval covers | black-box calls |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def share(xs: list) -> str:
        return f"{np.mean(xs):.1%} of {len(xs)}" if xs else "-"

    for problem in PROBLEMS:
        for arm in ARMS:
            mine = [r for r in records if r["problem"] == problem and r["arm"] == arm and r.get("regret") is not None]
            if not mine:
                continue
            regrets = [r["regret"] for r in mine]
            covered = [r["covered"] for r in mine if "covered" in r]
            speed = [r["speedup_covered"] for r in mine if "speedup_covered" in r]
            lines.append(
                f"| {problem} | {arm} | {len(mine)} | {np.mean(regrets):.1%} | {np.median(regrets):.1%} | "
                f"{share(covered)} | {share(speed)} | {np.mean([r['calls'] for r in mine]):.0f} |"
            )
    return "\n".join(lines)


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi) + 1)) if hi else [int(s) for s in text.split(",")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-19")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated arms to run")
    args = parser.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; known: {list(ARMS)}")
    done = {(r["problem"], r["arm"], r["seed"]) for r in load_records(args.out)} if args.out.exists() else set()
    for seed in _seeds(args.seeds):
        for problem in PROBLEMS:
            for arm in arms:
                if (problem, arm, seed) not in done:
                    append_record(args.out, run_one(problem, arm, seed))
                    print(f"{problem} {arm} seed {seed}", flush=True)
    text = table(load_records(args.out))
    args.out.with_suffix(".md").write_text(
        "# Confirmation: the reported winner against the truth (issue 26)\n\n"
        f"`python -m benchmarks.confirmation --seeds {args.seeds}`; see the module docstring.\n\n" + text + "\n"
    )
    print(text)


if __name__ == "__main__":
    main()
