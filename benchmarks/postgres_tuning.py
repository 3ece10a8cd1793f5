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
import os
import platform
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.jsonl import append_record, load_records
from bayestune.integrations.postgres import DEFAULT_KNOBS, DURABILITY_KNOBS, Pgbench, PostgresTuner
from bayestune.optimizer import Optimizer
from bayestune.trial import Trial, TrialStatus

RESULTS = Path(__file__).resolve().parent / "results"
KNOB_SETS = {"default": DEFAULT_KNOBS, "durability": DEFAULT_KNOBS + DURABILITY_KNOBS}
#: Options a strategy needs to know the run's budget (BoGraph relearns its DAG every quarter of it).
BUDGET_AWARE = ("bograph",)
#: Characters of a failure's error text kept in the records.
ERROR_CHARS = 300


def _trial_record(trial: Trial, load: float) -> dict[str, Any]:
    return {"id": trial.trial_id, "origin": trial.origin, "status": trial.status.value,
            "tps": trial.values.get("tps"), "load": round(load, 2),
            "error": (trial.error or "")[:ERROR_CHARS] or None}


def search(tuner: PostgresTuner, strategy: str, seed: int, budget: int) -> dict[str, Any]:
    """One search; its trials (TPS and load average each) and its best configuration."""
    trials: list[dict[str, Any]] = []

    def note(trial: Trial) -> None:
        trials.append(_trial_record(trial, os.getloadavg()[0]))
        print(f"  {strategy:>8s} seed {seed} #{trial.trial_id:2d} {trial.status.value:6s} "
              f"tps={trial.values.get('tps', float('nan')):8.1f} load={trials[-1]['load']:.1f} "
              f"{(trial.error or '')[:80]}", flush=True)

    options = {"relearn": {"budget": budget}} if strategy in BUDGET_AWARE else None
    opt = Optimizer(tuner.space(), objectives=[tuner.objective()], strategy=strategy, strategy_options=options,
                    seed=seed)
    start = time.perf_counter()
    best = opt.optimize(tuner, budget=budget, callback=note, stop_after_failures=None)
    return {"kind": "search", "strategy": strategy, "seed": seed, "budget": budget, "trials": trials,
            "wall_s": round(time.perf_counter() - start, 1),
            "best_config": dict(best.config) if best is not None else None,
            "best_tps": best.values["tps"] if best is not None else None}


def confirm(tuner: PostgresTuner, targets: Mapping[str, dict[str, Any]], repeats: Mapping[str, int],
            done: Mapping[str, int], out: Path) -> None:
    """Re-measure every target configuration up to its number of repeats, round-robin."""
    left = {label: repeats[label] - done.get(label, 0) for label in targets}
    while any(n > 0 for n in left.values()):
        for label, config in targets.items():
            if left[label] <= 0:
                continue
            result = tuner(config)
            record = {"kind": "measure", "label": label, "tps": result.values.get("tps"),
                      "status": result.status.value, "load": round(os.getloadavg()[0], 2),
                      "error": (result.error or "")[:ERROR_CHARS] or None}
            append_record(out, record)
            left[label] -= 1
            print(f"  confirm {label:>14s} tps={record['tps'] or float('nan'):8.1f} load={record['load']:.1f}",
                  flush=True)


def _stats(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values) if values else float("nan")
    sd = statistics.stdev(values) if len(values) > 1 else float("nan")
    return mean, sd


def _first_trials(searches: list[dict[str, Any]]) -> str:
    """The default configuration measured as the first trial of every search: the noise over the whole run."""
    firsts = [t["tps"] for s in searches for t in s["trials"][:1]
              if t["origin"] == "default" and t["status"] == TrialStatus.OK.value]
    if len(firsts) < 2:
        return ""
    mean, sd = _stats(firsts)
    return (f"Default configuration as the first trial of the {len(firsts)} searches: {mean:.0f} ± {sd:.0f} TPS "
            f"(CV {sd / mean:.1%}, range {min(firsts):.0f}–{max(firsts):.0f}).")


