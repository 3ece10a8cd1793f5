"""What every surrogate model provides to the acquisition layer.

The Gaussian process, the random forest and the failure-aware posterior all answer the
same question, "what do we believe about the (latent) objective here?", so a strategy and
the acquisition scorer depend on this contract rather than on one model class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Surrogate(Protocol):
    """A regression model of one objective to minimise, in a *latent* space.

    The latent space is where the acquisition is computed: the targets after the model's own
    transform (log and/or standardisation), so ``best_y_latent_`` and the predictions of
    :meth:`predict_latent` are directly comparable.
    """

    #: Lowest latent target of the training data: the incumbent of EI and PI.
    best_y_latent_: float

    def fit(self, F: np.ndarray, y: np.ndarray) -> Surrogate:
        """Learn from encoded features ``F`` (N, D) and finite targets ``y`` (N,); returns ``self``."""
        ...

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation of the latent objective at ``F``."""
        ...

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        """How much each model input drives the prediction, keyed by ``names``
        (default: the model's own names for its inputs)."""
        ...
