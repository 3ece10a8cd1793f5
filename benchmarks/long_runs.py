"""Long runs (issue 31): the budget-1,000 replay of ``bo`` with its training cap against the
uncapped model and random search, summarised from the harness's JSON lines.

Why a module of its own: at 1,000 evaluations the question is not only "how good at the end"
but "does the cap change anything, and from where": a capped run must repeat the uncapped one
exactly while the cap does not bite (its first ``cap + 1`` proposals), and its suggestion time
must stop growing after that. The tables: geo-mean best/optimum at each budget over the spaces
(each space's mean over seeds), the same per space, where capped and uncapped trajectories of
the same seed first part, and the mean seconds per suggestion before and after the cap.

    BAYESTUNE_DATA=... nice -n 19 python -m benchmarks run --problems gpu \\
        --strategies bo,random,bo:max_training_points=none --budgets 100,300,1000 --seeds 2 --out runs.jsonl
    python -m benchmarks.long_runs runs.jsonl [--budgets 100,300,1000] [--out summary.md] [--compact runs.jsonl.gz]

``--compact`` writes the runs without their configurations (values and suggestion seconds
only), gzipped: small enough to keep under benchmarks/results/.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.jsonl import load_records
from benchmarks.metrics import best_so_far, evaluations_to_reach, geometric_mean, relative_best

#: The strategy name of the uncapped model in the replay (a harness variant).
UNCAPPED = "bo:max_training_points=none"
#: The default training cap of bo (bayestune.models.training.DEFAULT_MAX_TRAINING_POINTS).
CAP = 500
#: Fields a compact record keeps.
COMPACT_FIELDS = (
    "problem",
    "strategy",
    "seed",
    "budget",
    "budgets",
    "optimum",
    "n_evaluations",
    "values",
    "ask_s",
    "strategy_s",
    "elapsed_s",
    "command",
    "started",
)


def load(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Error-free single-objective records of JSON-lines files (``.gz``: gzipped)."""
    out = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no results file {path}")
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                records = [json.loads(line) for line in fh if line.strip()]
        else:
            records = load_records(path)
        out.extend(
            r
            for r in records
            if not r.get("error") and len(r.get("objectives") or [None]) <= 1 and r.get("values") is not None
        )
    return out


def compact(records: Sequence[Mapping[str, Any]], path: str | Path) -> None:
    """``records`` without configurations, suggestion seconds rounded to ms, gzipped."""
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in records:
            small = {k: r[k] for k in COMPACT_FIELDS if k in r}
            if "ask_s" in small:
                small["ask_s"] = [round(s, 3) for s in small["ask_s"]]
            fh.write(json.dumps(small) + "\n")


def first_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> int | None:
    """1-based index of the first evaluation where two runs part (their configurations when both
    carry them, else their values); None when one is a prefix of the other."""
    key = "configs" if a.get("configs") is not None and b.get("configs") is not None else "values"
    for i, (x, y) in enumerate(zip(a[key], b[key])):
        if x != y:
            return i + 1
    return None


