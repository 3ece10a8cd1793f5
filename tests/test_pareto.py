"""Pareto extraction and hypervolume against brute force (and moocore when installed)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.pareto import (
    hypervolume,
    hypervolume_mc,
    hypervolume_trace,
    pareto_mask,
    pareto_trials,
    reference_point,
    to_minimization,
)
from bayestune.trial import Trial, TrialStatus


def brute_front(Y: np.ndarray) -> np.ndarray:
    """O(n^2) definition: a row is kept unless another is <= everywhere and < somewhere."""
    n = len(Y)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        for j in range(n):
            if i != j and np.all(Y[j] <= Y[i]) and np.any(Y[j] < Y[i]):
                keep[i] = False
                break
    return keep


def grid_hypervolume(Y: np.ndarray, ref: np.ndarray) -> float:
    """Exact hypervolume by inclusion on the grid of all coordinates (brute force, small n)."""
    P = Y[np.all(Y < ref, axis=1)]
    if not len(P):
        return 0.0
    axes = [np.unique(np.append(P[:, d], ref[d])) for d in range(Y.shape[1])]
    total = 0.0
    for cell in itertools.product(*[range(len(a) - 1) for a in axes]):
        low = np.array([a[c] for a, c in zip(axes, cell)])
        high = np.array([a[c + 1] for a, c in zip(axes, cell)])
        if np.any(np.all(P <= low, axis=1)):  # the cell's lower corner is dominated: so is the cell
            total += float(np.prod(high - low))
    return total


@pytest.mark.parametrize("m", [2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_pareto_mask_matches_brute_force_with_ties_and_duplicates(m, seed):
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 6, size=(60, m)).astype(float)  # many ties and exact duplicates
    Y[5] = Y[3]
    assert np.array_equal(pareto_mask(Y), brute_front(Y))
    Yc = rng.random((80, m))
    assert np.array_equal(pareto_mask(Yc), brute_front(Yc))


def test_pareto_mask_mixed_directions_feasibility_and_nan():
    Y = np.array([[1.0, 5.0], [2.0, 9.0], [3.0, 1.0], [0.5, 9.5], [2.0, np.nan], [0.1, 100.0]])
    feasible = np.array([True, True, True, True, True, False])
    mask = pareto_mask(Y, ["minimize", "maximize"], feasible)
    # maximising the second column: (0.5, 9.5) dominates (1, 5) and (2, 9); (3, 1) is dominated too
    assert mask.tolist() == [False, False, False, True, False, False]
    S = to_minimization(Y, [Objective("a"), Objective("b", "maximize")])
    valid = feasible & np.all(np.isfinite(S), axis=1)
    expected = np.zeros(len(Y), dtype=bool)
    expected[valid] = brute_front(S[valid])
    assert np.array_equal(pareto_mask(Y, [True, False], feasible), expected)


@pytest.mark.parametrize("m,n", [(2, 1), (2, 12), (3, 9), (4, 6)])
@pytest.mark.parametrize("seed", range(3))
def test_hypervolume_matches_grid_brute_force(m, n, seed):
    rng = np.random.default_rng(100 + seed)
    Y = rng.random((n, m))
    ref = np.full(m, 1.05)
    assert hypervolume(Y, ref) == pytest.approx(grid_hypervolume(Y, ref), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("m", [2, 3, 5])
def test_hypervolume_agrees_with_monte_carlo(m):
    rng = np.random.default_rng(m)
    Y = rng.random((40, m)) ** 0.5
    ref = np.full(m, 1.1)
    est, se = hypervolume_mc(Y, ref, n_samples=400_000, seed=1)
    assert se > 0
    assert abs(hypervolume(Y, ref, method="exact") - est) < 4.5 * se
    assert hypervolume(Y, ref, method="mc", n_samples=400_000, seed=1) == pytest.approx(est)


def test_hypervolume_against_moocore_if_installed():
    moocore = pytest.importorskip("moocore")
    rng = np.random.default_rng(7)
    for m in (2, 3, 4):
        Y = rng.random((150, m))
        ref = np.full(m, 1.0)
        assert hypervolume(Y, ref) == pytest.approx(float(moocore.hypervolume(Y, ref=ref)), rel=1e-10)
        assert np.array_equal(pareto_mask(Y), np.asarray(moocore.is_nondominated(Y, keep_weakly=True)))


def test_hypervolume_maximisation_reference_and_empty():
    # a single point (2, 8) against reference (4, 5), minimising a and maximising b: box 2 x 3
    assert hypervolume([[2.0, 8.0]], [4.0, 5.0], ["minimize", "maximize"]) == pytest.approx(6.0)
    assert hypervolume([[5.0, 8.0]], [4.0, 5.0], ["minimize", "maximize"]) == 0.0  # does not beat the reference
    assert hypervolume(np.empty((0, 2)), [1.0, 1.0]) == 0.0
    assert hypervolume([[0.0, 0.0]], [1.0, 1.0], feasible=[False]) == 0.0
    with pytest.raises(BayestuneError, match="reference point"):
        hypervolume([[0.0, 0.0]], [1.0, 1.0, 1.0])
    with pytest.raises(BayestuneError, match="direction"):
        pareto_mask([[0.0, 1.0]], ["min", "sideways"])


def test_reference_point_lies_beyond_the_front_in_each_direction():
    Y = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 5.0]])
    ref = reference_point(Y, ["minimize", "maximize"])
    front = Y[pareto_mask(Y, ["minimize", "maximize"])]
    assert np.all(ref[0] > front[:, 0]) and np.all(ref[1] < front[:, 1])
    assert hypervolume(Y, ref, ["minimize", "maximize"]) > 0


def test_hypervolume_trace_is_monotone_and_ends_at_the_total():
    rng = np.random.default_rng(3)
    Y = rng.random((50, 3))
    feasible = rng.random(50) > 0.2
    ref = np.full(3, 1.0)
    trace = hypervolume_trace(Y, ref, feasible=feasible)
    assert np.all(np.diff(trace) >= -1e-15)
    assert trace[-1] == pytest.approx(hypervolume(Y, ref, feasible=feasible))
    assert trace[int(np.argmax(feasible))] > 0 or not feasible.any()


def test_pareto_trials_uses_feasible_trials_and_directions():
    def trial(i, a, b, status=TrialStatus.OK):
        return Trial(i, {"x": i}, status, {"a": a, "b": b})

    trials = [
        trial(1, 1.0, 1.0),
        trial(2, 2.0, 3.0),
        trial(3, 0.5, 0.5, TrialStatus.INFEASIBLE),
        trial(4, 3.0, 2.0),
        trial(5, 0.0, 0.0),
    ]
    front = pareto_trials(trials, [Objective("a"), Objective("b", "maximize")])
    assert [t.trial_id for t in front] == [5, 1, 2]  # sorted by a; trial 4 dominated by 2; 3 infeasible
    meta = [{"name": "a", "minimize": True}, {"name": "b", "minimize": False}]
    assert [t.trial_id for t in pareto_trials(trials, meta)] == [5, 1, 2]
