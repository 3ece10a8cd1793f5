"""The issue-17 protocol: is a default better *in general*, and by how much, with what certainty.

Sections of the report (each a function returning Markdown lines):

* :func:`table_issue_targets` — geometric mean over spaces of the mean best/optimum of the
  reference and of the best peer at each budget, with bootstrap intervals, against the targets.
* :func:`table_peer_tests` — per peer: (space, budget) cells won, and a paired Wilcoxon test over
  spaces at each budget.
* :func:`table_thirds` — BaCO's view: the geometric mean after ⅓, ⅔ and all of the budget.
* :func:`table_ablations` — every variant of the reference (``bo:key=value+...``, see
  :func:`benchmarks.contenders.parse_variant`) against the reference on the same spaces and seeds.
* :func:`table_leave_one_out` — how a default would be chosen among the reference and its
  variants with one space left out at a time, and what that choice scores on the left-out space.

Pairing: a variant is compared with the reference only on the seeds both have on a space, so a
screen with 3 seeds is read against the reference's first 3 seeds, not its 10.

Spaces run to a smaller budget (the Halide problems stop at 60 evaluations): by default a space
counts only if the compared strategies reached the largest budget tabulated. With
``per_space_budgets=True`` each space is read at the tabulated budgets its runs reached instead
(a Halide space then counts at 20, 40 and 60 and is absent at 100, and its leave-one-out score is
the mean over those budgets). :func:`loso_section` (and ``python -m benchmarks.generalisation``)
uses that to run the protocol over any kinds of spaces, e.g. GPU + synthetic + Halide.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from benchmarks import metrics
from benchmarks.contenders import STRATEGIES
from benchmarks.result_set import Results, is_multiobjective, is_variant

#: Issue 17's targets for the geometric mean of best/optimum, and for the share of cells won.
TARGETS = {20: 1.12, 40: 1.06, 60: 1.05, 100: 1.02}
WIN_TARGET = 0.90


def is_peer(strategy: str) -> bool:
    entry = STRATEGIES.get(strategy)
    return entry is not None and entry.family == "peer"


def seed_ratios(res, problem: str, strategy: str, budget: int) -> dict[int, float]:
    """``{seed: best/optimum after budget}`` of the runs that reached ``budget``."""
    opt = res.optimum.get(problem)
    if not opt:
        return {}
    return {
        int(r["seed"]): metrics.best_at(r["values"], budget) / opt
        for r in res.by_cell.get((problem, strategy), [])
        if r.get("values") and int(r["budget"]) >= budget
    }


def space_means(
    res, strategy: str, spaces: Sequence[str], budget: int, seeds: Mapping[str, set[int]] | None = None
) -> dict[str, float]:
    """Per space, the mean best/optimum over the seeds (those in ``seeds[space]`` if given)."""
    out = {}
    for p in spaces:
        r = seed_ratios(res, p, strategy, budget)
        vals = [v for s, v in r.items() if (seeds is None or s in seeds[p]) and math.isfinite(v)]
        if vals:
            out[p] = float(np.mean(vals))
    return out


def _ci(res, strategy: str, spaces: Sequence[str], budget: int) -> tuple[float, float, float, int]:
    per = {p: list(seed_ratios(res, p, strategy, budget).values()) for p in spaces}
    per = {p: v for p, v in per.items() if v}
    est, lo, hi = metrics.bootstrap_geomean_ci(per)
    return est, lo, hi, len(per)


def _fmt_ci(est: float, lo: float, hi: float) -> str:
    return "–" if math.isnan(est) else f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


def table_issue_targets(res, reference: str, spaces: Sequence[str], budgets: Sequence[int]) -> list[str]:
    peers = [s for s in res.strategies if is_peer(s)]
    lines = [
        f"| budget | `{reference}` geo-mean [95 % CI] | best peer at this budget [95 % CI] | target | "
        f"`{reference}` meets it |",
        "|---|---|---|---|---|",
    ]
    for b in budgets:
        est, lo, hi, n = _ci(res, reference, spaces, b)
        best = None
        for s in peers:
            e = _ci(res, s, spaces, b)
            if e[3] == n and not math.isnan(e[0]) and (best is None or e[0] < best[1][0]):
                best = (s, e)
        peer = f"{best[0]}: {_fmt_ci(*best[1][:3])}" if best else "–"
        target = TARGETS.get(b)
        met = "–" if target is None or math.isnan(est) else ("met" if est <= target else "missed")
        lines.append(
            f"| @{b} | {_fmt_ci(est, lo, hi)} (n={n}) | {peer} | {'≤ ' + str(target) if target else '–'} | {met} |"
        )
    return lines


def table_peer_tests(res, reference: str, spaces: Sequence[str], budgets: Sequence[int]) -> list[str]:
    others = [s for s in res.strategies if s != reference and not is_variant(s)]
    head = " | ".join(f"@{b}: better/worse, p" for b in budgets)
    lines = [
        f"| `{reference}` vs | family | cells won (target ≥ {WIN_TARGET:.0%}) | {head} |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for s in others:
        cells = {
            (p, b): {reference: m_ref, s: m_s}
            for b in budgets
            for p in spaces
            for m_ref, m_s in [
                (space_means(res, reference, [p], b).get(p, math.nan), space_means(res, s, [p], b).get(p, math.nan))
            ]
        }
        w = metrics.win_fractions(cells, reference, [s])[s]
        if not w["cells"]:
            continue
        verdict = "met" if w["fraction"] >= WIN_TARGET else "missed"
        tests = []
        for b in budgets:
            t = metrics.paired_wilcoxon(space_means(res, reference, spaces, b), space_means(res, s, spaces, b))
            p_text = "–" if math.isnan(t["p"]) else f"{t['p']:.3f}"
            tests.append(f"{t['better']}/{t['worse']}, {p_text}")
        family = "peer" if is_peer(s) else "baseline"
        lines.append(
            f"| {s} | {family} | {w['wins']}/{w['cells']} = {w['fraction']:.0%} ({verdict}) | "
            + " | ".join(tests)
            + " |"
        )
    return lines


def table_thirds(res, reference: str, spaces: Sequence[str], budget: int) -> list[str]:
    points = metrics.baco_budget_points(budget)
    lines = ["| strategy | " + " | ".join(f"@{b}" for b in points) + " |", "|---|" + "---|" * len(points)]
    for s in [reference] + [x for x in res.strategies if x != reference and not is_variant(x)]:
        cells = []
        for b in points:
            est, lo, hi, n = _ci(res, s, spaces, b)
            cells.append(_fmt_ci(est, lo, hi) if n == len(spaces) else "–")
        if any(c != "–" for c in cells):
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


def _common_seeds(res, strategies: Sequence[str], spaces: Sequence[str], budget: int) -> dict[str, set[int]]:
    return {p: set.intersection(*(set(seed_ratios(res, p, s, budget)) for s in strategies)) for p in spaces}


def space_plan(
    res, candidates: Sequence[str], spaces: Sequence[str], budgets: Sequence[int], per_space_budgets: bool = False
) -> dict[str, tuple[list[int], set[int]]]:
    """``{space: (budgets, seeds)}``: the budgets each space is read at and the seeds every
    candidate ran to the largest of them. Default: all of ``budgets``, seeds that reached
    ``max(budgets)``. ``per_space_budgets``: the budgets up to the largest one at which the
    candidates share at least one seed (a space run to 60 is read at 20/40/60). Spaces without
    common seeds are left out."""
    out: dict[str, tuple[list[int], set[int]]] = {}
    tops = sorted(set(budgets), reverse=True) if per_space_budgets else [max(budgets)]
    for p in spaces:
        for top in tops:
            seeds = _common_seeds(res, candidates, [p], top)[p]
            if seeds:
                out[p] = ([b for b in budgets if b <= top], seeds)
                break
    return out


def table_ablations(
    res, reference: str, spaces: Sequence[str], budgets: Sequence[int], per_space_budgets: bool = False
) -> list[str]:
    variants = [s for s in res.strategies if is_variant(s) and s.split(":", 1)[0] == reference]
    if not variants:
        return ["(no variants of the reference were run)"]
    lines = [
        f"Each cell: geometric mean over the spaces of (variant mean / `{reference}` mean) on the seeds both "
        "ran (< 1: the variant is better), then spaces better/worse and the Wilcoxon p over spaces"
        + (" (n: the spaces run to that budget)" if per_space_budgets else "")
        + ".",
        "",
        "| variant | spaces | seeds per space | " + " | ".join(f"@{b}" for b in budgets) + " |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for v in variants:
        covered = [p for p in spaces if res.by_cell.get((p, v))]
        if not covered:
            continue
        plan = space_plan(res, [reference, v], covered, budgets, per_space_budgets)
        covered = [p for p in covered if p in plan]
        if not covered:
            continue
        common = {p: plan[p][1] for p in covered}
        cells = []
        for b in budgets:
            at_b = [p for p in covered if b in plan[p][0]]
            a = space_means(res, v, at_b, b, common)
            r = space_means(res, reference, at_b, b, common)
            t = metrics.paired_wilcoxon(a, r)
            ratio = metrics.geometric_mean(a[p] / r[p] for p in a if p in r)
            p_text = "–" if math.isnan(t["p"]) else f"{t['p']:.2f}"
            n_text = f"n {len(at_b)}, " if per_space_budgets else ""
            cells.append("–" if not at_b else f"{ratio:.3f} ({t['better']}/{t['worse']}, {n_text}p {p_text})")
        n_seeds = sorted({len(common[p]) for p in covered})
        lines.append(f"| `{v}` | {len(covered)} | {', '.join(map(str, n_seeds))} | " + " | ".join(cells) + " |")
    return lines


def loo_scores(
    res, candidates: Sequence[str], spaces: Sequence[str], budgets: Sequence[int], per_space_budgets: bool = False
) -> dict[str, dict[str, float]]:
    """``{candidate: {space: mean over budgets of log(mean best/optimum)}}`` on the seeds every
    candidate ran on that space (``per_space_budgets``: over the budgets that space reached)."""
    plan = space_plan(res, candidates, spaces, budgets, per_space_budgets)
    common = {p: seeds for p, (_, seeds) in plan.items()}
    out: dict[str, dict[str, float]] = {c: {} for c in candidates}
    for p in spaces:
        if p not in plan:
            continue
        for c in candidates:
            logs = [math.log(space_means(res, c, [p], b, common)[p]) for b in plan[p][0]]
            out[c][p] = float(np.mean(logs))
    return out


def table_leave_one_out(
    res, reference: str, spaces: Sequence[str], budgets: Sequence[int], per_space_budgets: bool = False
) -> list[str]:
    candidates = [reference] + [s for s in res.strategies if is_variant(s) and s.split(":", 1)[0] == reference]
    candidates = [c for c in candidates if any(res.by_cell.get((p, c)) for p in spaces)]
    spaces = [p for p in spaces if all(res.by_cell.get((p, c)) for c in candidates)]
    scores = loo_scores(res, candidates, spaces, budgets, per_space_budgets)
    spaces = [p for p in spaces if all(p in scores[c] for c in candidates)]
    if len(candidates) < 2 or len(spaces) < 2:
        return ["(leave-one-out needs the reference and at least one variant run on every space)"]
    chosen = metrics.leave_one_out({c: scores[c] for c in candidates}, spaces)
    lines = [
        f"Candidates: {', '.join(f'`{c}`' for c in candidates)}; spaces every candidate ran: {len(spaces)}. Score = geometric mean over budgets "
        f"{', '.join(map(str, budgets))} of the mean best/optimum (seeds common to all candidates"
        + ("; a space run to a smaller budget is scored on the budgets it reached" if per_space_budgets else "")
        + ").",
        "",
        f"| left-out space | chosen on the other {len(spaces) - 1} | its left-out score | `{reference}` there | "
        "ratio |",
        "|---|---|---|---|---|",
    ]
    ratios = []
    for p in spaces:
        c, score = chosen[p]
        ref = scores[reference][p]
        ratios.append(math.exp(score - ref))
        lines.append(f"| {p} | `{c}` | {math.exp(score):.3f} | {math.exp(ref):.3f} | {math.exp(score - ref):.3f} |")
    lines.append(f"| **geometric mean** | | | | **{metrics.geometric_mean(ratios):.3f}** |")
    return lines


def issue_section(res, reference: str, budgets: Sequence[int]) -> list[str]:
    """The whole issue-17 section: on the GPU spaces (the shared stand-ins for the held-out ones)
    and on the development set (GPU + synthetic)."""
    gpu = [p for p in res.problems if res.kinds.get(p) == "gpu"]
    dev = [p for p in res.problems if res.kinds.get(p) in ("gpu", "synthetic")]
    if reference not in res.strategies or not gpu:
        return []
    lines = [
        "## Generalisation protocol (issue 17)",
        "",
        "Geometric means are over spaces of each space's mean over seeds; intervals: 95 % percentile "
        "bootstrap resampling seeds within spaces. Wilcoxon: two-sided signed-rank test over spaces, paired "
        "on each space's mean (better/worse = spaces where the reference's mean is lower/higher).",
        "",
        f"### Targets on the {len(gpu)} shared GPU spaces",
        "",
    ]
    lines += table_issue_targets(res, reference, gpu, budgets) + [""]
    lines += ["### Per strategy: cells won and paired tests (GPU spaces)", ""]
    lines += table_peer_tests(res, reference, gpu, budgets) + [""]
    if max(budgets) >= 3:
        lines += [f"### BaCO's view: after ⅓, ⅔ and all of {max(budgets)} evaluations (GPU spaces)", ""]
        lines += table_thirds(res, reference, gpu, max(budgets)) + [""]
    lines += [f"### Ablations of `{reference}` (development set: GPU + synthetic)", ""]
    lines += table_ablations(res, reference, dev, budgets) + [""]
    lines += ["### Default selection, leave one space out (development set)", ""]
    lines += table_leave_one_out(res, reference, dev, budgets) + [""]
    return lines


def table_per_space(
    res,
    reference: str,
    spaces: Sequence[str],
    budgets: Sequence[int],
    candidates: Sequence[str] | None = None,
    per_space_budgets: bool = True,
) -> list[str]:
    """Per space and candidate: the mean best/optimum at each budget on the seeds all candidates
    ran there, and (variants) the ratio to the reference's mean."""
    if candidates is None:
        candidates = [reference] + [s for s in res.strategies if is_variant(s) and s.split(":", 1)[0] == reference]
    lines = [
        f"Mean best/optimum over the seeds every listed strategy ran (variants: / `{reference}`'s mean in "
        "brackets, < 1 = better, and the Wilcoxon p over seeds, paired by seed, where at least two differ); "
        "– = budget not run.",
        "",
        "| space | strategy | seeds | " + " | ".join(f"@{b}" for b in budgets) + " |",
        "|---|---|---|" + "---|" * len(budgets),
    ]
    for p in spaces:
        here = [c for c in candidates if res.by_cell.get((p, c))]
        if reference not in here:
            continue
        plan = space_plan(res, here, [p], budgets, per_space_budgets)
        if p not in plan:
            continue
        bs, seeds = plan[p]
        for c in here:
            cells = []
            for b in budgets:
                if b not in bs:
                    cells.append("–")
                    continue
                m = space_means(res, c, [p], b, {p: seeds})[p]
                ref = space_means(res, reference, [p], b, {p: seeds})[p]
                if c == reference:
                    cells.append(f"{m:.3f}")
                    continue
                mine, theirs = seed_ratios(res, p, c, b), seed_ratios(res, p, reference, b)
                t = metrics.paired_wilcoxon({s: mine[s] for s in seeds}, {s: theirs[s] for s in seeds})
                cells.append(f"{m:.3f} ({m / ref:.3f}" + ("" if math.isnan(t["p"]) else f", p {t['p']:.2f}") + ")")
            lines.append(f"| {p} | `{c}` | {len(seeds)} | " + " | ".join(cells) + " |")
    return lines


