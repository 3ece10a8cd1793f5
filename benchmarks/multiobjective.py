"""``python -m benchmarks.multiobjective {run,report}``: the multi-objective benchmark's command.

The problems are in :mod:`benchmarks.multiobjective_problems`, the runs go through the main
harness (:func:`benchmarks.harness.run_benchmarks`, the budget rules of
:class:`benchmarks.budget.CountedObjective`), the hypervolume metric is
:func:`benchmarks.metrics.hypervolume_ratio_curves` and the tables are
:func:`benchmarks.multiobjective_report.multiobjective_report`; this command only keeps the defaults of the
published runs (``benchmarks/results/multiobjective/multiobjective.md``): one budget, seeds ``0..N-1``,
HyperMapper on fewer seeds. The same runs: ``python -m benchmarks run --problems
multiobjective --strategies ... --budgets 60``.

Strategies: bayestune's ``pareto_rf``, ``parego`` and ``random`` (default configuration + 9
random ones first), Optuna's multi-objective TPE (``optuna_tpe``) and NSGA-II (``optuna_nsga2``)
and HyperMapper 2.2 (``hypermapper``: it conflicts with this environment's scikit-learn, so run
it from a virtual environment, ``python -m venv --system-site-packages V && V/bin/pip install
hypermapper``, as ``V/bin/python -m benchmarks.multiobjective run --strategies hypermapper ...``).

Usage (from the repository root)::

    python -m benchmarks.multiobjective run --problems chakong_haimes,zdt_mixed --seeds 10 --budget 60
    python -m benchmarks.multiobjective run --problems halide_blur_mo --seeds 10 --budget 30
    python -m benchmarks.multiobjective report benchmarks/results/multiobjective/multiobjective.jsonl
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from benchmarks.contenders import STRATEGIES, resolve_strategies
from benchmarks.harness import load_records, run_benchmarks
from benchmarks.multiobjective_problems import MULTIOBJECTIVE_PROBLEMS
from benchmarks.multiobjective_report import MO_ORDER, multiobjective_report
from benchmarks.outputs import add_output_option, output_path


def _default_strategies() -> str:
    return ",".join(s for s in MO_ORDER if s in STRATEGIES and not STRATEGIES[s].available())


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.multiobjective", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument(
        "--problems", default="chakong_haimes,zdt_mixed", help=f"comma list of {list(MULTIOBJECTIVE_PROBLEMS)}"
    )
    r.add_argument(
        "--strategies", default=_default_strategies(), help="comma list (default: all whose packages are importable)"
    )
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--budget", type=int, default=60)
    r.add_argument("--jobs", type=int, default=1)
    add_output_option(r, "multiobjective", "multiobjective.jsonl", what="JSON-lines file the runs are appended to")
    r.add_argument(
        "--hypermapper-seeds", type=int, default=None, help="run HyperMapper (slow) on the first N seeds only"
    )
    rep = sub.add_parser("report")
    rep.add_argument("results", nargs="+")
    add_output_option(rep, "multiobjective", "multiobjective.md", what="Markdown report")
    rep.add_argument(
        "--plots", default=None, help="directory for PNGs ('' for none; default: plots/ beside the report)"
    )
    args = parser.parse_args(argv)
    command = "python -m benchmarks.multiobjective " + shlex.join(argv)
    if args.command == "report":
        records = [rec for path in args.results for rec in load_records(path)]
        out = output_path(args, "multiobjective", "multiobjective.md")
        plots = None if args.plots == "" else (args.plots or str(out.parent / "plots"))
        text = multiobjective_report(records, command=command, out_path=out, plots=plots)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(text)
        return 0
    problems = [p for p in args.problems.split(",") if p]
    unknown = [p for p in problems if p not in MULTIOBJECTIVE_PROBLEMS]
    if unknown:
        parser.error(f"unknown problems {unknown}; known: {list(MULTIOBJECTIVE_PROBLEMS)}")
    try:
        strategies = resolve_strategies(args.strategies)
    except ValueError as exc:
        parser.error(str(exc))
    limits = {"hypermapper": args.hypermapper_seeds} if args.hypermapper_seeds is not None else None
    records = run_benchmarks(
        problems,
        strategies,
        [args.budget],
        list(range(args.seeds)),
        output_path(args, "multiobjective", "multiobjective.jsonl"),
        jobs=args.jobs,
        command=command,
        seed_limits=limits,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    return 1 if any(r.get("error") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
