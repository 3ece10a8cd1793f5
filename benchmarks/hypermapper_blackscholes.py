"""HyperMapper 2.0's own system test, run with bayestune: ``tests/data/BlackScholes_scenario.json``
(exhaustive mode: the recorded table of all 76,800 configurations is the black box), scored as
its ``tests/test_system.py::test_black_scholes`` scores HyperMapper (``plot_hvi.HVI_from_files``:
the hypervolume of the true front minus that of the run's ``output_pareto_file``, both divided by
the objectives' standard deviation over the two fronts, the reference point their raw maxima;
HyperMapper's test requires < 100000).

Usage, with a checkout of HyperMapper 2.0 (nothing of it is kept here)::

    python -m benchmarks.hypermapper_blackscholes /path/to/hypermapper --seeds 1 2 3 [--out results.md]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bayestune.pareto import hypervolume

SCENARIO = "tests/data/BlackScholes_scenario.json"
TRUE_FRONT = "tests/data/BlackScholes_real_pareto.csv"


def _front(path: Path, objectives: list[str], feasible: str) -> np.ndarray:
    """The objective values of a front file's valid rows (HyperMapper's ``only_valid``)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r[feasible].strip().lower() == "true"]
    return np.array([[float(r[o]) for o in objectives] for r in rows], dtype=float).reshape(-1, len(objectives))


def hvi_as_hypermapper(true_front: np.ndarray, run_front: np.ndarray) -> float:
    """``HVI_from_files``: both fronts scaled by the standard deviation of their union, the
    reference point the union's raw maxima (as HyperMapper computes it)."""
    union = np.vstack([true_front, run_front])
    std, ref = union.std(axis=0), union.max(axis=0)
    return hypervolume(true_front / std, ref) - hypervolume(run_front / std, ref)


def run(root: Path, seed: int) -> dict:
    config = json.loads((root / SCENARIO).read_text())
    objectives, feasible = config["optimization_objectives"], config["feasible_output"]["name"]
    pareto = root / config["run_directory"] / config["output_pareto_file"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bayestune",
            "optimize",
            SCENARIO,
            "--seed",
            str(seed),
            "--force",
            "--no-progress",
            "--journal",
            f"/tmp/blackscholes_{seed}.journal.db",
        ],
        cwd=root,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    samples = root / config["run_directory"] / config["output_data_file"]
    with open(samples, newline="") as f:
        n = sum(1 for _ in csv.DictReader(f))
    true_front = _front(root / TRUE_FRONT, objectives, feasible)
    run_front = _front(pareto, objectives, feasible)
    return {
        "seed": seed,
        "evaluations": n,
        "seconds": round(seconds, 1),
        "front": len(run_front),
        "hvi": round(float(hvi_as_hypermapper(true_front, run_front)), 1),
        "load": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a HyperMapper 2.0 checkout (its repository root)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", type=Path, help="write the table here (markdown)")
    args = parser.parse_args(argv)
    lines = [
        "| seed | evaluations | seconds | front size | HVI (HyperMapper's test: < 100000) | load (1 min) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for seed in args.seeds:
        r = run(args.root, seed)
        lines.append(
            f"| {r['seed']} | {r['evaluations']} | {r['seconds']} | {r['front']} | {r['hvi']:g} | {r['load']:.1f} |"
        )
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