def loso_by_budget(
    res, reference: str, variant: str, spaces: Sequence[str], budget: int
) -> tuple[float, int, int] | None:
    """Leave-one-space-out between the reference and one variant at one budget: with each space
    left out, the one of the two with the lower geometric mean best/optimum on the others is
    chosen. -> (geometric mean over left-out spaces of chosen/reference there, times the variant
    was chosen, spaces). None below two spaces run to ``budget`` by both."""
    pair = [reference, variant]
    seeds = _common_seeds(res, pair, [p for p in spaces if all(res.by_cell.get((p, c)) for c in pair)], budget)
    spaces = [p for p, s in seeds.items() if s]
    if len(spaces) < 2:
        return None
    scores = {c: {p: math.log(space_means(res, c, [p], budget, seeds)[p]) for p in spaces} for c in pair}
    chosen = metrics.leave_one_out(scores, spaces)
    ratios = [math.exp(score - scores[reference][p]) for p, (_, score) in chosen.items()]
    n_variant = sum(c == variant for c, _ in chosen.values())
    return metrics.geometric_mean(ratios), n_variant, len(spaces)


def table_loso_by_budget(res, reference: str, spaces: Sequence[str], budgets: Sequence[int]) -> list[str]:
    variants = [s for s in res.strategies if is_variant(s) and s.split(":", 1)[0] == reference]
    lines = [
        f"Each variant against `{reference}` alone, one budget at a time: with each space left out, the better "
        "of the two on the other spaces (geometric mean of the mean best/optimum, common seeds) is chosen "
        f"and scored on the left-out space. Cell: geometric mean over left-out spaces of chosen / `{reference}` "
        "(> 1: choosing by LOSO would have lost), then how often the variant was chosen / spaces.",
        "",
        "| variant | " + " | ".join(f"@{b}" for b in budgets) + " |",
        "|---|" + "---|" * len(budgets),
    ]
    for v in variants:
        cells = []
        for b in budgets:
            out = loso_by_budget(res, reference, v, spaces, b)
            cells.append("–" if out is None else f"{out[0]:.3f} ({out[1]}/{out[2]})")
        lines.append(f"| `{v}` | " + " | ".join(cells) + " |")
    return lines


