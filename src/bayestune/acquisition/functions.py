"""Acquisition functions on a Gaussian posterior, for minimisation, larger = more promising.

They take the posterior mean ``mu`` and standard deviation ``sigma`` (in the model's latent
space) and the incumbent ``best`` (the lowest latent value observed). BaCO computes EI on
the noise-free posterior, so an evaluated point has ~zero EI and is not re-sampled.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import ndtr

from bayestune.exceptions import BayestuneError

_SQRT_2PI = np.sqrt(2.0 * np.pi)
#: EI's and PI's improvement margin, LCB's exploration weight (latent units): the defaults of
#: the functions below and of the strategies' ``xi`` and ``kappa`` options.
DEFAULT_XI = 1e-4
DEFAULT_KAPPA = 2.0


def _z(mu: np.ndarray, sigma: np.ndarray, best: float, xi: float) -> tuple[np.ndarray, np.ndarray]:
    sigma = np.maximum(np.asarray(sigma, dtype=float), 1e-12)
    return (best - xi - np.asarray(mu, dtype=float)) / sigma, sigma


def expected_improvement(mu: np.ndarray, sigma: np.ndarray, best: float, xi: float = DEFAULT_XI) -> np.ndarray:
    """E[max(best - xi - f, 0)] = s (z Phi(z) + phi(z)), z = (best - xi - mu) / s."""
    z, s = _z(mu, sigma, best, xi)
    return s * (z * ndtr(z) + np.exp(-0.5 * z * z) / _SQRT_2PI)


def probability_of_improvement(mu: np.ndarray, sigma: np.ndarray, best: float, xi: float = DEFAULT_XI) -> np.ndarray:
    """P(f < best - xi) = Phi(z)."""
    z, _ = _z(mu, sigma, best, xi)
    return ndtr(z)


def lower_confidence_bound(mu: np.ndarray, sigma: np.ndarray, best: float, kappa: float = DEFAULT_KAPPA) -> np.ndarray:
    """Negated LCB, -(mu - kappa * sigma), so that larger is better like the others."""
    return -(np.asarray(mu, dtype=float) - kappa * np.asarray(sigma, dtype=float))


#: ``(mu, sigma, best, parameter)``: the parameter is ``xi`` for EI and PI, ``kappa`` for LCB.
AcquisitionFunction = Callable[[np.ndarray, np.ndarray, float, float], np.ndarray]

ACQUISITIONS: dict[str, AcquisitionFunction] = {
    "ei": expected_improvement,
    "pi": probability_of_improvement,
    "lcb": lower_confidence_bound,
}


#: Weight of the predicted mean in Monte-Carlo EI, far below any non-zero EI: it only orders
#: candidates where every draw is worse than the incumbent (EI exactly 0).
MC_TIE_BREAK = 1e-9


def mc_expected_improvement(draws: np.ndarray, best: float) -> np.ndarray:
    """EI per candidate from target draws (S, m) in minimised units: the mean of (best - y)⁺, plus
    :data:`MC_TIE_BREAK` times a logistic of how far the mean draw lies above ``best``."""
    improvement = np.maximum(best - draws, 0.0)
    improvement[~np.isfinite(improvement)] = 0.0
    acq = improvement.mean(axis=0)
    mean = np.where(np.isfinite(draws), draws, np.nan)
    return acq + MC_TIE_BREAK / (1.0 + np.exp(np.clip(np.nanmean(mean, axis=0) - best, -50, 50)))


def get_acquisition(name: str) -> AcquisitionFunction:
    if name not in ACQUISITIONS:
        raise BayestuneError(f"unknown acquisition function {name!r}; allowed: {sorted(ACQUISITIONS)}")
    return ACQUISITIONS[name]


def feasibility_weighted(acq: np.ndarray, p_feasible: np.ndarray, epsilon: float) -> np.ndarray:
    """EI x P(feasible), with candidates at or below the threshold ``epsilon`` ruled out (BaCO)."""
    out = np.asarray(acq, dtype=float) * p_feasible
    out[p_feasible <= epsilon] = -np.inf
    return out


def prior_weighted(acq: np.ndarray, prior: np.ndarray, n_observations: int, beta: float = 10.0) -> np.ndarray:
    """piBO: acq x prior^(beta / n); the prior's pull fades as observations accumulate."""
    exponent = beta / max(1, n_observations)
    return np.asarray(acq, dtype=float) * np.power(np.maximum(prior, 1e-300), exponent)
