"""Choosing the surrogate (GP or random forest) by cross-validated predictive likelihood.

Which model fits a tuning landscape is itself unknown: smooth run-time surfaces suit the GP,
step-like ones (a cliff at a block size, a narrow optimum among flat plateaus) suit a forest.
``bo``'s ``model="auto"`` asks the data: on the same K folds of the feasible observations it
scores each model by the mean log density of the held-out targets under the model's
Gaussian predictive distribution, in the standardised units the GP sees (the (logged)
targets minus their mean, over their standard deviation; a common affine map, so it does
not change which model wins), and keeps the higher.

* GP: closed form at the fitted hyperparameters (Rasmussen & Williams §5.4.2, generalised to
  blocks): with ``A = K⁻¹`` and ``α = K⁻¹ y``, the held-out block B has predictive mean
  ``y_B − (A_BB)⁻¹ α_B`` and covariance ``(A_BB)⁻¹`` (which includes the observation noise).
  The hyperparameters are those fitted on all points (the usual approximation; refitting them
  per fold would cost K full fits).
* Forest: refitted on each training fold (same settings but at most :data:`CV_TREES` trees, the
  log rule fixed from all data);
  its predictive variance is the spread of the trees plus :data:`FOREST_VARIANCE_FLOOR`, so
  that an exact tree agreement on a held-out point is not an infinitely confident prediction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bayestune.models.linalg import cho_inverse

if TYPE_CHECKING:
    from bayestune.models.forest import RandomForestSurrogate

#: Surrogates ``model="auto"`` chooses between.
MODEL_KINDS = ("gp", "rf")
#: Folds of the cross-validation.
N_FOLDS = 5
#: Trees of each cross-validation forest (``bo`` uses ``min(rf_trees, CV_TREES)``): the fits dominate
#: the cost of a choice, and 30 trees estimate the mean and spread well enough to rank the models.
CV_TREES = 30
#: Added to the forest's predictive variance (standardised units, i.e. a 0.1-sd floor on its spread).
FOREST_VARIANCE_FLOOR = 1e-2

_LOG_2PI = float(np.log(2 * np.pi))


def folds(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A random split of ``range(n)`` into ``min(k, n)`` index blocks of near-equal size."""
    return [f for f in np.array_split(rng.permutation(n), min(k, n)) if len(f)]


def _gauss_log_density(z: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
    var = np.maximum(var, 1e-12)
    return -0.5 * (_LOG_2PI + np.log(var) + (z - mu) ** 2 / var)


def gp_cv_log_likelihood(gp, blocks: list[np.ndarray]) -> float:
    """Mean held-out log density of a fitted ``GaussianProcess``'s latent targets, block-wise
    closed form at its fitted hyperparameters."""
    A = cho_inverse(gp.L_)
    alpha, z = gp.alpha_, gp.y_latent_
    out = np.empty(len(z))
    for b in blocks:
        inv = np.linalg.inv(A[np.ix_(b, b)])
        mu = z[b] - inv @ alpha[b]
        out[b] = _gauss_log_density(z[b], mu, np.diag(inv))
    return float(np.mean(out))


def forest_cv_log_likelihood(
    make_forest: Callable[[bool], RandomForestSurrogate],
    F: np.ndarray,
    y: np.ndarray,
    log: bool,
    blocks: list[np.ndarray],
) -> float:
    """Mean held-out log density of the targets under forests refitted without each block,
    in standardised (logged if ``log``) units. ``make_forest(log)`` returns an unfitted
    ``RandomForestSurrogate`` logging its targets iff ``log``."""
    y = np.asarray(y, dtype=float)
    t = np.log(y) if log else y
    mean, std = float(np.mean(t)), float(np.std(t)) or 1.0
    z = (t - mean) / std
    out = np.empty(len(y))
    for b in blocks:
        train = np.setdiff1d(np.arange(len(y)), b)
        forest = make_forest(log).fit(F[train], y[train])
        mu, sd = forest.predict_latent(F[b])  # in t units: the forest logs but does not standardise
        out[b] = _gauss_log_density(z[b], (mu - mean) / std, (sd / std) ** 2 + FOREST_VARIANCE_FLOOR)
    return float(np.mean(out))


def choose_surrogate(
    gp,
    make_forest: Callable[[bool], RandomForestSurrogate],
    F: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
    k: int = N_FOLDS,
) -> tuple[str, dict[str, float]]:
    """``("gp" | "rf", {kind: mean held-out log density})`` on the same ``k`` folds; ties go to the GP."""
    blocks = folds(len(y), k, rng)
    scores = {
        "gp": gp_cv_log_likelihood(gp, blocks),
        "rf": forest_cv_log_likelihood(make_forest, F, y, bool(gp.log_y_), blocks),
    }
    return ("rf" if scores["rf"] > scores["gp"] else "gp"), scores