def loso_section(
    res, reference: str, budgets: Sequence[int], kinds: Sequence[str] = ("gpu", "synthetic"), per_space: bool = True
) -> list[str]:
    """The ablation and leave-one-space-out tables over the spaces of ``kinds``, each space read at
    the budgets it was run to."""
    spaces = [p for p in res.problems if res.kinds.get(p) in kinds]
    if reference not in res.strategies or not spaces:
        return [f"(no `{reference}` runs on spaces of kinds {', '.join(kinds)})"]
    by_kind = [
        f"{k}: {', '.join(p for p in spaces if res.kinds.get(p) == k)}"
        for k in kinds
        if any(res.kinds.get(p) == k for p in spaces)
    ]
    lines = [
        f"## Ablations and leave one space out over {', '.join(kinds)} ({len(spaces)} spaces)",
        "",
        "Spaces — " + "; ".join(by_kind) + ". A space run to a smaller budget (Halide: 60) is read at the "
        "budgets it reached; `run-best` optima (Halide) are the best value in all the files read.",
        "",
    ]
    if per_space:
        lines += ["### Per space", ""] + table_per_space(res, reference, spaces, budgets) + [""]
    lines += [f"### Ablations of `{reference}`", ""]
    lines += table_ablations(res, reference, spaces, budgets, per_space_budgets=True) + [""]
    lines += ["### Leave one space out, per budget (each variant against the reference)", ""]
    lines += table_loso_by_budget(res, reference, spaces, budgets) + [""]
    lines += ["### Leave one space out, all candidates, score over the budgets", ""]
    lines += table_leave_one_out(res, reference, spaces, budgets, per_space_budgets=True) + [""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.generalisation FILES --kinds gpu,synthetic,halide --out X.md``: the
    ablation and leave-one-space-out tables over the chosen kinds of spaces, as Markdown."""
    import argparse
    import sys
    from pathlib import Path

    from benchmarks.jsonl import load_records

    parser = argparse.ArgumentParser(prog="python -m benchmarks.generalisation", description=main.__doc__)
    parser.add_argument("results", nargs="+", help="JSONL files written by `python -m benchmarks run`")
    parser.add_argument("--kinds", default="gpu,synthetic", help="comma list of problem kinds (gpu, synthetic, halide)")
    parser.add_argument("--budgets", default="20,40,60,100")
    parser.add_argument("--reference", default="bo")
    parser.add_argument(
        "--variants",
        default=None,
        help="comma list: only these variants of the reference (default: every variant in the files)",
    )
    parser.add_argument("--no-per-space", action="store_true", help="leave out the per-space table")
    parser.add_argument("--out", default=None, help="Markdown file (default: stdout)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    records = [r for p in args.results for r in load_records(p) if not r.get("error") and not is_multiobjective(r)]
    if args.variants is not None:  # other strategies stay: they set the run-best optimum of spaces without one
        keep = set(args.variants.split(","))
        records = [r for r in records if not is_variant(r["strategy"]) or r["strategy"] in keep]
    res = Results(records)
    budgets = [int(b) for b in args.budgets.split(",")]
    lines = loso_section(
        res, args.reference, budgets, [k for k in args.kinds.split(",") if k], per_space=not args.no_per_space
    )
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
