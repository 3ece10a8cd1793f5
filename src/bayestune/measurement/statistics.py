"""How repeated measurements become one number and how sure that number is.

Run times are skewed (a slow outlier, never a fast one), so the median is the default
statistic and its confidence interval is distribution-free: two order statistics chosen by
the binomial law of "a sample falls below the median". The mean gets Student's t interval.
The minimum ("the best the machine can do") has no interval of its own; the t interval's
half-width around it says how noisy one run is.
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


def confidence_interval(samples: Sequence[float], statistic: str = "median",
                        confidence: float = 0.95) -> tuple[float, float]:
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
    """The narrowest symmetric pair of order statistics covering the median with ``confidence``."""
    n = ordered.size
    # P(X_(j) <= median <= X_(n-1-j)) = 1 - 2 P(Binomial(n, 1/2) <= j)   (0-based j)
    best = None
    for j in range(n // 2):
        coverage = 1.0 - 2.0 * float(stats.binom.cdf(j, n, 0.5))
        if coverage < confidence:
            break
        best = j
    if best is None:
        return _UNKNOWN
    return float(ordered[best]), float(ordered[n - 1 - best])


def runs_for_interval(statistic: str = "median", confidence: float = 0.95) -> int:
    """The fewest runs whose ``confidence`` interval of the ``statistic`` is bounded (the median's
    distribution-free interval needs 6 at 95 %, 8 at 99 %; Student's t needs 2)."""
    check_statistic(statistic)
    if statistic != "median":
        return 2
    n = 2
    while 1.0 - 2.0 * 0.5 ** n < confidence:  # the widest pair, (min, max), covers with 1 - 2 / 2^n
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