def summarise(records: list[dict[str, Any]], header: Mapping[str, Any]) -> str:
    """The Markdown summary: the default's noise, then per strategy the searches and their confirmation."""
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
    d_mean, d_sd = _stats(measured.get("default", []))
    lines = [f"# PostgreSQL tuning under pgbench ({header['date']})", "",
             f"Machine: {header['machine']}; PostgreSQL {header['server_version']}; workload {header['workload']}; "
             f"{header['knobs']} knobs; budget {header['budget']} evaluations per search.",
             f"Load average (1 min) at the measurements: median {statistics.median(loads):.1f}, "
             f"max {max(loads):.1f}." if loads else "", "",
             f"Default configuration re-measured {len(measured.get('default', []))} times: "
             f"{d_mean:.0f} ± {d_sd:.0f} TPS (CV {d_sd / d_mean:.1%}); "
             f"values {', '.join(f'{v:.0f}' for v in measured.get('default', []))}.",
             _first_trials(searches), "",
             "| strategy | seed | failed | best TPS in search | confirmed TPS (mean ± sd, n) | confirmed / default |",
             "|---|---|---|---|---|---|"]
    ratios: dict[str, list[float]] = defaultdict(list)
    for s in sorted(searches, key=lambda r: (r["strategy"], r["seed"])):
        label = f"{s['strategy']}/{s['seed']}"
        failed = sum(t["status"] != TrialStatus.OK.value for t in s["trials"])
        c_mean, c_sd = _stats(measured.get(label, []))
        ratio = c_mean / d_mean if measured.get(label) else float("nan")
        ratios[s["strategy"]].append(ratio)
        best = f"{s['best_tps']:.0f}" if s["best_tps"] is not None else "-"
        lines.append(f"| {s['strategy']} | {s['seed']} | {failed}/{len(s['trials'])} | {best} | "
                     f"{c_mean:.0f} ± {c_sd:.0f} ({len(measured.get(label, []))}) | {ratio:.2f} |")
    lines += ["", "| strategy | mean confirmed / default over seeds | seeds better than default by > 2 sd |",
              "|---|---|---|"]
    for strategy, values in sorted(ratios.items()):
        better = sum((r - 1.0) * d_mean > 2 * d_sd for r in values)
        lines.append(f"| {strategy} | {statistics.fmean(values):.2f} | {better}/{len(values)} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategies", default="bo,random", help="comma-separated bayestune strategies")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    ap.add_argument("--budget", type=int, default=25)
    ap.add_argument("--default-repeats", type=int, default=6)
    ap.add_argument("--confirm-repeats", type=int, default=3)
    ap.add_argument("--knobs", choices=sorted(KNOB_SETS), default="default",
                    help="'durability' adds synchronous_commit and full_page_writes")
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "postgres_tuning.jsonl")
    ap.add_argument("--md", type=Path, default=None, help="Markdown summary (default: --out with .md)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]

    workload = Pgbench(scale=args.scale, clients=args.clients, threads=args.threads, duration=args.duration)
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
        records = load_records(args.out)
        targets: dict[str, dict[str, Any]] = {"default": tuner.space().default_config()}
        repeats = {"default": args.default_repeats}
        for r in records:
            if r.get("kind") == "search" and r["best_config"] is not None and r["strategy"] in strategies \
                    and r["seed"] in seeds:
                label = f"{r['strategy']}/{r['seed']}"
                targets[label], repeats[label] = r["best_config"], args.confirm_repeats
        counts: dict[str, int] = defaultdict(int)
        for r in records:
            if r.get("kind") == "measure":
                counts[r["label"]] += 1
        confirm(tuner, targets, repeats, counts, args.out)
        header = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
                  "server_version": tuner.server_version, "knobs": f"{len(tuner.knobs)} ({args.knobs})",
                  "budget": args.budget,
                  "workload": f"pgbench {workload.builtin} scale {workload.scale}, {workload.clients} clients, "
                              f"{workload.threads} threads, {workload.duration} s"}
        wanted = [r for r in load_records(args.out)
                  if r.get("kind") != "search" or (r["strategy"] in strategies and r["seed"] in seeds)]
        summary = summarise(wanted, header)
    finally:
        tuner.close()
    md = args.md or args.out.with_suffix(".md")
    md.write_text(summary)
    print("\n" + summary)


if __name__ == "__main__":
    main()
