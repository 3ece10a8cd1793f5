import numpy as np
import pytest

from bayestune.bostep.stall import evaluations_since_improvement, explore_now


def test_counts_evaluations_after_the_first_time_the_best_was_reached():
    targets = np.array([5.0, 3.0, np.nan, 4.0, 3.0, 6.0])
    feasible = np.array([True, True, False, True, True, True])
    assert evaluations_since_improvement(targets, feasible) == 4  # the tie at index 4 is no improvement


def test_failures_count_and_no_feasible_value_means_unknown():
    assert evaluations_since_improvement(np.array([2.0, np.nan, np.nan]), np.array([True, False, False])) == 2
    assert evaluations_since_improvement(np.array([np.nan, np.nan]), np.array([False, False])) is None


def test_improving_last_evaluation_is_zero():
    assert evaluations_since_improvement(np.array([3.0, 2.0, 1.0]), np.ones(3, bool)) == 0


@pytest.mark.parametrize(
    ("since", "period", "n", "expected"),
    [
        (9, 10, 1, False),
        (10, 10, 1, True),
        (11, 10, 1, False),
        (20, 10, 1, True),
        (0, 10, 1, False),
        (8, 10, 3, True),
        (11, 10, 8, False),
        (None, 10, 1, False),
        (30, 0, 1, False),
    ],
)
def test_one_exploration_step_per_period_of_stalling(since, period, n, expected):
    assert explore_now(since, period, n) is expected
