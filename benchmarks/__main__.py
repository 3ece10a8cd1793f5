"""``python -m benchmarks {run,report,list}`` from the repository root (see ``benchmarks/__init__.py``)."""

from __future__ import annotations

import argparse
import sys

from benchmarks.outputs import add_output_option, output_path


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run (problem, strategy, seed) combinations; append JSON lines")
    run.add_argument(
        "--problems",
        required=True,
        help="comma list of problem names or groups: gpu, synthetic, halide, multiobjective, "
        "all (= the single-objective groups)",
    )
    run.add_argument("--strategies", default="bo,random", help="comma list of strategy names (see `list`), or all")
    run.add_argument("--budgets", default="20,40,60,100", help="comma list; each run goes to the largest")
    run.add_argument("--seeds", default="10", help="N (seeds 0..N-1), A-B, or a comma list")
    add_output_option(run, "search-quality", "run.jsonl", what="JSON-lines file the runs are appended to")
    run.add_argument("--jobs", type=int, default=1, help="worker processes (Halide runs stay serial)")

    rep = sub.add_parser("report", help="Markdown tables and PNG plots from results files")
    rep.add_argument("results", nargs="+", help="JSONL files written by `run`")
    add_output_option(rep, "search-quality", "report.md", what="Markdown report")
    rep.add_argument(
        "--plots", default=None, help="directory for PNGs ('' for none; default: plots/ beside the report)"
    )
    rep.add_argument("--budgets", default=None, help="budgets to tabulate (default: those of the runs)")
    rep.add_argument(
        "--mdf-points",
        default=None,
        help="comma list of budgets the mean deviation factor averages over "
        "(default: 40, 60, ... up to the largest budget, Kernel Tuner's 20 i)",
    )
    rep.add_argument("--reference", default="bo", help="the strategy compared with every other one")
    rep.add_argument("--note", default=None, help="a paragraph quoted under the title (e.g. what the run is)")
    rep.add_argument(
        "--include",
        action="append",
        default=[],
        help="a Markdown file appended as a section (e.g. benchmarks/results/multiobjective/multiobjective.md); repeatable",
    )

    sub.add_parser("list", help="list problems and strategies")
    args = parser.parse_args(argv)

    from benchmarks.harness import command_line, parse_ints, parse_seeds

    if args.command == "list":
        from benchmarks.contenders import STRATEGIES
        from benchmarks.problems import KINDS, problem_names

        for kind in KINDS:
            print(f"{kind}: {', '.join(problem_names(kind)) or '(none available)'}")
        for entry in STRATEGIES.values():
            why = entry.available()
            takes = {(True, False): "1 objective", (True, True): "1+ objectives", (False, True): "2+ objectives"}[
                (entry.single_objective, entry.multi_objective)
            ]
            print(f"strategy {entry.name} [{entry.family}; {takes}]" + (f" (unavailable: {why})" if why else ""))
        return 0

    if args.command == "run":
        from benchmarks.contenders import resolve_strategies
        from benchmarks.harness import run_benchmarks
        from benchmarks.problems import resolve_problems

        try:
            problems = resolve_problems(args.problems)
            strategies = resolve_strategies(args.strategies)
        except ValueError as exc:
            parser.error(str(exc))
        if args.jobs < 1:
            parser.error(f"--jobs must be >= 1, but got {args.jobs}")
        budgets = parse_ints(args.budgets, "budgets")
        seeds = parse_seeds(args.seeds)
        out = output_path(args, "search-quality", "run.jsonl")
        records = run_benchmarks(
            problems,
            strategies,
            budgets,
            seeds,
            out,
            jobs=args.jobs,
            command=command_line(argv),
            log=lambda m: print(m, file=sys.stderr, flush=True),
        )
        errors = [r for r in records if r.get("error")]
        print(f"{len(records)} run(s) written to {out}; {len(errors)} with errors", file=sys.stderr)
        return 1 if errors else 0

    from benchmarks.results_report import write_report

    budgets = parse_ints(args.budgets, "budgets") if args.budgets else None
    mdf_points = parse_ints(args.mdf_points, "mdf-points") if args.mdf_points else None
    out = output_path(args, "search-quality", "report.md")
    plots = None if args.plots == "" else (args.plots or str(out.parent / "plots"))
    path = write_report(
        args.results,
        out,
        plots=plots,
        budgets=budgets,
        reference=args.reference,
        command=command_line(argv),
        note=args.note,
        include=args.include,
        mdf_points=mdf_points,
    )
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
