"""The live check of the build/measure pipeline on this machine: the gcc example
(``examples/gcc_kernel``) tuned three ways, in one process, interleaved, then every winner
re-timed side by side.

Arms:

- ``sequential``: one command compiles and runs each configuration, one at a time (today's
  default without workers);
- ``workers2``: the same command, ``--workers 2`` (today's parallel mode: two compilations or
  measurements at once on a 2-core machine, so timings share the cores);
- ``pipeline``: the scenario's build step and run step, ``build_workers=2``, ``devices=["cpu"]``
  (builds in parallel, every measurement alone: builds pause while it runs).

Reported per run: wall time to the confirmed winner (search and confirmation, what a user
waits), the confirmed value, and the winner re-timed afterwards, all arms' winners in
alternating order (``--rounds`` each), so a timing drift hits all arms alike.

    nice -n 0 python -m benchmarks.wallclock_live --budget 30 --repeats 2 --out benchmarks/results/wallclock/live.md
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bayestune.scenario import load_scenario
from bayestune.tuning import tune
from benchmarks.outputs import add_output_option, output_path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gcc_kernel"
ARMS = ("sequential", "workers2", "pipeline")
ONE_COMMAND = "sh build_run.sh {opt} {arch} -DTI={ti} -DTJ={tj} -DTK={tk} -DUNROLL={unroll}"


def scenario_for(arm: str, workdir: Path, budget: int, seed: int) -> tuple[Path, dict[str, Any]]:
    data = json.loads((EXAMPLE / "scenario.json").read_text())
    data.update({"budget": budget, "seed": seed})
    execution: dict[str, Any] = {}
    if arm == "pipeline":
        execution = {"build_workers": 2, "devices": ["cpu"]}
    else:
        data["blackbox"] = {"command": ONE_COMMAND, "timeout": 90}
        if arm == "workers2":
            execution = {"workers": 2}
    path = workdir / f"{arm}-{seed}.json"
    path.write_text(json.dumps(data))
    return path, execution


def one_run(arm: str, workdir: Path, budget: int, seed: int) -> dict[str, Any]:
    path, execution = scenario_for(arm, workdir, budget, seed)
    started = time.perf_counter()
    result = tune(load_scenario(path), workdir / f"{arm}-{seed}.db", force=True, progress=False, execution=execution)
    wall = time.perf_counter() - started
    winner = result.best
    estimate = result.remeasured.winner if result.remeasured is not None else None
    confirmed = estimate.value if estimate is not None else None
    return {
        "arm": arm,
        "seed": seed,
        "wall_s": round(wall, 2),
        "config": dict(winner.config) if winner else None,
        "search_value": winner.values.get("time_ms") if winner else None,
        "confirmed": confirmed,
    }


def retime(configs: list[dict[str, Any]], rounds: int, workdir: Path) -> list[list[float]]:
    """Each configuration compiled once, then timed in ``rounds`` interleaved rounds (order alternating)."""
    binaries = []
    for i, config in enumerate(configs):
        out = workdir / f"winner-{i}"
        subprocess.run(
            [
                "sh",
                "build.sh",
                str(out),
                config["opt"],
                config["arch"],
                f"-DTI={config['ti']}",
                f"-DTJ={config['tj']}",
                f"-DTK={config['tk']}",
                f"-DUNROLL={config['unroll']}",
            ],
            cwd=workdir,
            check=True,
        )
        binaries.append(out)
    times: list[list[float]] = [[] for _ in configs]
    for r in range(rounds):
        order = range(len(configs)) if r % 2 == 0 else reversed(range(len(configs)))
        for i in order:
            text = subprocess.run([str(binaries[i])], capture_output=True, text=True, check=True).stdout
            times[i].append(float(text.split("time_ms:")[1].split()[0]))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2, help="seeds; each runs every arm (order alternating)")
    parser.add_argument("--rounds", type=int, default=15, help="re-timing rounds of every winner")
    add_output_option(parser, "wallclock", "live.md")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bayestune-live-"))
    for name in ("kernel.c", "build.sh"):
        shutil.copy(EXAMPLE / name, work / name)
    (work / "build_run.sh").write_text(
        "#!/bin/sh\n# one command: compile into a temporary file, run it, remove it\nbin=$(mktemp)\n"
        'sh build.sh "$bin" "$@" || { rm -f "$bin"; exit 1; }\n"$bin"; rc=$?\nrm -f "$bin"\nexit $rc\n'
    )
    runs = []
    for seed in range(args.repeats):
        arms = ARMS if seed % 2 == 0 else tuple(reversed(ARMS))
        for arm in arms:
            runs.append(one_run(arm, work, args.budget, seed))
            print(json.dumps(runs[-1]), flush=True)
    times = retime([r["config"] for r in runs], args.rounds, work)
    lines = [
        "# Live check: the gcc example, build step + run step against one command",
        "",
        f"`{' '.join(['python -m benchmarks.wallclock_live', *(sys.argv[1:] if argv is None else argv)])}`; budget {args.budget}, "
        f"{args.repeats} seed(s), every winner re-timed in {args.rounds} interleaved rounds (median, ms).",
        "",
        "| arm | seed | wall s to the confirmed winner | confirmed ms | search's value ms | re-timed ms (median) |",
        "|---|---|---|---|---|---|",
    ]
    for run, t in zip(runs, times):
        confirmed = f"{run['confirmed']:.3f}" if run["confirmed"] is not None else "–"
        lines.append(
            f"| {run['arm']} | {run['seed']} | {run['wall_s']:.1f} | {confirmed} | {run['search_value']:.3f} | "
            f"{statistics.median(t):.3f} |"
        )
    lines += ["", "| arm | median wall s | median re-timed ms |", "|---|---|---|"]
    for arm in ARMS:
        mine = [(r, t) for r, t in zip(runs, times) if r["arm"] == arm]
        lines.append(
            f"| {arm} | {statistics.median(r['wall_s'] for r, _ in mine):.1f} | "
            f"{statistics.median(statistics.median(t) for _, t in mine):.3f} |"
        )
    out = output_path(args, "wallclock", "live.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
