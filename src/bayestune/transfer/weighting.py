"""How much to trust a source: its Kendall rank correlation with the target's own observations.

Ranks, not values, because a source on another device is typically faster or slower by some
monotone map, not equal (the performance-portability literature's observation that rankings
transfer better than absolute times). The weight is zero unless the correlation is positive
by more than two standard errors of τ under independence, so an unrelated source — whose τ
wanders around zero — drops out and the model falls back to a cold start. (One standard error
trusted related sources sooner but let a shuffled source through in some runs, one of them 2.5×
worse than the cold start at 20 evaluations: ``benchmarks/results/transfer/transfer.md``.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kendalltau

#: Fewest target observations before any source is trusted (τ of 3 points is ±1 by chance).
MIN_OBSERVATIONS = 4
#: τ at and above which a source gets full weight.
FULL_WEIGHT_TAU = 0.5
#: Standard errors of τ (under independence) a source's τ must exceed to get any weight: 1 lets an
#: unrelated source through in ~16% of fits, 2 in ~2%, at the price of trusting a related one later.
GATE_STANDARD_ERRORS = 2.0


def tau_standard_error(n: int) -> float:
    """Standard error of Kendall's τ for ``n`` independent pairs (no ties)."""
    return math.sqrt(2.0 * (2 * n + 5) / (9.0 * n * (n - 1))) if n > 1 else math.inf


def source_weight(predicted: np.ndarray, observed: np.ndarray) -> tuple[float, float]:
    """``(weight, tau)`` of a source whose values at the target's observed configurations are
    ``predicted``; ``observed`` are the target's values there (both lower is better)."""
    predicted, observed = np.asarray(predicted, dtype=float), np.asarray(observed, dtype=float)
    ok = np.isfinite(predicted) & np.isfinite(observed)
    n = int(ok.sum())
    if n < MIN_OBSERVATIONS or np.ptp(predicted[ok]) == 0 or np.ptp(observed[ok]) == 0:
        return 0.0, 0.0
    tau = float(kendalltau(predicted[ok], observed[ok]).statistic)
    if not math.isfinite(tau) or tau <= GATE_STANDARD_ERRORS * tau_standard_error(n):
        return 0.0, tau
    return min(1.0, tau / FULL_WEIGHT_TAU), tau
