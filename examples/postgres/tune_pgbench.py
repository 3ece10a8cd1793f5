"""Tune a real PostgreSQL server under pgbench for TPS with bayestune.

    python examples/postgres/tune_pgbench.py --strategy bo --budget 25
    python examples/postgres/tune_pgbench.py --strategy bograph --budget 25 --journal pg.db

Every evaluation copies a template cluster (made once by initdb and pgbench -i in a temporary
directory), starts the server with the configuration on a Unix socket only, runs pgbench for
``--duration`` seconds and reads the statistics views, which the journal keeps beside the TPS
(``bayestune report pg.db`` shows them; BoGraph learns its DAG from them). Knob values the
server refuses are recorded as failures with the reason from its log. Needs PostgreSQL's
programs on PATH; as root the server runs as the ``postgres`` account.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bayestune.integrations.postgres import DEFAULT_KNOBS, DURABILITY_KNOBS, Pgbench, PostgresTuner
from bayestune.optimizer import Optimizer
from bayestune.storage import Journal
from bayestune.trial import Trial


def show(trial: Trial) -> None:
    metrics = sum("." in name for name in trial.values)
    print(
        f"#{trial.trial_id:2d} {trial.status.value:6s} {trial.values.get('tps', float('nan')):8.1f} TPS "
        f"({metrics} logged metrics) {(trial.error or '')[:90]}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strategy", default="bo", help="bo, bograph, random, ... (default: bo)")
    ap.add_argument("--budget", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--duration", type=int, default=8, help="seconds of pgbench measured per evaluation")
    ap.add_argument("--warmup", type=int, default=3, help="seconds of pgbench run first, unmeasured")
    ap.add_argument("--scale", type=int, default=10, help="pgbench scale factor (x 100,000 accounts)")
    ap.add_argument(
        "--durability",
        action="store_true",
        help="also search synchronous_commit and full_page_writes (a crash may lose commits)",
    )
    ap.add_argument("--journal", default=None, help="SQLite journal file (resume a killed run)")
    args = ap.parse_args()

    knobs = DEFAULT_KNOBS + (DURABILITY_KNOBS if args.durability else ())
    tuner = PostgresTuner(knobs, Pgbench(scale=args.scale, duration=args.duration, warmup=args.warmup))
    resume = bool(args.journal) and Path(args.journal).exists()
    journal = Journal(args.journal) if args.journal else None
    with tuner:
        options = (
            {"relearn": {"budget": args.budget}} if args.strategy == "bograph" else None
        )  # relearns every quarter of it
        opt = Optimizer(
            tuner.space(),
            objectives=[tuner.objective()],
            strategy=args.strategy,
            strategy_options=options,
            seed=args.seed,
            journal=journal,
            resume=resume,
        )
        start = time.perf_counter()
        best = opt.optimize(tuner, budget=args.budget, callback=show)
        wall = time.perf_counter() - start
    default = next((t for t in opt.trials if t.origin == "default"), None)
    print(f"\n{opt.n_evaluated} evaluations ({opt.n_failed} failed) in {wall:.0f} s, PostgreSQL {tuner.server_version}")
    if default is not None and default.feasible:
        print(f"default configuration: {default.values['tps']:.1f} TPS")
    if best is not None:
        print(f"best found:            {best.values['tps']:.1f} TPS  {dict(best.config)}")
        print(
            "(one noisy pgbench run each: re-measure both before trusting the gap; benchmarks/postgres_tuning.py does)"
        )


if __name__ == "__main__":
    main()
