"""How repeated measurements become one number and how sure that number is.

Run times are skewed (a slow outlier, never a fast one), so the median is the default
statistic and its confidence interval is distribution-free: order statistics chosen by the
binomial law of "a sample falls below the median", interpolated between neighbouring ones
(Hettmansperger & Sheather 1986) so that its coverage is the nominal one rather than the next
attainable level above it (with 8 runs the plain pair is (min, max) at 99.2 % for a claimed
95 %; tests/measurement/test_statistics.py checks the coverage by simulation). The mean gets
Student's t interval. The minimum ("the best the machine can do") has no interval of its own;
the t interval's half-width around it says how noisy one run is.

A speedup is measured on paired rounds (the baseline and a candidate measured back to back in
each round): the geometric mean of the per-round ratios with Student's t interval on their
logarithms — drift that hits both members of a pair alike cancels, and multiplicative noise
makes the log-ratios near normal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from bayestune.exceptions import EvaluationError
from bayestune.measurement_spec import STATISTICS

_UNKNOWN = (-math.inf, math.inf)


def check_statistic(statistic: str) -> str:
    if statistic not in STATISTICS:
        raise EvaluationError(f"statistic must be one of {list(STATISTICS)}, but got {statistic!r}")
    return statistic


def summarise(samples: Sequence[float], statistic: str = "median") -> float:
    """The ``statistic`` of ``samples`` (NaN when there are none)."""
    check_statistic(statistic)
    values = np.asarray(samples, dtype=float)
    if values.size == 0:
        return math.nan
    if statistic == "median":
        return float(np.median(values))
    if statistic == "min":
        return float(np.min(values))
    return float(np.mean(values))


def confidence_interval(
    samples: Sequence[float], statistic: str = "median", confidence: float = 0.95
) -> tuple[float, float]:
    """``(low, high)`` around the ``statistic`` of ``samples``; ``(-inf, inf)`` while too few to say."""
    check_statistic(statistic)
    if not 0 < confidence < 1:
        raise EvaluationError(f"confidence must lie in (0, 1), but got {confidence!r}")
    values = np.sort(np.asarray(samples, dtype=float))
    n = values.size
    if n < 2:
        return _UNKNOWN
    if statistic == "median":
        return _median_interval(values, confidence)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * np.std(values, ddof=1) / math.sqrt(n))
    centre = float(np.mean(values)) if statistic == "mean" else float(values[0])
    return centre - half, centre + half


def _median_interval(ordered: np.ndarray, confidence: float) -> tuple[float, float]:
    """The median's interval between order statistics, interpolated to the nominal ``confidence``
    (Hettmansperger & Sheather 1986); unknown when even (min, max) covers less."""
    n = ordered.size

    def coverage(k: int) -> float:  # P(X_(k) <= median <= X_(n+1-k)), 1-based k
        return 1.0 - 2.0 * float(stats.binom.cdf(k - 1, n, 0.5))

    if coverage(1) < confidence:
        return _UNKNOWN
    k = 1
    while k + 1 <= n // 2 and coverage(k + 1) >= confidence:
        k += 1
    outer, inner = coverage(k), coverage(k + 1) if k + 1 <= n // 2 else coverage(k)
    share = (outer - confidence) / (outer - inner) if outer > inner else 0.0
    weight = (n - k) * share / (k + (n - 2 * k) * share) if share > 0 else 0.0
    low = (1 - weight) * ordered[k - 1] + weight * ordered[k]
    high = (1 - weight) * ordered[n - k] + weight * ordered[n - k - 1]
    return float(low), float(high)


def speedup(
    baseline: Sequence[float], candidate: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of how many times faster (smaller) ``candidate`` is than
    ``baseline``, from paired samples (the same rounds, in order): the geometric mean of
    ``baseline_i / candidate_i`` with Student's t interval on the log ratios (see the module
    docstring). NaN without a pair of positive values; the interval is unknown below two pairs."""
    pairs = [(b, c) for b, c in zip(baseline, candidate) if b > 0 and c > 0 and math.isfinite(b) and math.isfinite(c)]
    if not pairs:
        return math.nan, math.nan, math.nan
    logs = np.log([b for b, _ in pairs]) - np.log([c for _, c in pairs])
    centre = float(np.mean(logs))
    if len(logs) < 2:
        return math.exp(centre), -math.inf, math.inf
    half = float(stats.t.ppf(0.5 + confidence / 2, len(logs) - 1) * np.std(logs, ddof=1) / math.sqrt(len(logs)))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def runs_for_interval(statistic: str = "median", confidence: float = 0.95) -> int:
    """The fewest runs whose ``confidence`` interval of the ``statistic`` is bounded (the median's
    distribution-free interval needs 6 at 95 %, 8 at 99 %; Student's t needs 2)."""
    check_statistic(statistic)
    if statistic != "median":
        return 2
    n = 2
    while 1.0 - 2.0 * 0.5**n < confidence:  # the widest pair, (min, max), covers with 1 - 2 / 2^n
        n += 1
    return n


def relative_half_width(samples: Sequence[float], statistic: str = "median", confidence: float = 0.95) -> float:
    """Half the interval's width over the statistic's size: 0.02 means "within ±2 %" (inf when unknown)."""
    low, high = confidence_interval(samples, statistic, confidence)
    centre = abs(summarise(samples, statistic))
    if not (math.isfinite(low) and math.isfinite(high)):
        return math.inf
    if centre == 0:
        return 0.0 if high == low else math.inf
    return (high - low) / 2.0 / centre
