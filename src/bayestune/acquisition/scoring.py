"""The score a maximiser climbs: an acquisition function on a surrogate's latent posterior,
weighted by P(feasible) and by the user's prior."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bayestune.acquisition.functions import feasibility_weighted, get_acquisition, prior_weighted
from bayestune.models.base import Surrogate
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.space import Space

#: ε_f values drawn each iteration (BaCO: feasibility_threshold · {0, 0.1, ..., 1.0}, with its
#: default threshold 0.1); 0 keeps every candidate.
FEASIBILITY_THRESHOLDS = np.round(np.arange(11) * 0.01, 2)
DEFAULT_FEASIBILITY_THRESHOLD = 0.1


def acquisition_scorer(space: Space, encoder: FeatureEncoder, model: Surrogate,
                       classifier: FeasibilityClassifier | None, rng: np.random.Generator, *,
                       acquisition: str = "ei", parameter: float, n_obs: int,
                       prior_beta: float,
                       feasibility_threshold: float = DEFAULT_FEASIBILITY_THRESHOLD) -> Callable[[np.ndarray], np.ndarray]:
    """Score rows of ``space`` (higher is better): the acquisition on ``model``'s latent posterior,
    times P(feasible) with candidates at or below a random threshold ε_f ruled out (BaCO), times
    the prior's weight decaying with ``n_obs`` (piBO).

    ε_f is drawn from ``rng`` once per scorer, and only when there is a ``classifier``, from
    ``feasibility_threshold · {0, 0.1, ..., 1}`` (BaCO's ``feasible_output.feasibility_threshold``).
    """
    thresholds = (FEASIBILITY_THRESHOLDS if feasibility_threshold == DEFAULT_FEASIBILITY_THRESHOLD
                  else feasibility_threshold * 0.1 * np.arange(11))
    epsilon = float(rng.choice(thresholds)) if classifier is not None else 0.0
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