def by_cell(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[int, Mapping[str, Any]]]]:
    """strategy -> problem -> seed -> record (a later record of the same cell wins)."""
    cells: dict[str, dict[str, dict[int, Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        cells[r["strategy"]][r["problem"]][int(r["seed"])] = r
    return cells


def space_means(runs: Mapping[int, Mapping[str, Any]], budget: int) -> float:
    """Mean best/optimum over the seeds of one space at ``budget`` (NaN: no run reaches it)."""
    values = [
        relative_best(r["values"], budget, r["optimum"])
        for r in runs.values()
        if r.get("optimum") and r["budget"] >= budget
    ]
    values = [v for v in values if math.isfinite(v)]
    return statistics.fmean(values) if values else math.nan


def summary(records: Sequence[Mapping[str, Any]], budgets: Sequence[int], cap: int = CAP) -> str:
    """The Markdown tables of the module docstring."""
    cells = by_cell(records)
    strategies = sorted(cells, key=lambda s: (s != "bo", s != UNCAPPED, s))
    problems = sorted({p for s in cells.values() for p in s})
    lines = [
        "| strategy | spaces | runs | " + " | ".join(f"@{b}" for b in budgets) + " |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for s in strategies:
        means = {b: {p: space_means(runs, b) for p, runs in cells[s].items()} for b in budgets}
        n_runs = sum(len(runs) for runs in cells[s].values())
        cols = []
        for b in budgets:
            finite = [v for v in means[b].values() if math.isfinite(v)]
            cols.append(f"{geometric_mean(finite):.4f} ({len(finite)})" if finite else "–")
        lines.append(f"| {s} | {len(cells[s])} | {n_runs} | " + " | ".join(cols) + " |")
    lines += [
        "",
        (
            "Geo-mean over spaces of each space's mean best/optimum over seeds; (n) spaces with a run "
            "reaching that budget."
        ),
        "",
        "Per space (mean over seeds; seeds; median evaluations to the optimum among the runs that reached it):",
        "",
        "| space | strategy | seeds | " + " | ".join(f"@{b}" for b in budgets) + " | optimum found at |",
        "|---|---|---|" + "---|" * len(budgets) + "---|",
    ]
    for p in problems:
        for s in strategies:
            runs = cells[s].get(p)
            if not runs:
                continue
            reach = [
                evaluations_to_reach(best_so_far(r["values"]), r["optimum"]) for r in runs.values() if r.get("optimum")
            ]
            hit = [k for k in reach if k is not None]
            found = f"{statistics.median(hit):.0f} ({len(hit)}/{len(reach)})" if hit else f"– (0/{len(reach)})"
            cols = [space_means(runs, b) for b in budgets]
            lines.append(
                f"| {p} | {s} | {len(runs)} | "
                + " | ".join("–" if math.isnan(v) else f"{v:.4f}" for v in cols)
                + f" | {found} |"
            )
    lines += ["", *_parting(cells, cap, budgets), "", *_suggestion_seconds(cells, cap)]
    return "\n".join(lines) + "\n"


def _parting(
    cells: Mapping[str, Mapping[str, Mapping[int, Mapping[str, Any]]]], cap: int, budgets: Sequence[int]
) -> list[str]:
    """Where capped and uncapped runs of the same space and seed part, and their best/optimum
    side by side."""
    pairs = [
        (p, seed, first_difference(r, cells[UNCAPPED][p][seed]))
        for p, runs in cells.get("bo", {}).items()
        for seed, r in runs.items()
        if seed in cells.get(UNCAPPED, {}).get(p, {})
    ]
    if not pairs:
        return ["No space has both a capped (bo) and an uncapped run of the same seed."]
    early = [(p, seed, k) for p, seed, k in pairs if k is not None and k <= cap + 1]
    lines = [
        (
            f"Capped (bo) against uncapped ({UNCAPPED}), same space and seed: {len(pairs)} pairs; "
            f"{len(early)} part within the first {cap + 1} evaluations (the cap only bites from "
            f"proposal {cap + 2})."
        ),
        "",
        "| space | seed | first differing evaluation | "
        + " | ".join(f"@{b} capped / uncapped" for b in budgets)
        + " |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for p, seed, k in sorted(pairs):
        runs = (cells["bo"][p][seed], cells[UNCAPPED][p][seed])
        cols = [
            " / ".join(f"{relative_best(r['values'], b, r['optimum']):.4f}" if r["budget"] >= b else "–" for r in runs)
            for b in budgets
        ]
        lines.append(f"| {p} | {seed} | {k if k is not None else 'none'} | " + " | ".join(cols) + " |")
    return lines


def _suggestion_seconds(cells: Mapping[str, Mapping[str, Mapping[int, Mapping[str, Any]]]], cap: int) -> list[str]:
    """Mean seconds per suggestion of each model-based strategy in windows of 100 evaluations:
    the first, the last before the cap bites, the first after, and the last of the runs (flat
    from the cap on is the point of it)."""
    last = max(
        (
            len(r["ask_s"])
            for problems in cells.values()
            for runs in problems.values()
            for r in runs.values()
            if r.get("ask_s")
        ),
        default=0,
    )
    windows = sorted({(1, 100), (cap - 99, cap), (cap + 1, cap + 100), (last - 99, last)})
    windows = [(a, b) for a, b in windows if a >= 1 and b <= last]
    lines = [
        "Mean seconds per suggestion (wall, this shared machine) by evaluation window:",
        "",
        "| strategy | runs | " + " | ".join(f"{a}–{b}" for a, b in windows) + " |",
        "|---|---|" + "---|" * len(windows),
    ]
    for s in sorted(cells):
        asks = [r["ask_s"] for runs in cells[s].values() for r in runs.values() if r.get("ask_s")]
        if not asks or s == "random":
            continue
        cols = []
        for a, b in windows:
            times = [t for ask in asks for t in ask[a - 1 : b]]
            cols.append(f"{statistics.fmean(times):.3f}" if times else "–")
        lines.append(f"| {s} | {len(asks)} | " + " | ".join(cols) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="JSON-lines files of `python -m benchmarks run` (.gz allowed)")
    parser.add_argument("--budgets", default="100,300,1000")
    parser.add_argument("--cap", type=int, default=CAP, help="the training cap the capped runs used")
    parser.add_argument("--out", default=None, help="write the Markdown here (default: print it)")
    parser.add_argument("--compact", default=None, help="also write the runs without configurations, gzipped")
    args = parser.parse_args(argv)
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    except ValueError:
        parser.error(f"--budgets: expected comma-separated integers, but got {args.budgets!r}")
    if not budgets or min(budgets) < 1:
        parser.error(f"--budgets: expected positive integers, but got {args.budgets!r}")
    try:
        records = load(args.results)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    if not records:
        parser.error("no error-free single-objective runs in " + ", ".join(args.results))
    text = summary(records, budgets, args.cap)
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text, end="")
    if args.compact:  # the runs the tables read: one per (strategy, space, seed)
        compact(
            [r for problems in by_cell(records).values() for runs in problems.values() for r in runs.values()],
            args.compact,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
