"""The score a maximiser climbs: an acquisition function on a surrogate's posterior, weighted by
P(feasible) and by the user's prior.

Two kinds of posterior are scored the same way: a latent-Gaussian one (:class:`Surrogate`: the
GP, the forest, the failure-aware GP) by closed-form EI/PI/LCB, and a sampling one
(:class:`SamplingPosterior`: BoGraph's DAG) by Monte-Carlo EI over shared base samples. The
weightings after it are one rule for both, so every model-based strategy gets hidden
constraints (BaCO) and priors (piBO) from here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bayestune.acquisition.functions import (
    feasibility_weighted,
    get_acquisition,
    mc_expected_improvement,
    prior_weighted,
)
from bayestune.models.base import SamplingPosterior, Surrogate
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.space import Space

#: ε_f values drawn each iteration (BaCO: feasibility_threshold · {0, 0.1, ..., 1.0}, with its
#: default threshold 0.1); 0 keeps every candidate.
FEASIBILITY_THRESHOLDS = np.round(np.arange(11) * 0.01, 2)
DEFAULT_FEASIBILITY_THRESHOLD = 0.1
#: Monte-Carlo draws per candidate for a sampling posterior.
DEFAULT_MC_SAMPLES = 64

Score = Callable[[np.ndarray], np.ndarray]


def acquisition_scorer(
    space: Space,
    encoder: FeatureEncoder,
    model: Surrogate | SamplingPosterior,
    classifier: FeasibilityClassifier | None,
    rng: np.random.Generator,
    *,
    acquisition: str = "ei",
    parameter: float,
    n_obs: int,
    prior_beta: float,
    feasibility_threshold: float = DEFAULT_FEASIBILITY_THRESHOLD,
    mc_samples: int = DEFAULT_MC_SAMPLES,
    incumbent: float | None = None,
) -> Score:
    """Score rows of ``space`` (higher is better): the acquisition on ``model``'s posterior,
    times P(feasible) with candidates at or below a random threshold ε_f ruled out (BaCO), times
    the prior's weight decaying with ``n_obs`` (piBO).

    ε_f is drawn from ``rng`` once per scorer, and only when there is a ``classifier``, from
    ``feasibility_threshold · {0, 0.1, ..., 1}`` (BaCO's ``feasible_output.feasibility_threshold``);
    a sampling posterior's base samples are drawn after it, also once per scorer. A sampling
    posterior is scored by Monte-Carlo EI (``acquisition`` must be ``"ei"``). ``incumbent`` (latent
    units) replaces a Gaussian model's best observed target, e.g. by noisy EI's plug-in value.
    """
    thresholds = (
        FEASIBILITY_THRESHOLDS
        if feasibility_threshold == DEFAULT_FEASIBILITY_THRESHOLD
        else feasibility_threshold * 0.1 * np.arange(11)
    )
    epsilon = float(rng.choice(thresholds)) if classifier is not None else 0.0
    value = (
        _monte_carlo(model, rng, acquisition, mc_samples)
        if isinstance(model, SamplingPosterior)
        else _gaussian(model, acquisition, parameter, incumbent)
    )

    def score(X: np.ndarray) -> np.ndarray:
        features: list[np.ndarray] = []

        def encoded() -> np.ndarray:  # once per call, and only when something reads it
            if not features:
                features.append(encoder.transform(X))
            return features[0]

        acq = value(X, encoded)
        if classifier is not None:
            acq = feasibility_weighted(acq, classifier.predict_proba(encoded()), epsilon)
        if space.has_prior:
            acq = prior_weighted(acq, space.prior_weight(X), n_obs, prior_beta)
        return acq

    return score


def _gaussian(model: Surrogate, acquisition: str, parameter: float, incumbent: float | None = None):
    best = float(model.best_y_latent_ if incumbent is None else incumbent)
    function = get_acquisition(acquisition)

    def value(X: np.ndarray, encoded: Callable[[], np.ndarray]) -> np.ndarray:
        mu, sd = model.predict_latent(encoded())
        acq = function(mu, sd, best, parameter)
        if acquisition == "lcb":  # shifted positive so the multiplicative weightings stay meaningful
            acq = acq - acq.min() + 1e-12
        return acq

    return value


def _monte_carlo(model: SamplingPosterior, rng: np.random.Generator, acquisition: str, mc_samples: int):
    if acquisition != "ei":
        raise ValueError(f"a sampling posterior is scored by Monte-Carlo EI, not {acquisition!r}")
    Z = model.base_samples(mc_samples, rng)
    best = float(model.best)

    def value(X: np.ndarray, encoded: Callable[[], np.ndarray]) -> np.ndarray:
        return mc_expected_improvement(model.rsample(X, Z), best)

    return value
