"""The prior's decay: bayestune counts observations, the peers count model steps."""

import warnings

import pytest

from bayestune.bostep.scorer import PriorSettings
from bayestune.exceptions import BayestuneError
from bayestune.strategies.bo import BOSettings


def test_default_decay_counts_every_observation():
    assert [PriorSettings().decay_n(n) for n in (0, 1, 10, 11)] == [1, 1, 10, 11]


def test_model_steps_count_from_the_first_model_step_as_baco_does():
    # BaCO: iteration_number = evaluations - number_of_samples + 1 at a model step
    prior = PriorSettings(count="model_steps", design=10)
    assert [prior.decay_n(n) for n in (10, 11, 30)] == [1, 2, 21]
    assert prior.beta / prior.decay_n(10) == 10.0  # ten times the pull of beta / n_obs at the first step


def test_a_batch_of_picks_shares_one_n_as_hypermappers_iteration_number():
    prior = PriorSettings(count="model_steps", design=10, batch=3)
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
