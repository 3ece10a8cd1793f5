"""Which pgbench workload lets knob tuning show a gain that survives re-measurement here?

    nice -n 10 python -m benchmarks.postgres_probe --workloads tpcb,report-mix --rounds 4

For each candidate workload, the server's default configuration and a few hand-set ones
(more memory; grouped commits and a larger WAL) are measured ``--rounds`` times, interleaved
round by round so the shared machine's load drifts over all of them alike. Printed per
workload: each configuration's TPS mean ± sd and its ratio to the default with the noise
(coefficient of variation) of the default. A workload where no hand-set configuration is
clearly apart from the default gives a tuner nothing to find; one where the default's own
spread hides every gap cannot confirm one.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune.integrations.postgres import DEFAULT_KNOBS, Knob, Pgbench, PostgresTuner
from bayestune.space import Categorical

#: A reporting query besides the OLTP load: a distinct count over a 200,000-account range whose
#: sort / hash table outgrows the default work_mem (4 MB), the classic memory knob.
REPORT_SCRIPT = """\\set lo random(1, 100000 * :scale - 200000)
SELECT count(*) FROM (SELECT DISTINCT abalance, aid % 1000 FROM pgbench_accounts
                      WHERE aid BETWEEN :lo AND :lo + 200000) d;
"""

#: Candidate workloads (pgbench settings besides the run's --duration and --warmup).
WORKLOADS: dict[str, dict[str, Any]] = {
    "tpcb": {"scale": 10, "clients": 4, "threads": 2},
    "tpcb-large": {"scale": 40, "clients": 4, "threads": 2},
    "select-large": {"scale": 40, "clients": 4, "threads": 2, "builtin": "select-only"},
    "report-mix": {
        "scale": 10,
        "clients": 4,
        "threads": 2,
        "script": REPORT_SCRIPT,
        "builtin_weight": 4,
        "script_weight": 1,
    },
}

#: Hand-set configurations: changes to the server's defaults (durability unchanged).
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "memory": {"shared_buffers": 1024, "work_mem": 65536},
    "wal": {"commit_delay": 1000, "commit_siblings": 2, "wal_buffers": 16384, "max_wal_size": 4096},
    "sync": {"wal_sync_method": "open_datasync"},
}


def probe(name: str, duration: int, warmup: int, rounds: int, configs: Sequence[str]) -> dict[str, list[float]]:
    """The TPS of every configuration of :data:`CONFIGS`, ``rounds`` times each, interleaved."""
    knobs = (
        DEFAULT_KNOBS
        if any(k.name == "wal_sync_method" for k in DEFAULT_KNOBS)
        else DEFAULT_KNOBS
        + (Knob(Categorical("wal_sync_method", ["fdatasync", "open_datasync"], default="fdatasync")),)
    )
    tuner = PostgresTuner(knobs, Pgbench(duration=duration, warmup=warmup, **WORKLOADS[name]))
    base = tuner.space().default_config()
    tps: dict[str, list[float]] = {label: [] for label in configs}
    with tuner:
        for r in range(rounds):
            for label in configs:
                result = tuner({**base, **CONFIGS[label]})
                value = result.values.get("tps", float("nan"))
                tps[label].append(value)
                print(
                    f"{name:>11s} round {r} {label:>8s} tps={value:8.1f} load={os.getloadavg()[0]:.1f} "
                    f"{(result.error or '')[:80]}",
                    flush=True,
                )
    return tps


def summary(name: str, tps: Mapping[str, Sequence[float]]) -> list[str]:
    ok = {label: [v for v in values if v == v] for label, values in tps.items()}
    d_mean = statistics.fmean(ok["default"])
    d_sd = statistics.stdev(ok["default"]) if len(ok["default"]) > 1 else float("nan")
    lines = [f"{name}: default {d_mean:.0f} ± {d_sd:.0f} TPS (CV {d_sd / d_mean:.0%})"]
    for label, values in ok.items():
        if label != "default" and values:
            mean = statistics.fmean(values)
            sd = statistics.stdev(values) if len(values) > 1 else float("nan")
            lines.append(f"  {label:>8s} {mean:.0f} ± {sd:.0f} TPS = {mean / d_mean:.2f}x the default")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated, of {list(WORKLOADS)}")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {list(CONFIGS)}")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)
    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = sorted(set(names) - set(WORKLOADS))
    if unknown:
        ap.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    configs = ["default", *(c.strip() for c in args.configs.split(",") if c.strip() and c.strip() != "default")]
    if set(configs) - set(CONFIGS):
        ap.error(f"unknown configurations {sorted(set(configs) - set(CONFIGS))}; choose from {list(CONFIGS)}")
    lines: list[str] = []
    for name in names:
        lines += summary(name, probe(name, args.duration, args.warmup, args.rounds, configs))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
