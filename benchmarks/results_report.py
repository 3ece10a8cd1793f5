"""Markdown report and convergence plots from the JSON lines of ``python -m benchmarks run``.

Conventions (also printed in the report):

* For each (problem, strategy, seed) the record with the largest budget is used (the latest
  if several); records with an error are counted and left out.
* Optimum: the known one (GPU: the best time of the cache's known-feasible set; synthetic: by
  enumeration or analytic). Problems without one (Halide) use the best value found by any
  strategy in the loaded files ("run-best"), so their ratios are relative to that.
* Metrics are those of :mod:`benchmarks.metrics`; the "reference" strategy (default ``bo``)
  is the one compared against each other strategy.
* Runs of problems with several objectives get their own section (:func:`benchmarks.multiobjective_report.multiobjective_report`):
  hypervolume ratios against evaluations, with the known front or the union of the runs' fronts.
"""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks import metrics
from benchmarks.contenders import STRATEGIES
from benchmarks.generalisation import issue_section
from benchmarks.harness import load_records
from benchmarks.multiobjective_report import multiobjective_report
from benchmarks.result_set import Results, is_multiobjective, is_variant

ASK_BINS = ((1, 20), (21, 40), (41, 60), (61, 100), (101, 10**9))


# ---------------------------------------------------------------------------------------
def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def table_best(res: Results, budgets: Sequence[int]) -> list[str]:
    lines = [
        "| problem | optimum | strategy | seeds | " + " | ".join(f"@{b}" for b in budgets) + " |",
        "|---|---|---|---|" + "---|" * len(budgets),
    ]
    for p in res.problems:
        means = {(s, b): res.cell_mean(p, s, b) for s in res.strategies for b in budgets}
        best = {
            b: np.nanmin([means[(s, b)] for s in res.strategies] or [np.nan])
            if any(not math.isnan(means[(s, b)]) for s in res.strategies)
            else math.nan
            for b in budgets
        }
        first = True
        for s in res.strategies:
            runs = res.by_cell.get((p, s))
            if not runs:
                continue
            cells = []
            for b in budgets:
                mean, std, missing = metrics.mean_std(res.relative(p, s, b))
                text = f"{_fmt(mean)} ({_fmt(std)})"
                if missing:
                    text += f" [{missing} none]"
                if not math.isnan(mean) and math.isclose(mean, best[b], rel_tol=1e-12):
                    text = f"**{text}**"
                cells.append(text)
            opt = f"{res.optimum[p]:.5g} ({res.optimum_note[p]})" if first and p in res.optimum else ""
            lines.append(f"| {p if first else ''} | {opt} | {s} | {len(runs)} | " + " | ".join(cells) + " |")
            first = False
    return lines


def table_targets(res: Results, reference: str) -> list[str]:
    gpu = [p for p in res.problems if res.kinds.get(p) == "gpu"]
    if not gpu or reference not in res.strategies:
        return ["(no GPU runs of the reference strategy)"]
    lines = [f"| GPU space | {reference} @60 (target <= 1.05) | {reference} @100 (target <= 1.02) |", "|---|---|---|"]
    for p in gpu:
        cells = []
        for b, target in ((60, 1.05), (100, 1.02)):
            if b > res.max_budget:
                cells.append("not run")
                continue
            m = res.cell_mean(p, reference, b)
            cells.append("–" if math.isnan(m) else f"{m:.3f} {'met' if m <= target else 'NOT met'}")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return lines


