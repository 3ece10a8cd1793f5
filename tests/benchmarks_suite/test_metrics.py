"""Benchmark metrics on hand-made trajectories with known answers."""

import math

import numpy as np
import pytest

from benchmarks import metrics

N = None  # a failed evaluation


def test_best_so_far_skips_failures():
    c = metrics.best_so_far([N, 5, 3, N, 4, 1])
    assert np.isnan(c[0])
    assert c[1:].tolist() == [5, 3, 3, 3, 1]
    assert np.isnan(metrics.best_so_far([N, N])).all()
    assert np.isnan(metrics.best_so_far([float("nan"), 2.0])[0])


def test_best_at_and_relative_best():
    values = [N, 5, 3, N, 4, 1]
    assert metrics.best_at(values, 1) != metrics.best_at(values, 1)  # NaN: nothing feasible yet
    assert metrics.best_at(values, 2) == 5
    assert metrics.best_at(values, 4) == 3
    assert metrics.best_at(values, 6) == 1
    assert metrics.best_at(values, 100) == 1  # a run that stopped early keeps its final best
    assert metrics.relative_best(values, 4, 2.0) == 1.5
    with pytest.raises(ValueError):
        metrics.relative_best(values, 4, 0.0)
    with pytest.raises(ValueError):
        metrics.best_at(values, 0)


def test_mean_std_leaves_out_missing_seeds():
    mean, std, missing = metrics.mean_std([1.0, 2.0, 3.0, float("nan")])
    assert (mean, missing) == (2.0, 1)
    assert std == pytest.approx(1.0)  # sample standard deviation
    assert metrics.mean_std([4.0]) == (4.0, 0.0, 0)
    m, s, k = metrics.mean_std([float("nan")])
    assert math.isnan(m) and math.isnan(s) and k == 1


def test_curves_extend_short_runs_and_mean_curve_waits_for_every_seed():
    m = metrics.curves([[3, 2, 1], [N, 4]], 4)
    assert m[0].tolist() == [3, 2, 1, 1]
    assert np.isnan(m[1, 0]) and m[1, 1:].tolist() == [4, 4, 4]
    mc = metrics.mean_curve([[3, 2, 1], [N, 4]], 4)
    assert np.isnan(mc[0]) and mc[1:].tolist() == [3.0, 2.5, 2.5]


def test_evaluations_to_reach():
    assert metrics.evaluations_to_reach([5, 3.5, 3, 1.5], 3) == 3
    assert metrics.evaluations_to_reach([np.nan, 2, 1], 2) == 2
    assert metrics.evaluations_to_reach([5, 4], 3) is None


def test_evaluations_needed_uses_mean_curves():
    a = [[5, 4, 3, 2, 1], [5, 3, 3, 1, 1]]  # mean curve 5, 3.5, 3, 1.5, 1
    peer = [[6, 5, 4, 4, 3], [6, 6, 5, 3, 3]]  # best at 5: 3 and 3 -> target 3
    r = metrics.evaluations_needed(a, peer, 5)
    assert r["target"] == 3 and r["k"] == 3 and r["factor"] == pytest.approx(5 / 3)
    # a peer with failures: best at 4 is 4 and 5 -> target 4.5; A reaches 5 >= ... 3.5 at k=2
    r = metrics.evaluations_needed(a, [[N, N, 4, 4], [N, 5, N, N]], 4)
    assert r["target"] == 4.5 and r["k"] == 2 and r["factor"] == 2.0
    # never reached
    r = metrics.evaluations_needed([[9, 9, 9]], [[1, 1, 1]], 3)
    assert r["k"] is None and r["factor"] is None and r["horizon"] == 3
    # the peer found nothing feasible
    r = metrics.evaluations_needed(a, [[N, N, N]], 3)
    assert r["target"] is None and r["factor"] is None


def test_kernel_tuner_points():
    assert metrics.kernel_tuner_points(100) == [40, 60, 80, 100]
    assert metrics.kernel_tuner_points(220) == [40, 60, 80, 100, 120, 140, 160, 180, 200, 220]
    assert metrics.kernel_tuner_points(30) == []


def test_mean_absolute_error_over_budget_points():
    values = [10, N, 8, 6, 5]
    # best at 2 = 10 (error 5), best at 4 = 6 (error 1), best at 5 = 5 (error 0)
    assert metrics.mean_absolute_error(values, 5.0, [2, 4]) == 3.0
    assert metrics.mean_absolute_error(values, 5.0, [2, 4, 5]) == 2.0
    # points without a feasible value are skipped
    assert metrics.mean_absolute_error([N, N, 7], 5.0, [1, 3]) == 2.0
    assert math.isnan(metrics.mean_absolute_error([N, N], 5.0, [1, 2]))


