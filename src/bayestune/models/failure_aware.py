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
from bayestune.models.linalg import limit_blas_threads


def _row_positions(rows: np.ndarray, table: np.ndarray) -> np.ndarray | None:
    """Index in ``table`` of every row of ``rows`` (``None`` if one is missing)."""
    where = {r.tobytes(): i for i, r in enumerate(np.ascontiguousarray(table))}
    found = [where.get(r.tobytes()) for r in np.ascontiguousarray(rows)]
    return None if any(i is None for i in found) else np.array(found, dtype=np.int64)


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
    def build(
        cls, mean_model: GaussianProcess, locations: np.ndarray, *, blas_threads: int | None = 1
    ) -> FailureAwarePosterior:
        """Condition a copy of the fitted ``mean_model``'s kernel on the encoded ``locations``."""
        return cls(mean_model, locations, blas_threads=blas_threads)._condition()

    def fit(self, F: np.ndarray, y: np.ndarray) -> FailureAwarePosterior:
        self.mean_model.fit(F, y)
        return self._condition()

    def _condition(self) -> FailureAwarePosterior:
        m = self.mean_model
        variance = GaussianProcess(
            m.blocks,
            fixed_hyperparameters=m.fitted_hyperparameters(),
            log_transform_y=False,
            blas_threads=self.blas_threads,
        )
        self.variance_model_ = variance.fit(self.locations, np.zeros(len(self.locations)))
        self.best_y_latent_ = m.best_y_latent_
        self._mean_columns = _row_positions(m.X_train_, self.variance_model_.X_train_)
        return self

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._mean_columns is None:
            mu, _ = self.mean_model.predict_latent(F)
            _, sd = self.variance_model_.predict_latent(F)
            return mu, sd
        # The mean model's training rows are among the locations: one kernel block serves both.
        variance = self.variance_model_
        F = variance._kernel.check_features(F, "F")
        mu, var = np.empty(F.shape[0]), np.empty(F.shape[0])
        with limit_blas_threads(self.blas_threads):
            for rows in variance.prediction_chunks(F.shape[0]):
                Ks = variance.cross_covariance(F[rows])
                mu[rows] = Ks[:, self._mean_columns] @ self.mean_model.alpha_
                var[rows] = variance.moments(Ks, overwrite=True)[1]
        return mu, np.sqrt(np.maximum(var, 0.0))

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        return self.mean_model.feature_importance(names)
