"""The issue-17 report section on hand-made runs with known answers."""

import math

from benchmarks.generalisation import (
    issue_section,
    loo_scores,
    loso_by_budget,
    loso_section,
    space_plan,
    table_ablations,
)
from benchmarks.result_set import Results


def record(problem, strategy, seed, final, kind="gpu"):
    """A 100-evaluation run whose best is 2.0 until evaluation 50, then ``final`` (optimum 1.0)."""
    values = [2.0] * 50 + [final] * 50
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "budget": 100,
        "budgets": [20, 40, 60, 100],
        "values": values,
        "feasible": [True] * 100,
        "kind": kind,
        "optimum": 1.0,
        "optimum_source": "cache",
    }


def runs():
    out = []
    for p, kind in (("g1", "gpu"), ("g2", "gpu"), ("g3", "gpu"), ("s1", "synthetic")):
        for seed in range(3):
            out.append(record(p, "bo", seed, 1.01, kind))
            out.append(record(p, "optuna_tpe", seed, 1.2, kind))
            if seed < 2:  # a screen with fewer seeds; better except on s1
                out.append(record(p, "bo:epsilon=0.1", seed, 1.5 if p == "s1" else 1.0, kind))
    return Results(out)


def test_section_states_targets_peers_and_thirds():
    text = "\n".join(issue_section(runs(), "bo", [20, 40, 60, 100]))
    assert "| @100 | 1.010 [1.010, 1.010] (n=3) | optuna_tpe: 1.200" in text
    assert "| @20 | 2.000" in text and "missed" in text and "| ≤ 1.02 | met |" in text
    assert "| optuna_tpe | peer | 6/12 = 50% (missed)" in text  # ties at 20 and 40 are not wins
    assert "@34" in text and "@67" in text


def test_ablation_is_paired_on_common_seeds():
    lines = table_ablations(runs(), "bo", ["g1", "g2", "g3", "s1"], [100])
    row = next(line for line in lines if line.startswith("| `bo:epsilon=0.1`"))
    assert "| 4 | 2 |" in row and "(3/1," in row


def test_leave_one_out_scores_each_choice_on_the_space_it_never_saw():
    res = runs()
    scores = loo_scores(res, ["bo", "bo:epsilon=0.1"], ["g1", "g2", "g3", "s1"], [100])
    assert scores["bo:epsilon=0.1"]["g1"] < scores["bo"]["g1"]
    text = "\n".join(issue_section(res, "bo", [100]))
    assert "| s1 | `bo:epsilon=0.1` | 1.500 | 1.010 |" in text
    # with g1 out, the variant's loss on s1 outweighs its small wins on g2, g3: the default stays
    assert "| g1 | `bo` | 1.010 | 1.010 | 1.000 |" in text


def short_record(problem, strategy, seed, final, kind="halide"):
    """A 60-evaluation run (budgets 20/40/60, like the Halide runs) whose best is 2.0 until
    evaluation 30, then ``final``; no known optimum (run-best)."""
    values = [2.0] * 30 + [final] * 30
    return {
        "problem": problem,
        "strategy": strategy,
        "seed": seed,
        "budget": 60,
        "budgets": [20, 40, 60],
        "values": values,
        "feasible": [True] * 60,
        "kind": kind,
        "optimum": None,
        "optimum_source": None,
    }


def mixed_runs():
    """runs() plus a Halide space run to 60 only, where the variant loses (1.3 vs 1.0)."""
    res = runs()
    out = list(res.runs)
    for seed in range(3):
        out.append(short_record("h1", "bo", seed, 1.0))
        if seed < 2:
            out.append(short_record("h1", "bo:epsilon=0.1", seed, 1.3))
    return Results(out)


def test_default_leaves_out_spaces_short_of_the_largest_budget():
    res = mixed_runs()
    spaces = ["g1", "g2", "g3", "s1", "h1"]
    row = next(line for line in table_ablations(res, "bo", spaces, [20, 60, 100]) if line.startswith("| `bo:e"))
    assert row.startswith("| `bo:epsilon=0.1` | 4 | 2 |")  # h1 never reached 100: not compared
    assert loo_scores(res, ["bo", "bo:epsilon=0.1"], spaces, [20, 60, 100])["bo"].keys() == {"g1", "g2", "g3", "s1"}


def test_per_space_budgets_read_a_short_space_at_the_budgets_it_reached():
    res = mixed_runs()
    spaces = ["g1", "g2", "g3", "s1", "h1"]
    plan = space_plan(res, ["bo", "bo:epsilon=0.1"], spaces, [20, 60, 100], per_space_budgets=True)
    assert plan["h1"] == ([20, 60], {0, 1}) and plan["g1"] == ([20, 60, 100], {0, 1})
    row = next(
        line
        for line in table_ablations(res, "bo", spaces, [20, 60, 100], per_space_budgets=True)
        if line.startswith("| `bo:e")
    )
    cells = row.split(" | ")
    assert cells[1:3] == ["5", "2"]
    assert "(3/2, n 5," in cells[4] and "(3/1, n 4," in cells[5]  # @60: h1 and s1 worse; @100: h1 absent
    scores = loo_scores(res, ["bo", "bo:epsilon=0.1"], spaces, [20, 60, 100], per_space_budgets=True)
    # h1 (run-best optimum 1.0): bo 2.0 @20 and 1.0 @60; the variant 2.0 and 1.3
    assert math.isclose(scores["bo"]["h1"], math.log(2.0) / 2)
    assert math.isclose(scores["bo:epsilon=0.1"]["h1"], (math.log(2.0) + math.log(1.3)) / 2)


def test_loso_by_budget_scores_the_choice_on_the_left_out_space():
    res = mixed_runs()
    spaces = ["g1", "g2", "g3", "s1", "h1"]
    # @100 (4 spaces, h1 absent): with g1..g3 left out the variant's 1.0 on two of them vs bo's
    # 1.01 and its 1.5 on s1 lose to bo; with s1 left out the variant wins the other three, and
    # is chosen there, where it scores 1.5 vs 1.01
    ratio, n_variant, n = loso_by_budget(res, "bo", "bo:epsilon=0.1", spaces, 100)
    assert (n_variant, n) == (1, 4)
    assert math.isclose(ratio, (1.5 / 1.01) ** 0.25)
    assert loso_by_budget(res, "bo", "bo:epsilon=0.1", ["g1", "h1"], 100) is None  # one space at 100
    text = "\n".join(loso_section(res, "bo", [20, 60, 100], kinds=("gpu", "synthetic", "halide")))
    assert "over gpu, synthetic, halide (5 spaces)" in text and "halide: h1" in text
    assert "| h1 | `bo:epsilon=0.1` | 2 | 2.000 (1.000) | 1.300 (1.300, p 0.50) | – |" in text
    assert "| `bo:epsilon=0.1` | " in text and "(1/4) |" in text