def test_mean_deviation_factors():
    table = {"p1": {"A": 1.0, "B": 3.0}, "p2": {"A": 2.0, "B": 2.0}}
    mdf = metrics.mean_deviation_factors(table)
    # p1: mean 2 -> A 0.5, B 1.5; p2: mean 2 -> A 1, B 1
    assert mdf["A"]["mdf"] == pytest.approx(0.75) and mdf["A"]["std"] == pytest.approx(0.25)
    assert mdf["B"]["mdf"] == pytest.approx(1.25) and mdf["B"]["std"] == pytest.approx(0.25)
    assert mdf["A"]["problems"] == 2
    # every strategy exact on a problem: factor 1 for all; NaN entries take no part
    mdf = metrics.mean_deviation_factors({"p": {"A": 0.0, "B": 0.0, "C": float("nan")}})
    assert mdf["A"]["mdf"] == 1.0 and mdf["B"]["mdf"] == 1.0 and "C" not in mdf


def test_mdf_end_to_end_from_trajectories():
    # two problems, optimum 1; MAE over points [1, 2]
    a_runs = {"p": [[2, 1]], "q": [[3, 1]]}
    b_runs = {"p": [[2, 2]], "q": [[1, 1]]}
    table = {
        p: {
            "A": metrics.mean_absolute_error(a_runs[p][0], 1.0, [1, 2]),
            "B": metrics.mean_absolute_error(b_runs[p][0], 1.0, [1, 2]),
        }
        for p in ("p", "q")
    }
    assert table == {"p": {"A": 0.5, "B": 1.0}, "q": {"A": 1.0, "B": 0.0}}
    mdf = metrics.mean_deviation_factors(table)
    # p: mean .75 -> A 2/3, B 4/3; q: mean .5 -> A 2, B 0
    assert mdf["A"]["mdf"] == pytest.approx((2 / 3 + 2) / 2)
    assert mdf["B"]["mdf"] == pytest.approx((4 / 3 + 0) / 2)


def test_win_fractions():
    cells = {
        ("p", 20): {"A": 1.0, "B": 2.0, "C": 1.0},
        ("p", 40): {"A": 1.5, "B": 1.2, "C": float("nan")},
        ("q", 20): {"A": 1.0, "B": 3.0},
    }
    w = metrics.win_fractions(cells, "A")
    assert w["B"] == {"wins": 2, "ties": 0, "losses": 1, "cells": 3, "fraction": pytest.approx(2 / 3)}
    assert w["C"] == {"wins": 0, "ties": 1, "losses": 0, "cells": 1, "fraction": 0.0}


def test_geometric_mean_ignores_missing_and_non_positive_entries():
    assert metrics.geometric_mean([1.0, 4.0, None, float("nan")]) == pytest.approx(2.0)
    assert math.isnan(metrics.geometric_mean([]))


def test_bootstrap_interval_contains_the_estimate_and_collapses_without_spread():
    est, lo, hi = metrics.bootstrap_geomean_ci({"a": [1.0, 1.2, 1.4], "b": [2.0, 2.0]})
    assert est == pytest.approx(math.sqrt(1.2 * 2.0))
    assert lo < est < hi
    assert metrics.bootstrap_geomean_ci({"a": [1.5, 1.5]}) == pytest.approx((1.5, 1.5, 1.5))


def test_paired_wilcoxon_counts_spaces_and_detects_a_consistent_winner():
    a = {f"s{i}": 1.0 for i in range(8)}
    b = {f"s{i}": 1.1 + 0.01 * i for i in range(8)}
    t = metrics.paired_wilcoxon(a, b)
    assert (t["n"], t["better"], t["worse"]) == (8, 8, 0)
    assert t["p"] < 0.01 and t["median_ratio"] < 1
    assert math.isnan(metrics.paired_wilcoxon({"s": 1.0}, {"s": 2.0})["p"])


def test_baco_thirds_of_a_budget():
    assert metrics.baco_budget_points(100) == [34, 67, 100]
    with pytest.raises(ValueError, match="budget >= 3"):
        metrics.baco_budget_points(2)


def test_leave_one_out_chooses_on_the_other_spaces_only():
    # "tuned" wins on x and y, loses badly on z: left out z it is chosen and scored there.
    scores = {"default": {"x": 0.10, "y": 0.10, "z": 0.10}, "tuned": {"x": 0.05, "y": 0.05, "z": 0.40}}
    chosen = metrics.leave_one_out(scores, ["x", "y", "z"])
    assert chosen["z"] == ("tuned", 0.40)
    assert chosen["x"][0] == "default"  # on y and z the default is better on average
    with pytest.raises(ValueError, match="two spaces"):
        metrics.leave_one_out(scores, ["x"])
