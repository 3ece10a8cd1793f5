"""The transfer gate's spike rule (issue 42), paired with the gate without it on the same seeds.

Two questions, both on :mod:`benchmarks.transfer`'s runs (``run_one``, 40 evaluations, ``auto``):

* ``spiked``: the sibling's first pick measured once at a 200x load spike (the issue's 190 ms for
  a 0.8 ms configuration). Without the rule the gate drops the sibling; with it, the pick is set
  aside. The trajectory records the true values, the optimizer sees the spike.
* ``cost``: no spike (recorded spaces replay the same value): what the rule costs a related
  source (``auto``) and an unrelated one (``auto_unrelated_perseed``), which it can let through
  for one more pick when that pick is past :data:`~bayestune.transfer.gate.SPIKE_FACTOR` times
  every other design point.

Run (``BAYESTUNE_DATA`` for the GPU pairs, as in :mod:`benchmarks.transfer`)::

    BAYESTUNE_DATA=../shared/data nice -n 10 python -m benchmarks.transfer_spike spiked --seeds 5 --out spiked.jsonl
    BAYESTUNE_DATA=../shared/data nice -n 10 python -m benchmarks.transfer_spike cost --seeds 4 --out cost.jsonl

Each line: target, source, method, seed, ``rule`` (True: the gate as shipped, False: no spike
rule) and the best/optimum trajectory. Figures: ``benchmarks/results/transfer/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any

SPIKE = 200.0  # how many times slower the spiked run measures


def _spiking(run_measured: Any, target: str, source: str) -> Any:
    """``run_measured`` whose objective returns the source's first pick SPIKE times slower, once."""
    import numpy as np

    import benchmarks.transfer as transfer

    def spiked(problem: Any, budget: int, drive: Any) -> Any:
        run = transfer._source(problem, source, False)
        top = set(problem.space.row_keys(run.X[np.argsort(run.y, kind="stable")[:10]]))
        done = [False]

        def drive_spiked(objective: Any) -> None:
            def measure(config: Any) -> Any:
                before = len(objective.trajectory.evaluations)
                result = objective(config)
                key = problem.space.row_keys(problem.space.to_matrix([config]))[0]
                if not done[0] and key in top and len(objective.trajectory.evaluations) > before and result.values:
                    done[0] = True
                    return replace(result, values={k: v * SPIKE for k, v in result.values.items()})
                return result

            drive(measure)

        return run_measured(problem, budget, drive_spiked)

    return spiked


def run_one(target: str, source: str, method: str, seed: int, rule: bool, spike: bool) -> dict[str, Any]:
    import bayestune.transfer.gate as gate
    import benchmarks.budget as budget
    from benchmarks.transfer import run_one as transfer_run

    shipped = getattr(gate, "_shipped_factor", gate.SPIKE_FACTOR)
    gate._shipped_factor = shipped
    gate.SPIKE_FACTOR = shipped if rule else math.inf
    plain = getattr(budget, "_plain_run_measured", budget.run_measured)
    budget._plain_run_measured = plain
    budget.run_measured = _spiking(plain, target, source) if spike else plain
    record = transfer_run(target, source, method, seed, 40)
    return {"target": target, "source": source, "method": method, "seed": seed, "rule": rule,
            "spike": spike, "ratio": record["ratio"], "gate": record.get("gate")}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    from benchmarks.transfer import PAIRS, SIBLING_PAIRS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("spiked", "cost"))
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.what == "spiked":
        jobs = [(t, s, "auto", seed, rule, True) for t, s in SIBLING_PAIRS for seed in range(args.seeds)
                for rule in (False, True)]  # fmt: skip
    else:
        jobs = [(t, s, m, seed, rule, False) for t, s in (*SIBLING_PAIRS, *PAIRS) for seed in range(args.seeds)
                for m in ("auto", "auto_unrelated_perseed") for rule in (False, True)]  # fmt: skip
    with ProcessPoolExecutor(2) as pool, open(args.out, "w") as out:
        for record in pool.map(run_one, *zip(*jobs)):
            out.write(json.dumps(record) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