def table_needed(res: Results, reference: str, budget: int) -> tuple[list[str], dict[str, list[float]]]:
    peers = [s for s in res.strategies if s != reference]
    factors: dict[str, list[float]] = defaultdict(list)
    if reference not in res.strategies or not peers:
        return ["(needs the reference strategy and at least one other)"], factors
    lines = ["| problem | " + " | ".join(f"vs {s}" for s in peers) + " |", "|---|" + "---|" * len(peers)]
    for p in res.problems:
        a = res.values(p, reference)
        if not a:
            continue
        cells = []
        for s in peers:
            runs = res.values(p, s)
            if not runs:
                cells.append("")
                continue
            r = metrics.evaluations_needed(a, runs, min(budget, res.problem_budget(p)))
            if r["target"] is None:
                cells.append("peer found nothing")
            elif r["k"] is None:
                cells.append(f"not reached in {r['horizon']}")
            else:
                factors[s].append(float(r["factor"]))
                cells.append(f"{r['k']} ({r['factor']:.2f}x)")
        horizon = res.problem_budget(p)
        label = p if horizon >= budget else f"{p} (at {horizon})"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    geo = []
    for s in peers:
        f = factors.get(s, [])
        geo.append(f"{math.exp(np.mean(np.log(f))):.2f}x over {len(f)}" if f else "–")
    lines.append("| geometric mean (where reached) | " + " | ".join(geo) + " |")
    return lines, factors


def mdf_rows(res: Results, problems: Sequence[str], points: Sequence[int]) -> dict[str, dict[str, float | int]]:
    table: dict[str, dict[str, float]] = {}
    for p in problems:
        opt = res.optimum.get(p)
        if opt is None:
            continue
        table[p] = {}
        for s in res.strategies:
            runs = res.values(p, s)
            if runs:
                upto = [b for b in points if b <= res.problem_budget(p)] or [res.problem_budget(p)]
                maes = [metrics.mean_absolute_error(v, opt, upto) for v in runs]
                table[p][s] = metrics.mean_std(maes)[0]
    return metrics.mean_deviation_factors(table)


def table_mdf(res: Results, points: Sequence[int]) -> tuple[list[str], dict[str, dict[str, dict]]]:
    groups = {"all problems": res.problems}
    for kind in ("gpu", "synthetic", "halide"):
        ps = [p for p in res.problems if res.kinds.get(p) == kind]
        if ps:
            groups[kind] = ps
    results = {g: mdf_rows(res, ps, points) for g, ps in groups.items()}
    lines = [
        "| strategy | " + " | ".join(f"{g} (n={len(groups[g])})" for g in groups) + " |",
        "|---|" + "---|" * len(groups),
    ]
    for s in res.strategies:
        cells = []
        for g in groups:
            r = results[g].get(s)
            cells.append(f"{r['mdf']:.3f} ± {r['std']:.3f}" if r else "–")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines, results


def table_wins(res: Results, reference: str, budgets: Sequence[int]) -> list[str]:
    cells = {(p, b): {s: res.cell_mean(p, s, b) for s in res.strategies} for p in res.problems for b in budgets}
    wins = metrics.win_fractions(cells, reference, [s for s in res.strategies if s != reference])
    lines = [
        f"| {reference} vs | cells | wins | ties | losses | win fraction (target >= 0.90) |",
        "|---|---|---|---|---|---|",
    ]
    for s, w in wins.items():
        lines.append(f"| {s} | {w['cells']} | {w['wins']} | {w['ties']} | {w['losses']} | {_fmt(w['fraction'], 2)} |")
    return lines


def table_overhead(res: Results) -> list[str]:
    bins = [b for b in ASK_BINS if b[0] <= res.max_budget]
    head = " | ".join(f"ask ms {lo}-{min(hi, res.max_budget)}" for lo, hi in bins)
    lines = [
        f"| strategy | runs | {head} | ask ms p95 | strategy s/run | eval s/run | peak RSS MB | RSS growth MB | failures |",
        "|---|---|" + "---|" * len(bins) + "---|---|---|---|---|---|",
    ]
    for s in res.strategies:
        runs = [r for r in res.runs if r["strategy"] == s]
        asks = [np.asarray(r.get("ask_s", []), float) for r in runs]
        cells = []
        for lo, hi in bins:
            chunk = [a[lo - 1 : hi] for a in asks if len(a) >= lo]
            flat = np.concatenate(chunk) if chunk else np.empty(0)
            cells.append(_fmt(1e3 * flat.mean(), 1) if len(flat) else "–")
        all_ask = np.concatenate(asks) if asks else np.empty(0)
        p95 = _fmt(1e3 * float(np.percentile(all_ask, 95)), 1) if len(all_ask) else "–"
        strat = np.mean([r.get("strategy_s", 0.0) for r in runs])
        ev = np.mean([r.get("eval_total_s", 0.0) for r in runs])
        peak = [r["peak_rss_mb"] for r in runs if r.get("peak_rss_mb") is not None]
        delta = [r["rss_delta_mb"] for r in runs if r.get("rss_delta_mb") is not None]
        n_eval = sum(len(r.get("feasible", [])) for r in runs)
        n_fail = sum(1 for r in runs for ok in r.get("feasible", []) if not ok)
        lines.append(
            f"| {s} | {len(runs)} | "
            + " | ".join(cells)
            + f" | {p95} | {strat:.2f} | {ev:.2f} | {_fmt(np.mean(peak) if peak else None, 0)}"
            f" | {_fmt(np.mean(delta) if delta else None, 1)} | {n_fail}/{n_eval} |"
        )
    return lines


