"""Statistics of repeated measurements and their confidence intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayestune.exceptions import EvaluationError
from bayestune.measurement.statistics import (
    confidence_interval,
    relative_half_width,
    runs_for_interval,
    speedup,
    summarise,
)


def test_each_statistic() -> None:
    samples = [3.0, 1.0, 2.0, 10.0]
    assert summarise(samples, "median") == 2.5
    assert summarise(samples, "min") == 1.0
    assert summarise(samples, "mean") == 4.0
    assert math.isnan(summarise([], "median"))


def test_unknown_statistic_is_named() -> None:
    with pytest.raises(EvaluationError, match=r"statistic must be one of \['median', 'min', 'mean'\], but got 'max'"):
        summarise([1.0], "max")


def test_too_few_samples_give_an_unbounded_interval() -> None:
    assert confidence_interval([1.0], "mean") == (-math.inf, math.inf)
    # five samples cannot cover the median with 95 % (1 - 2/32 = 0.94), six can (0.97)
    assert confidence_interval([1, 2, 3, 4, 5], "median") == (-math.inf, math.inf)
    # six can: 1 - 2/64 = 0.969 for (min, max), interpolated towards (2, 5) down to 0.95
    low, high = confidence_interval([1, 2, 3, 4, 5, 6], "median")
    assert 1.0 < low < 2.0 and 5.0 < high < 6.0 and low + high == pytest.approx(7.0)
    assert confidence_interval([1, 2, 3, 4, 5], "median", confidence=0.9)[0] > 1.0


def test_mean_interval_is_students_t() -> None:
    low, high = confidence_interval([1.0, 2.0, 3.0], "mean", 0.95)
    half = 4.302652729911275 * 1.0 / math.sqrt(3)  # t(0.975, 2) * s / sqrt(n)
    assert (low, high) == pytest.approx((2.0 - half, 2.0 + half))


@pytest.mark.parametrize("n", [6, 8, 12, 20])
@pytest.mark.parametrize(
    "draw, median",
    [
        (lambda rng, n: rng.lognormal(0.0, 0.5, n), 1.0),
        (lambda rng, n: rng.exponential(1.0, n), math.log(2)),
        (lambda rng, n: rng.normal(5.0, 1.0, n), 5.0),
    ],
)
def test_median_interval_covers_the_true_median_as_often_as_it_claims(n, draw, median) -> None:
    """Simulated coverage within 2 points of the nominal 95 % (the plain order-statistic pair
    claimed 95 % and covered 99.2 % with 8 runs)."""
    rng = np.random.default_rng(n)
    reps = 3000
    hits = sum(
        low <= median <= high for low, high in (confidence_interval(draw(rng, n), "median", 0.95) for _ in range(reps))
    )
    assert abs(hits / reps - 0.95) <= 0.02


@pytest.mark.parametrize("n", [3, 5, 8])
def test_speedup_interval_covers_the_ratio_of_medians_under_multiplicative_noise_and_drift(n) -> None:
    """Paired rounds: each round's drift multiplies both members alike and cancels."""
    rng = np.random.default_rng(n)
    reps, true = 3000, 1.5
    hits = 0
    for _ in range(reps):
        drift = np.exp(rng.normal(0.0, 0.3, n))
        baseline = true * drift * rng.lognormal(0.0, 0.2, n)
        candidate = drift * rng.lognormal(0.0, 0.2, n)
        _, low, high = speedup(baseline, candidate)
        hits += low <= true <= high
    assert abs(hits / reps - 0.95) <= 0.02


def test_speedup_of_paired_rounds() -> None:
    estimate, low, high = speedup([2.0, 4.0], [1.0, 2.0])
    assert (estimate, low, high) == pytest.approx((2.0, 2.0, 2.0))
    assert math.isnan(speedup([], [])[0]) and speedup([2.0], [1.0])[1:] == (-math.inf, math.inf)
    assert speedup([2.0, math.nan, -1.0], [1.0, 1.0, 1.0])[0] == pytest.approx(2.0)  # unusable pairs dropped


def test_relative_half_width() -> None:
    assert relative_half_width([10.0, 10.0, 10.0], "mean") == 0.0
    assert relative_half_width([10.0], "mean") == math.inf
    tight, loose = relative_half_width([10, 10.1, 9.9, 10], "mean"), relative_half_width([10, 12, 8, 10], "mean")
    assert 0 < tight < loose


@pytest.mark.parametrize(
    "statistic, confidence, expected",
    [("median", 0.9, 5), ("median", 0.95, 6), ("median", 0.99, 8), ("mean", 0.95, 2), ("min", 0.99, 2)],
)
def test_runs_for_interval_is_the_first_count_with_a_bounded_interval(statistic, confidence, expected) -> None:
    rng = np.random.default_rng(0)
    assert runs_for_interval(statistic, confidence) == expected
    assert math.isinf(confidence_interval(rng.normal(size=expected - 1), statistic, confidence)[0])
    assert all(map(math.isfinite, confidence_interval(rng.normal(size=expected), statistic, confidence)))
