"""bayestune through the Python drop-in (:mod:`bayestune.peers`) against the real HyperMapper and
BaCO on five of their own scenarios, at their own budgets: the best value found (one objective)
or the hypervolume of the feasible front (several), per seed.

One run per process, so each tool runs in its own environment::

    python -m benchmarks.peer_dropin run --tool bayestune --scenario branin4 --seed 0 --out R.jsonl
    /tmp/peers-venv/bin/python -m benchmarks.peer_dropin run --tool hypermapper ...   # pip install hypermapper
    PYTHONPATH=/tmp/baco-src /tmp/baco-venv/bin/python -m benchmarks.peer_dropin run --tool baco ...
    python -m benchmarks.peer_dropin table R.jsonl

The scenario files and black boxes are the peers' own (``tests/data/peers``): HyperMapper's
examples, BaCO's ``tests/aux`` files and ``functions.py``. Each run works in a temporary
directory; the record holds the sample CSV's objective column(s), read back as the peer wrote them.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "data" / "peers"
HM = PEERS / "hypermapper-3dfa8a7" / "example_scenarios" / "synthetic"
BACO = PEERS / "baco-167b196" / "tests" / "aux"


def _functions() -> Any:
    spec = importlib.util.spec_from_file_location("baco_functions", BACO / "functions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def currin_exp(x: dict[str, float]) -> float:
    """HyperMapper's prior_currinexp.py black box."""
    x1, x2 = x["x1"], x["x2"]
    factor1 = 1 - math.exp(-1 / (2 * x2))
    factor2 = 2300 * x1**3 + 1900 * x1**2 + 2092 * x1 + 60
    factor3 = 100 * x1**3 + 500 * x1**2 + 4 * x1 + 20
    return factor1 * factor2 / factor3


#: name -> (the peer, its scenario file, the black box's name, objectives, HV reference point)
SCENARIOS: dict[str, tuple[str, Path, str, list[str], list[float] | None]] = {
    "branin4": ("hypermapper", HM / "branin4" / "branin4_scenario.json", "branin4_function", ["Value"], None),
    "prior_currinexp": (
        "hypermapper",
        HM / "prior_currinexp" / "prior_currinexp_scenario.json",
        "currin_exp",
        ["Value"],
        None,
    ),
    "chakong_haimes": (
        "hypermapper",
        HM / "chakong_haimes" / "chakong_haimes_scenario.json",
        "chakong_haimes",
        ["f1_value", "f2_value"],
        [500.0, 200.0],
    ),
    "baco_branin4_gp": ("baco", BACO / "branin4_scenario_gp.json", "branin4_function", ["Value"], None),
    "baco_hartmann6_gp": ("baco", BACO / "hartmann6_scenario_gp.json", "hartmann6_function", ["Value"], None),
}


def _black_box(name: str) -> Any:
    return currin_exp if name == "currin_exp" else getattr(_functions(), name)


def _seed(seed: int) -> None:
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def _run_tool(tool: str, peer: str, path: Path, black_box: Any, seed: int, workdir: Path) -> Path:
    """Run one tool on ``path`` in ``workdir``; return its sample CSV."""
    settings = json.loads(path.read_text())
    settings["output_data_file"] = str(workdir / "samples.csv")
    settings["log_file"] = str(workdir / "run.log")
    if peer == "baco":
        settings.pop("resume_optimization_file", None)
    scenario = workdir / path.name
    scenario.write_text(json.dumps(settings))
    _seed(seed)
    if tool == "bayestune":
        from bayestune.peers import baco, hypermapper
        from bayestune.peers.baco import BacoBlackBox
        from bayestune.peers.drop_in import read_peer_file, run_peer
        from bayestune.peers.hypermapper import HyperMapperBlackBox

        run = read_peer_file(str(scenario), peer)
        wrap = HyperMapperBlackBox if peer == "hypermapper" else BacoBlackBox
        run_peer(run, wrap(run.scenario, black_box), seed=seed)  # the drop-in's optimize(), seeded
        assert baco.optimize and hypermapper.optimize  # what a user calls; the seed is the only addition
    elif tool == "hypermapper":
        from hypermapper import optimizer

        optimizer.optimize(str(scenario), black_box)
    elif tool == "baco":
        import torch

        torch.manual_seed(seed)
        from baco import run as baco_run
        from baco.util.file import read_settings_file

        baco_run.optimize(read_settings_file(str(scenario)), black_box)
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    return workdir / "samples.csv"


def _score(samples: Path, objectives: list[str], reference: list[float] | None) -> dict[str, Any]:
    with open(samples, newline="") as f:
        rows = list(csv.DictReader(f))
    feasible = [r for r in rows if r.get("Valid", "True").strip().lower() in ("true", "1")]
    values = [[float(r[o]) for o in objectives] for r in feasible if all(r[o] for o in objectives)]
    out: dict[str, Any] = {"evaluations": len(rows)}
    if reference is None:
        out["best"] = min(v[0] for v in values)
    else:
        from bayestune.pareto import hypervolume

        out["hypervolume"] = hypervolume(values, reference) if values else 0.0
    return out


def run_one(tool: str, name: str, seed: int, out: str) -> None:
    peer, path, bb, objectives, reference = SCENARIOS[name]
    stdout = sys.stdout
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        started = time.monotonic()
        try:
            samples = _run_tool(tool, peer, path, _black_box(bb), seed, Path(tmp))
        finally:
            os.chdir(cwd)
            sys.stdout = stdout  # the peers replace sys.stdout with their loggers
        record = {"tool": tool, "scenario": name, "seed": seed, "seconds": round(time.monotonic() - started, 1)}
        record.update(_score(samples, objectives, reference))
    with open(out, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(record))


def table(path: str) -> str:
    """The Markdown table of a results file: per scenario and tool, the mean and the per-seed values."""
    import statistics

    records = [json.loads(line) for line in open(path) if line.strip()]
    lines = [
        "| scenario | measure | tool | mean | per seed | evaluations | seconds per run |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SCENARIOS:
        for tool in ("bayestune", "hypermapper", "baco"):
            rs = sorted((r for r in records if r["scenario"] == name and r["tool"] == tool), key=lambda r: r["seed"])
            if not rs:
                continue
            key = "best" if "best" in rs[0] else "hypervolume"
            vals = [r[key] for r in rs]
            lines.append(
                f"| {name} | {key} ({'lower' if key == 'best' else 'higher'} is better) | {tool} | "
                f"{statistics.mean(vals):.6g} | {', '.join(f'{v:.6g}' for v in vals)} | "
                f"{rs[0]['evaluations']} | {statistics.mean(r['seconds'] for r in rs):.0f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--tool", required=True, choices=["bayestune", "hypermapper", "baco"])
    one.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--out", required=True)
    tab = sub.add_parser("table")
    tab.add_argument("results")
    args = parser.parse_args()
    if args.command == "run":
        run_one(args.tool, args.scenario, args.seed, args.out)
    else:
        print(table(args.results), end="")


if __name__ == "__main__":
    main()
