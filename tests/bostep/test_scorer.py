"""The prior's decay (bayestune counts observations, the peers count model steps) and noisy EI's incumbent."""

import warnings

import numpy as np
import pytest

from bayestune.acquisition.functions import DEFAULT_XI, get_acquisition
from bayestune.bostep.feasibility import FeasibilitySettings
from bayestune.bostep.scorer import PeerPriorSettings, PriorSettings, Scorer, plug_in_incumbent
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.objectives import Objective
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.space import Integer, Space
from bayestune.strategies.bo import BOSettings


def test_default_decay_counts_every_observation():
    assert [PriorSettings().decay_n(n) for n in (0, 1, 10, 11)] == [1, 1, 10, 11]


def test_model_steps_count_from_the_first_model_step_as_baco_does():
    # BaCO: iteration_number = evaluations - number_of_samples + 1 at a model step
    prior = PeerPriorSettings(count="model_steps", design=10)
    assert [prior.decay_n(n) for n in (10, 11, 30)] == [1, 2, 21]
    assert prior.beta / prior.decay_n(10) == 10.0  # ten times the pull of beta / n_obs at the first step


def test_a_batch_of_picks_shares_one_n_as_hypermappers_iteration_number():
    prior = PeerPriorSettings(count="model_steps", design=10, batch=3)
    assert [prior.decay_n(n) for n in (10, 13, 16, 19)] == [1, 2, 3, 4]
    # a design asked in chunks of 3 ends part-way through one (9 told, 1 design row and 2 picks asked):
    # that step is the first, the next batch the second
    assert [prior.decay_n(n) for n in (9, 12, 15)] == [1, 2, 3]
    with pytest.raises(BayestuneError, match="batch"):
        BOSettings.from_options("strategy 'bo'", {"prior": {"batch": 0}})


def test_prior_beta_is_the_old_spelling_of_prior_beta():
    with pytest.warns(FutureWarning, match="prior.beta"):
        s = BOSettings.from_options("strategy 'bo'", {"prior_beta": 3.0})
    assert s.prior.beta == 3.0


def test_bad_prior_options_name_the_key():
    with warnings.catch_warnings():
        with pytest.raises(BayestuneError, match="prior.count"):
            BOSettings.from_options("strategy 'bo'", {"prior": {"count": "iterations"}})


def _history(repeats):
    space = Space([Integer("x", 0, 20)])
    X = np.array([[2.0], [5.0], [9.0]])
    return space, History(
        space,
        [Objective("time")],
        X,
        np.array([[3.0], [2.0], [1.0]]),
        np.ones(3, dtype=bool),
        np.empty((0, 1)),
        repeats=repeats,
    )


class Falling:
    """Latent mean -x/10 (the larger x, the better), unit spread; its best observed target is 0."""

    best_y_latent_ = 0.0

    def predict_latent(self, F):
        return -F[:, 0] / 10, np.ones(len(F))


def test_a_noisy_black_box_gets_noisy_eis_incumbent_the_best_posterior_mean():

    space, noisy = _history([{"time": (3.1, 2.9)}, {}, {"time": (1.0,)}])
    encoder = FeatureEncoder(space)
    fit = ModelFit(Falling(), noisy.X, np.array([3.0, 2.0, 1.0]))
    mean, _ = Falling().predict_latent(encoder.transform(noisy.X))
    assert plug_in_incumbent(noisy, fit, encoder) == pytest.approx(float(mean.min())) != 0.0
    scorer = Scorer(
        space,
        np.random.default_rng(0),
        EnumeratedCandidates(space, 100),
        prior=PriorSettings(),
        feasibility=FeasibilitySettings(),
    )
    scorer.prepare(noisy, fit.y, fit, encoder, set())
    score = scorer.score(fit.posterior, encoder, None, noisy.n)
    acquisition, _ = scorer.acquisition_parameter()
    rows = np.array([[0.0], [12.0], [20.0]])
    mu, sd = Falling().predict_latent(encoder.transform(rows))
    expected = get_acquisition("ei")(mu, sd, float(mean.min()), DEFAULT_XI)
    assert acquisition == "ei" and np.allclose(score(rows), expected)


def test_a_black_box_measured_once_keeps_the_best_observation_as_incumbent():

    for repeats in ([], [{}, {}, {}], [{"time": (1.0,)}, {"time": (2.0, float("nan"))}, {}]):
        space, history = _history(repeats)
        fit = ModelFit(Falling(), history.X, np.array([3.0, 2.0, 1.0]))
        assert plug_in_incumbent(history, fit, FeatureEncoder(space)) is None
