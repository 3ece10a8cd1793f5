"""TPS of a real PostgreSQL server under pgbench, tuned by bayestune strategies, against its defaults.

    nice -n 10 python -m benchmarks.postgres_tuning --strategies bo,random --seeds 0,1,2 --budget 25

Slow (about 10 s an evaluation). Per (seed, strategy) a search of ``--budget`` evaluations,
the default configuration first. Then a confirmation phase: the default configuration is
re-measured ``--default-repeats`` times and every search's best configuration
``--confirm-repeats`` times, interleaved so that the load of a shared machine drifts over
both alike. The best TPS seen during a search is biased upwards (the largest of many noisy
draws), so the confirmed TPS is the one compared with the default's; the default's spread is
pgbench's noise on this machine. The load average is recorded beside every measurement.

Records go to a JSON-lines file (a killed run resumes: finished searches and measurements are
kept) and the summary to a Markdown file.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scipy.stats import t as student_t

from bayestune.integrations.postgres import DEFAULT_KNOBS, DURABILITY_KNOBS, Pgbench, PostgresTuner
from bayestune.optimizer import Optimizer
from bayestune.trial import Trial, TrialStatus
from benchmarks.jsonl import append_record, load_records
from benchmarks.outputs import SCRATCH

KNOB_SETS = {"default": DEFAULT_KNOBS, "durability": DEFAULT_KNOBS + DURABILITY_KNOBS}
#: Options a strategy needs to know the run's budget (BoGraph relearns its DAG every quarter of it).
BUDGET_AWARE = ("bograph",)
#: Characters of a failure's error text kept in the records.
ERROR_CHARS = 300


def _trial_record(trial: Trial, load: float) -> dict[str, Any]:
    seconds = (trial.finished_at - trial.started_at) if trial.started_at and trial.finished_at else None
    return {
        "id": trial.trial_id,
        "origin": trial.origin,
        "status": trial.status.value,
        "tps": trial.values.get("tps"),
        "load": round(load, 2),
        "eval_s": round(seconds, 2) if seconds is not None else None,
        "error": (trial.error or "")[:ERROR_CHARS] or None,
    }


def search(tuner: PostgresTuner, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    """One search; its trials (TPS and load average each) and its best configuration."""
    trials: list[dict[str, Any]] = []

    def note(trial: Trial) -> None:
        trials.append(_trial_record(trial, os.getloadavg()[0]))
        print(
            f"  {strategy:>8s} seed {seed} #{trial.trial_id:2d} {trial.status.value:6s} "
            f"tps={trial.values.get('tps', float('nan')):8.1f} load={trials[-1]['load']:.1f} "
            f"{(trial.error or '')[:80]}",
            flush=True,
        )

    options = {"relearn": {"budget": budget}} if strategy in BUDGET_AWARE else None
    opt = Optimizer(
        tuner.space(), objectives=[tuner.objective()], strategy=strategy, strategy_options=options, seed=seed
    )
    start = time.perf_counter()
    best = opt.optimize(tuner, budget=budget, callback=note, stop_after_failures=None)
    wall = time.perf_counter() - start
    evaluating = sum(t["eval_s"] or 0.0 for t in trials)
    updates = [
        {
            "n_rows": u.n_rows,
            "seconds": round(u.seconds, 2),
            "cut_short": u.cut_short,
            "effective_dimension": u.effective_dimension,
            "summary_columns": u.summary_columns,
            "stand_ins": sorted(u.stand_ins),
        }
        for u in getattr(opt.strategy, "updates", [])
    ]
    return {
        "kind": "search",
        "strategy": strategy,
        "seed": seed,
        "budget": budget,
        "trials": trials,
        "structure_updates": updates,
        "wall_s": round(wall, 1),
        "strategy_s": round(max(wall - evaluating, 0.0), 1),
        "best_config": dict(best.config) if best is not None else None,
        "best_tps": best.values["tps"] if best is not None else None,
    }


def confirm(
    tuner: PostgresTuner,
    targets: Mapping[str, dict[str, Any]],
    repeats: Mapping[str, int],
    done: Mapping[str, int],
    out: Path,
) -> None:
    """Re-measure every target configuration up to its number of repeats, round-robin."""
    left = {label: repeats[label] - done.get(label, 0) for label in targets}
    while any(n > 0 for n in left.values()):
        for label, config in targets.items():
            if left[label] <= 0:
                continue
            result = tuner(config)
            record = {
                "kind": "measure",
                "label": label,
                "tps": result.values.get("tps"),
                "status": result.status.value,
                "load": round(os.getloadavg()[0], 2),
                "error": (result.error or "")[:ERROR_CHARS] or None,
            }
            append_record(out, record)
            left[label] -= 1
            print(
                f"  confirm {label:>14s} tps={record['tps'] or float('nan'):8.1f} load={record['load']:.1f}", flush=True
            )


def _stats(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values) if values else float("nan")
    sd = statistics.stdev(values) if len(values) > 1 else float("nan")
    return mean, sd


def ratio_interval(
    values: Sequence[float], baseline: Sequence[float], level: float = 0.95
) -> tuple[float, float, float]:
    """The ratio of mean TPS ``values`` / ``baseline`` with its ``level`` confidence interval.

    Welch's t interval on the difference of the log-TPS means, exponentiated: pgbench's noise is
    multiplicative (a loaded machine slows every run by a factor), and the two groups have
    their own spreads. NaNs when either group has fewer than two measurements.
    """
    a = [math.log(v) for v in values if v and v > 0]
    b = [math.log(v) for v in baseline if v and v > 0]
    if len(a) < 2 or len(b) < 2:
        return float("nan"), float("nan"), float("nan")
    ratio = statistics.fmean(values) / statistics.fmean(baseline)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(a) - statistics.fmean(b)
    se = math.sqrt(va + vb)
    if se == 0.0:
        return ratio, math.exp(diff), math.exp(diff)
    dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(student_t.ppf(0.5 + level / 2, dof)) * se
    return ratio, math.exp(diff - half), math.exp(diff + half)


def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean of per-seed ratios with the t interval over seeds (NaN bounds below two seeds)."""
    values = [v for v in values if v == v]
    if not values:
        return float("nan"), float("nan"), float("nan")
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    half = float(student_t.ppf(0.5 + level / 2, len(values) - 1)) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def _first_trials(searches: list[dict[str, Any]]) -> str:
    """The default configuration measured as the first trial of every search: the noise over the whole run."""
    firsts = [
        t["tps"]
        for s in searches
        for t in s["trials"][:1]
        if t["origin"] == "default" and t["status"] == TrialStatus.OK.value
    ]
    if len(firsts) < 2:
        return ""
    mean, sd = _stats(firsts)
    return (
        f"Default configuration as the first trial of the {len(firsts)} searches: {mean:.0f} ± {sd:.0f} TPS "
        f"(CV {sd / mean:.1%}, range {min(firsts):.0f}–{max(firsts):.0f})."
    )


