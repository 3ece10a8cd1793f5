"""What every surrogate model provides to the acquisition layer.

The Gaussian process, the random forest and the failure-aware posterior all answer the
same question, "what do we believe about the (latent) objective here?", so a strategy and
the acquisition scorer depend on this contract rather than on one model class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

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


@runtime_checkable
class SamplingPosterior(Protocol):
    """A posterior known only through joint draws (BoTorch's ``rsample``): a model whose
    prediction is not Gaussian, e.g. BoGraph's chain of node models through a DAG.

    Draws are in *minimised* units, comparable with :attr:`best`. The base samples (standard
    normal, one column per random node) are drawn once per score and shared by every
    candidate, so two candidates are compared on the same scenarios (common random numbers)
    and the Monte-Carlo score is a deterministic function the maximiser can climb.
    """

    #: The incumbent in the draws' units.
    best: float

    def base_samples(self, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        """Standard-normal base samples, (n_samples, number of random nodes)."""
        ...

    def rsample(self, X: np.ndarray, base_samples: np.ndarray) -> np.ndarray:
        """Draws (n_samples, m) of the target at raw rows ``X`` (m, width) given ``base_samples``."""
        ...


@dataclass
class ModelFit:
    """One fit of a model part, as a BO step reads it (:mod:`bayestune.bostep.step`)."""

    posterior: Any  # what the score reads: a Surrogate, or a SamplingPosterior
    X: np.ndarray  # the feasible training rows
    y: np.ndarray  # their targets (minimised)
    fitted: Any = None  # the plain fitted model (Thompson draws, the batch believer)
    F: np.ndarray | None = None  # what ``fitted`` learned from: X encoded, then believed rows of a batch
    y_fitted: np.ndarray | None = None  # ... and their values
    noise: np.ndarray | None = None  # measured noise per row of F (heteroscedastic GP)
    project: Callable[[np.ndarray], np.ndarray] | None = None  # rows as they would be proposed (bograph)
