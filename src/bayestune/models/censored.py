"""Censored observations: values that are bounds, not measurements, told to a Gaussian model.

When measuring stops early (``measurement.early_stop``), a configuration's value is only known
to be *at least* its bound: its first runs were clearly worse than the best so far. Fitting the
bound as if it were the value would tell the model the configuration is better than it is;
dropping it would let the model propose its neighbourhood again. The standard treatment for a
Gaussian model (Schonlau, Welch and Jones 1998; Hutter et al. 2011, "Bayesian optimization with
censored response data") replaces each bound ``c`` by the posterior mean of the target given
that it exceeds ``c`` — the mean of a normal truncated below at ``c`` — and fits again.

Everything happens in the model's latent space (after its log and standardisation), where the
posterior is Gaussian; the imputed value is never below its bound. A model that is not a
Gaussian process (a forest, a transfer model) keeps the bound: a conservative value, stated in
the docs, rather than a made-up one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

#: Smallest latent standard deviation used in the truncated mean (a posterior that is certain
#: at a censored point would divide by zero; the bound itself is then the answer).
MIN_LATENT_STD = 1e-9


def truncated_normal_mean(mu: np.ndarray, sd: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """E[Z | Z > lower] for Z ~ N(mu, sd²), stable far in the tail (the inverse Mills ratio
    through ``erfcx``), never below ``lower``."""
    mu, sd, lower = (np.asarray(a, dtype=float) for a in (mu, sd, lower))
    sd = np.maximum(sd, MIN_LATENT_STD)
    alpha = (lower - mu) / sd
    mills = math.sqrt(2.0 / math.pi) / special.erfcx(alpha / math.sqrt(2.0))  # φ(α) / (1 − Φ(α))
    return np.maximum(mu + sd * mills, lower)


def impute_censored(targets: np.ndarray, censored: np.ndarray, fitted: Any, features: np.ndarray) -> np.ndarray:
    """``targets`` (minimised) with each censored entry — a lower bound — replaced by the
    posterior mean of the target above that bound under ``fitted``, a Gaussian process fitted
    with the bounds as values; ``features`` are the encoded rows of the censored entries.

    Returned unchanged when nothing is censored or ``fitted`` is not a Gaussian process.
    """
    censored = np.asarray(censored, dtype=bool)
    if not censored.any() or not all(hasattr(fitted, a) for a in ("y_to_latent", "predict_latent", "y_std_")):
        return targets
    bounds = np.asarray(targets, dtype=float)[censored]
    ok = np.isfinite(bounds)
    if fitted.log_y_:
        ok &= bounds > 0
    if not ok.any():
        return targets
    mu, sd = fitted.predict_latent(np.asarray(features)[ok], noiseless=False)
    latent = truncated_normal_mean(mu, sd, fitted.y_to_latent(bounds[ok]))
    t = latent * fitted.y_std_ + fitted.y_mean_
    values = np.exp(t) if fitted.log_y_ else t
    out = np.array(targets, dtype=float, copy=True)
    index = np.flatnonzero(censored)[ok]
    out[index] = np.maximum(values, bounds[ok])
    return out