def _changed(config: Mapping[str, Any] | None, default: Mapping[str, Any], names: Sequence[str]) -> str:
    """The durability knobs a configuration moved off their defaults (``'synchronous_commit=off'``)."""
    if not config:
        return ""
    return ", ".join(f"{n}={config[n]}" for n in names if n in config and config[n] != default.get(n))


def summarise(records: list[dict[str, Any]], header: Mapping[str, Any]) -> str:
    """The Markdown summary: the default's noise, then per search its confirmed ratio to the default
    with a 95 % interval, then per strategy the mean ratio over seeds with its interval."""
    measured: dict[str, list[float]] = defaultdict(list)
    loads: list[float] = []
    for r in records:
        if r.get("kind") == "measure":
            loads.append(r["load"])
            if r["status"] == TrialStatus.OK.value:
                measured[r["label"]].append(r["tps"])
    searches = [r for r in records if r.get("kind") == "search"]
    for s in searches:
        loads.extend(t["load"] for t in s["trials"])
    default_tps = measured.get("default", [])
    d_mean, d_sd = _stats(default_tps)
    default_config = header.get("default_config", {})
    lines = [
        f"# PostgreSQL tuning under pgbench ({header['date']})",
        "",
        f"Machine: {header['machine']}; PostgreSQL {header['server_version']}; workload {header['workload']}; "
        f"{header['knobs']} knobs; budget {header['budget']} evaluations per search.",
        f"Load average (1 min) at the measurements: median {statistics.median(loads):.1f}, max {max(loads):.1f}."
        if loads
        else "",
        "",
        f"Default configuration re-measured {len(default_tps)} times: "
        f"{d_mean:.0f} ± {d_sd:.0f} TPS (CV {d_sd / d_mean:.1%}); "
        f"values {', '.join(f'{v:.0f}' for v in default_tps)}.",
        _first_trials(searches),
        "",
        "Confirmed / default: mean TPS of the pick re-measured over the default's, interleaved with it; "
        "the 95 % interval is Welch's t on log TPS.",
        "",
        "| strategy | seed | failed | best TPS in search | confirmed TPS (mean ± sd, n) | confirmed / default "
        "[95 % CI] | durability knobs changed | strategy's own time (s) / wall (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios: dict[str, list[float]] = defaultdict(list)
    clear: dict[str, int] = defaultdict(int)
    for s in sorted(searches, key=lambda r: (r["strategy"], r["seed"])):
        label = f"{s['strategy']}/{s['seed']}"
        failed = sum(t["status"] != TrialStatus.OK.value for t in s["trials"])
        c_mean, c_sd = _stats(measured.get(label, []))
        ratio, low, high = ratio_interval(measured.get(label, []), default_tps)
        ratios[s["strategy"]].append(ratio)
        clear[s["strategy"]] += low > 1.0
        best = f"{s['best_tps']:.0f}" if s["best_tps"] is not None else "-"
        changed = _changed(s.get("best_config"), default_config, header.get("durability_knobs", ())) or "none"
        lines.append(
            f"| {s['strategy']} | {s['seed']} | {failed}/{len(s['trials'])} | {best} | "
            f"{c_mean:.0f} ± {c_sd:.0f} ({len(measured.get(label, []))}) | {ratio:.2f} [{low:.2f}, {high:.2f}] "
            f"| {changed} | {s.get('strategy_s', float('nan')):.0f} / {s['wall_s']:.0f} |"
        )
    lines += [
        "",
        "| strategy | mean confirmed / default over seeds [95 % CI over seeds] | seeds whose interval lies above 1 |",
        "|---|---|---|",
    ]
    for strategy, values in sorted(ratios.items()):
        mean, low, high = mean_interval(values)
        lines.append(f"| {strategy} | {mean:.2f} [{low:.2f}, {high:.2f}] | {clear[strategy]}/{len(values)} |")
    return "\n".join(lines + _structure_lines(searches)) + "\n"


def _structure_lines(searches: list[dict[str, Any]]) -> list[str]:
    """BoGraph's structure updates per search: their cost, whether cut short, the stand-ins set aside."""
    graphs = [s for s in sorted(searches, key=lambda r: (r["strategy"], r["seed"])) if s.get("structure_updates")]
    if not graphs:
        return []
    lines = [
        "",
        "| search | structure updates: observations (seconds) | cut short at relearn.max_seconds | "
        "summary columns | metrics set aside at the last update |",
        "|---|---|---|---|---|",
    ]
    for s in graphs:
        ups = s["structure_updates"]
        aside = ups[-1]["stand_ins"]
        steps = ", ".join(f"{u['n_rows']} ({u['seconds']:.1f})" for u in ups)
        lines.append(
            f"| {s['strategy']}/{s['seed']} | {steps} "
            f"| {sum(u['cut_short'] for u in ups)}/{len(ups)} | {ups[-1]['summary_columns']} | "
            f"{len(aside)}: {', '.join(aside[:6])}{', ...' if len(aside) > 6 else ''} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategies", default="bo,random", help="comma-separated bayestune strategies")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    ap.add_argument("--budget", type=int, default=25)
    ap.add_argument("--default-repeats", type=int, default=6)
    ap.add_argument("--confirm-repeats", type=int, default=3)
    ap.add_argument(
        "--knobs",
        choices=sorted(KNOB_SETS),
        default="default",
        help="'durability' adds synchronous_commit and full_page_writes",
    )
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=0, help="unmeasured seconds of the load before each measurement")
    ap.add_argument(
        "--skip-confirm",
        action="store_true",
        help="only the searches (a later run with every strategy confirms them all, interleaved)",
    )
    ap.add_argument("--out", type=Path, default=SCRATCH / "postgres" / "postgres_tuning.jsonl")
    ap.add_argument("--md", type=Path, default=None, help="Markdown summary (default: --out with .md)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]

    workload = Pgbench(
        scale=args.scale, clients=args.clients, threads=args.threads, duration=args.duration, warmup=args.warmup
    )
    tuner = PostgresTuner(KNOB_SETS[args.knobs], workload)
    try:
        tuner.prepare()
        records = load_records(args.out)
        done = {(r["strategy"], r["seed"]) for r in records if r.get("kind") == "search"}
        for seed in seeds:  # seed-major: every strategy meets the machine's load of the same hour
            for strategy in strategies:
                if (strategy, seed) in done:
                    continue
                append_record(args.out, search(tuner, strategy, seed, args.budget))
        if args.skip_confirm:
            return
        records = load_records(args.out)
        targets: dict[str, dict[str, Any]] = {"default": tuner.space().default_config()}
        repeats = {"default": args.default_repeats}
        for r in records:
            if (
                r.get("kind") == "search"
                and r["best_config"] is not None
                and r["strategy"] in strategies
                and r["seed"] in seeds
            ):
                label = f"{r['strategy']}/{r['seed']}"
                targets[label], repeats[label] = r["best_config"], args.confirm_repeats
        counts: dict[str, int] = defaultdict(int)
        for r in records:
            if r.get("kind") == "measure":
                counts[r["label"]] += 1
        confirm(tuner, targets, repeats, counts, args.out)
        header = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
            "server_version": tuner.server_version,
            "knobs": f"{len(tuner.knobs)} ({args.knobs})",
            "budget": args.budget,
            "default_config": tuner.space().default_config(),
            "durability_knobs": [k.name for k in DURABILITY_KNOBS],
            "workload": f"pgbench {workload.builtin} scale {workload.scale}, {workload.clients} clients, "
            f"{workload.threads} threads, {workload.warmup} s warm-up + {workload.duration} s",
        }
        wanted = [
            r
            for r in load_records(args.out)
            if r.get("kind") != "search" or (r["strategy"] in strategies and r["seed"] in seeds)
        ]
        summary = summarise(wanted, header)
    finally:
        tuner.close()
    md = args.md or args.out.with_suffix(".md")
    md.write_text(summary)
    print("\n" + summary)


if __name__ == "__main__":
    main()
