"""A GP posterior that knows where evaluations failed.

The noise-free posterior variance depends on where we looked, not on what we saw. Without
this model, a region where evaluations failed keeps its prior variance, so EI stays high
right next to known failures and the search keeps probing them; P(feasible) from a
classifier trained on a handful of points is rarely small enough to offset that. No value
is invented for a failed point: the mean ignores failures entirely.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bayestune.models.gp import GaussianProcess


class FailureAwarePosterior:
    """Mean from a GP fitted to the feasible observations only; standard deviation from the
    same kernel conditioned on *every* evaluated location ``locations``, failures included.

    :meth:`fit` fits ``mean_model`` and then conditions the variance; :meth:`build` wraps a
    mean model that is already fitted.
    """

    def __init__(self, mean_model: GaussianProcess, locations: np.ndarray, *, blas_threads: int | None = 1) -> None:
        self.mean_model = mean_model
        self.locations = locations
        self.blas_threads = blas_threads

    @classmethod
    def build(cls, mean_model: GaussianProcess, locations: np.ndarray, *, blas_threads: int | None = 1
              ) -> FailureAwarePosterior:
        """Condition a copy of the fitted ``mean_model``'s kernel on the encoded ``locations``."""
        return cls(mean_model, locations, blas_threads=blas_threads)._condition()

    def fit(self, F: np.ndarray, y: np.ndarray) -> FailureAwarePosterior:
        self.mean_model.fit(F, y)
        return self._condition()

    def _condition(self) -> FailureAwarePosterior:
        m = self.mean_model
        variance = GaussianProcess(m.blocks, fixed_hyperparameters=m.fitted_hyperparameters(), log_transform_y=False,
                                   blas_threads=self.blas_threads)
        self.variance_model_ = variance.fit(self.locations, np.zeros(len(self.locations)))
        self.best_y_latent_ = m.best_y_latent_
        return self

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, _ = self.mean_model.predict_latent(F)
        _, sd = self.variance_model_.predict_latent(F)
        return mu, sd

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        return self.mean_model.feature_importance(names)