# ---------------------------------------------------------------------------------------
def plot_convergence(res: Results, directory: str | os.PathLike) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    colours = list(plt.get_cmap("tab20").colors)
    for p in res.problems:
        opt = res.optimum.get(p)
        if not opt:
            continue
        fig, ax = plt.subplots(figsize=(8.4, 4.6), dpi=110)
        top = 1.0
        for i, s in enumerate(res.strategies):
            runs = res.values(p, s)
            if not runs:
                continue
            m = metrics.curves(runs) / opt
            x = np.arange(1, m.shape[1] + 1)
            ok = ~np.isnan(m).any(axis=0)  # from the first evaluation where every seed has a value
            mean, lo, hi = (np.full(m.shape[1], np.nan) for _ in range(3))
            if ok.any():
                mean[ok] = m[:, ok].mean(axis=0)
                lo[ok], hi[ok] = np.percentile(m[:, ok], [25, 75], axis=0)
            c = colours[i % len(colours)]
            peer = s in STRATEGIES and STRATEGIES[s].family == "peer"
            ax.plot(
                x, mean, label=f"{s} (n={len(runs)})", color=c, lw=2.4 if s == "bo" else 1.3, ls="--" if peer else "-"
            )
            if s == "bo" or len(res.strategies) <= 6:  # quartile bands only where they stay readable
                ax.fill_between(x, lo, hi, color=c, alpha=0.12, lw=0)
            after = mean[x >= min(10, len(x))]
            if np.isfinite(after).any():
                top = max(top, float(np.nanmax(after)))
        upper = max(1.1, top * 1.05)
        if upper > 3.0:  # wide range: log scale with plain labels
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylim(0.98, upper)
        ax.axhline(1.0, color="k", lw=0.8, ls=":")
        for b in res.budgets:
            ax.axvline(b, color="grey", lw=0.5, ls="--", alpha=0.5)
        note = " (relative to the best found in this run)" if res.optimum_note.get(p) == "run-best" else ""
        ax.set_title(f"{p}{note}", fontsize=10)
        ax.set_xlabel("evaluations (failures included)")
        ax.set_ylabel("best so far / optimum (mean)")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            title="dashed: peers; band: bo's quartiles" if len(res.strategies) > 6 else None,
            title_fontsize=7,
        )
        fig.tight_layout()
        path = out_dir / f"{p}.png"
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_mdf(mdf: dict[str, dict[str, float | int]], path: str | os.PathLike, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(mdf, key=lambda s: mdf[s]["mdf"])
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    ax.bar(names, [mdf[s]["mdf"] for s in names], yerr=[mdf[s]["std"] for s in names], capsize=4, color="#4c72b0")
    ax.set_ylabel("mean deviation factor (lower is better)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


# ---------------------------------------------------------------------------------------
def build_report(
    res: Results,
    *,
    budgets: Sequence[int],
    reference: str,
    commands: Sequence[str],
    plot_paths: Sequence[Path],
    out_path: Path,
    mdf_points: Sequence[int],
    note: str | None = None,
) -> str:
    max_b = max(budgets) if budgets else res.max_budget
    seeds = sorted({len(v) for v in res.by_cell.values()})
    lines = ["# bayestune benchmark results", ""]
    if note:
        lines += [f"> {note}", ""]
    lines += [
        "Generated by `python -m benchmarks report` from the JSON lines of `python -m benchmarks run`.",
        f"{len(res.runs)} runs: {len(res.problems)} problems x {len(res.strategies)} strategies "
        f"({', '.join(res.strategies)}), seeds per cell: {', '.join(map(str, seeds))}; "
        f"budgets {', '.join(map(str, budgets))}; reference strategy `{reference}`.",
        "",
    ]
    if res.errors:
        lines += [f"**{len(res.errors)} run(s) ended with an error and are left out.**", ""]
    lines += ["## Commands", "", "```"] + list(commands) + ["```", ""]
    host = next((r.get("host") for r in res.runs if r.get("host")), {})
    versions = next((r.get("versions") for r in res.runs if r.get("versions")), {})
    halide = next(
        (r["versions"]["halide"] for r in res.runs if r.get("versions", {}).get("halide") not in (None, "?")), None
    )
    env = ", ".join(f"{k} {v}" for k, v in versions.items() if k != "halide")
    lines += [
        "## Setup",
        "",
        f"- machine: {host.get('processor', '?')}, {host.get('cpus', '?')} CPUs, {host.get('system', '?')}; {env}"
        + (f"; halide {halide}" if halide else ""),
        "- budget = unique evaluations, failures included; every strategy gets the same black box "
        "(`benchmarks.budget.CountedObjective`: repeats free, proposals outside the known-feasible set "
        "rejected without charge).",
        "- value = best feasible value within the budget / the problem's optimum (1.0 = optimum found); "
        "mean (sample std) over seeds; `[k none]` = seeds without any feasible value yet (left out of the mean). "
        "Bold: the best mean in the cell.",
        "- optimum: `cache` = best recorded time of the known-feasible set; `enumeration`/`analytic` = exact; "
        "`run-best` = no known optimum (live Halide timings): the best value any strategy found in these "
        "results, so ratios are relative to it and change when more runs are added.",
        "- Halide values are live timings (min of 5-50 runs after a warm-up, compiled and run in a forked "
        "process with a 10 s limit) and carry measurement noise of a few percent.",
        "",
    ]
    lines += ["## Best / optimum at each budget", ""] + table_best(res, budgets) + [""]
    lines += (
        [
            "## Targets on the GPU spaces",
            "",
            "The targets for the reference strategy: mean best/optimum "
            "<= 1.05 at 60 and <= 1.02 at 100 evaluations on every GPU space.",
            "",
        ]
        + table_targets(res, reference)
        + [""]
    )
    needed, _ = table_needed(res, reference, max_b)
    lines += [
        f"## Evaluations `{reference}` needs to reach each strategy's result at {max_b}",
        "",
        f"BaCO section 5 style: `k` = the smallest number of evaluations at which `{reference}`'s mean "
        f"best-so-far curve (mean over seeds) is at or below the other strategy's mean best at {max_b} "
        f"evaluations; the factor is {max_b}/k (higher is better for `{reference}`; the target is >= 3, "
        "i.e. the peer's result in a third of the evaluations). 'not reached' = never within the runs.",
        "",
    ]
    lines += needed + [""]
    mdf_lines, mdf = table_mdf(res, mdf_points)
    lines += (
        [
            "## Mean deviation factor (Kernel Tuner BO paper, section IV-A)",
            "",
            f"Per run MAE = mean over budgets {', '.join(map(str, mdf_points))} of |best - optimum|; per problem "
            "each strategy's mean MAE divided by the mean over strategies; MDF = mean of those factors over the "
            "problems ± their standard deviation. Lower is better; 1.0 is the average of the strategies compared.",
            "",
        ]
        + mdf_lines
        + [""]
    )
    lines += (
        [
            f"## Win fractions of `{reference}`",
            "",
            "Cells = (problem, budget) pairs with both strategies run; a win = strictly lower mean best/optimum. "
            "Target: better than every peer in >= 90 % of the cells.",
            "",
        ]
        + table_wins(res, reference, budgets)
        + [""]
    )
    lines += (
        [
            "## Time and memory per strategy",
            "",
            "`ask ms a-b`: mean wall time of one suggestion (the strategy's work between two evaluations, its "
            "tell included) over evaluations a..b; `strategy s/run`: total strategy time of a run; `eval s/run`: "
            "time in the black box (replay lookups are ~free; Halide compiles and runs). Peak RSS: the process's "
            "resident high-water mark during the run (Linux `VmHWM`, reset per run), which includes the problem's "
            "data; growth = peak minus the resident size at the run's start.",
            "",
        ]
        + table_overhead(res)
        + [""]
    )
    if plot_paths:
        lines += ["## Convergence plots", ""]
        for p in plot_paths:
            rel = os.path.relpath(p, out_path.parent)
            lines += [f"![{p.stem}]({rel})", ""]
    return "\n".join(lines) + "\n"


def included_section(path: str | os.PathLike, out_path: Path) -> str:
    """Another report (e.g. the multi-objective one) as a section of this one: its headings one
    level deeper and its relative links (images) rebased onto ``out_path``'s directory."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")

    def rebase(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^[a-z]+:|^/|^#", target):
            return match.group(0)
        return f"{match.group(1)}({os.path.relpath(path.parent / target, out_path.parent)})"

    text = re.sub(r"(!?\[[^\]]*\])\(([^)\s]+)\)", rebase, text)
    return re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)


# ---------------------------------------------------------------------------------------


def write_report(
    paths: Sequence[str],
    out: str | os.PathLike,
    *,
    plots: str | None = None,
    budgets: Sequence[int] | None = None,
    reference: str = "bo",
    command: str | None = None,
    note: str | None = None,
    include: Sequence[str] = (),
    mdf_points: Sequence[int] | None = None,
) -> Path:
    """The report of the runs in ``paths``: single-objective tables, then a section for the
    multi-objective runs if there are any (alone if there is nothing else). ``mdf_points``: the
    budgets the mean deviation factor averages over (default: 40, 60, ... up to the largest
    tabulated budget, as Kernel Tuner's 20 i)."""
    records = [r for p in paths for r in load_records(p)]
    if not records:
        raise SystemExit(f"no records in {list(paths)}")
    several = [r for r in records if is_multiobjective(r)]
    records = [r for r in records if not is_multiobjective(r)]
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if not records:
        text = multiobjective_report(
            several, command=command or "python -m benchmarks report", out_path=out_path, plots=plots
        )
        out_path.write_text(text, encoding="utf-8")
        return out_path
    every = Results(records)  # variants of a strategy (ablations, screens) only in the issue-17 section,
    main = [r for r in records if not is_variant(r["strategy"]) or r["strategy"] == reference]  # or the reference
    res = Results(main) if main else every
    budgets = list(budgets or every.budgets)
    commands = []
    for r in records:
        c = r.get("command")
        if c and c not in commands:
            commands.append(c)
    if command:
        commands.append(command)
    points = list(mdf_points) if mdf_points else (metrics.kernel_tuner_points(max(budgets)) or [max(budgets)])
    plot_paths: list[Path] = []
    if plots:
        plot_paths = plot_convergence(res, plots)
        _, mdf = table_mdf(res, points)
        if mdf.get("all problems"):
            plot_paths.append(
                plot_mdf(
                    mdf["all problems"],
                    Path(plots) / "mdf.png",
                    f"Mean deviation factor over {len(res.problems)} problems",
                )
            )
    text = build_report(
        res,
        budgets=budgets,
        reference=reference,
        commands=commands,
        plot_paths=plot_paths,
        out_path=out_path,
        mdf_points=points,
        note=note,
    )
    text += "\n".join(issue_section(every, reference, budgets)) + "\n"
    if several:
        text += (
            "\n"
            + multiobjective_report(
                several, command=command or "python -m benchmarks report", out_path=out_path, plots=plots, heading="##"
            )
            + "\n"
        )
    for extra in include:
        text += "\n" + included_section(extra, out_path)
    out_path.write_text(text, encoding="utf-8")
    return out_path
