"""What the GP-based strategies (``bo``, ``parego``) share around their surrogate: the
failure-aware posterior, the pool of every feasible configuration of a small space, and the
acquisition score that folds in P(feasible) and the user's prior.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayestune.acquisition.functions import feasibility_weighted, get_acquisition, prior_weighted
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.gp import GaussianProcess
from bayestune.space import Space

#: ε_f values drawn each iteration (BaCO: 0.1·{0, 0.1, ..., 1.0}); 0 keeps every candidate.
FEASIBILITY_THRESHOLDS = np.round(np.arange(11) * 0.01, 2)


class FailureAwarePosterior:
    """GP posterior whose mean comes from the feasible observations only, and whose variance is
    conditioned on *every* evaluated location, failures included.

    The noise-free posterior variance depends on where we looked, not on what we saw. Without
    this, a region where evaluations failed keeps its prior variance, so EI stays high right
    next to known failures and the search keeps probing them; P(feasible) from a classifier
    trained on a handful of points is rarely small enough to offset that. No value is invented
    for a failed point: the mean ignores failures entirely.
    """

    def __init__(self, mean_model: GaussianProcess, variance_model: GaussianProcess) -> None:
        self.mean_model, self.variance_model = mean_model, variance_model
        self.best_y_latent_ = mean_model.best_y_latent_

    @classmethod
    def build(cls, mean_model: GaussianProcess, F_all: np.ndarray, *, blas_threads: int | None = 1
              ) -> "FailureAwarePosterior":
        """Condition a copy of ``mean_model``'s kernel on the encoded locations ``F_all``."""
        fixed = {"lengthscales": dict(mean_model.lengthscales_), "outputscale": mean_model.outputscale_,
                 "noise": mean_model.noise_}
        variance = GaussianProcess(mean_model.blocks, fixed_hyperparameters=fixed, log_transform_y=False,
                                   blas_threads=blas_threads).fit(F_all, np.zeros(len(F_all)))
        return cls(mean_model, variance)

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, _ = self.mean_model.predict_latent(F)
        _, sd = self.variance_model.predict_latent(F)
        return mu, sd

    def predict(self, F: np.ndarray) -> np.ndarray:
        return self.mean_model.predict(F)


class EnumeratedCandidates:
    """Every feasible configuration of a space with at most ``limit`` of them, enumerated once,
    so the acquisition can be maximised exactly; ``None`` from :meth:`unseen` for larger spaces."""

    def __init__(self, space: Space, limit: int) -> None:
        self.space, self.limit = space, limit
        self._rows: np.ndarray | None = None
        self._keys: list[bytes] | None = None
        self._done = False

    def unseen(self, seen: set[bytes]) -> np.ndarray | None:
        if not self._done:
            self._done = True
            self._rows = self.space.enumerate(limit=self.limit)
            if self._rows is not None:
                self._keys = self.space.row_keys(self._rows)
        if self._rows is None:
            return None
        keep = np.fromiter((k not in seen for k in self._keys), dtype=bool, count=len(self._keys))
        return self._rows[keep]


def acquisition_scorer(space: Space, encoder: FeatureEncoder, model: Any, classifier: FeasibilityClassifier | None,
                       rng: np.random.Generator, *, acquisition: str = "ei", parameter: float, n_obs: int,
                       prior_beta: float) -> Callable[[np.ndarray], np.ndarray]:
    """Score rows of ``space`` (higher is better): the acquisition on ``model``'s latent posterior,
    times P(feasible) with candidates at or below a random threshold ε_f ruled out (BaCO), times
    the prior's weight decaying with ``n_obs`` (piBO)."""
    epsilon = float(rng.choice(FEASIBILITY_THRESHOLDS)) if classifier is not None else 0.0
    best = float(model.best_y_latent_)
    function = get_acquisition(acquisition)

    def score(X: np.ndarray) -> np.ndarray:
        F = encoder.transform(X)
        mu, sd = model.predict_latent(F)
        acq = function(mu, sd, best, parameter)
        if acquisition == "lcb":  # shifted positive so the multiplicative weightings stay meaningful
            acq = acq - acq.min() + 1e-12
        if classifier is not None:
            acq = feasibility_weighted(acq, classifier.predict_proba(F), epsilon)
        if space.has_prior:
            acq = prior_weighted(acq, space.prior_weight(X), n_obs, prior_beta)
        return acq

    return score
