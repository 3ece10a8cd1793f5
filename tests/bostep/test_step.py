"""One BO step with stand-in parts: who picks, how a batch is planned, what a projection does."""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.bostep.feasibility import FeasibilitySettings
from bayestune.bostep.proposers import ProposalSchedule
from bayestune.bostep.scorer import PriorSettings, Scorer
from bayestune.bostep.stall import StallSettings, StallStep
from bayestune.bostep.step import BatchBeliever, BOStep
from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.objectives import Objective
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import AcquisitionSearchSettings
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.space import Integer, Space

SPACE = Space([Integer("x", 0, 20), Integer("y", 0, 20)])


class Rising:
    """Latent mean -x: the larger x, the better; unit spread."""

    best_y_latent_ = 0.0

    def predict_latent(self, F):
        return -F[:, 0], np.ones(len(F))


class Model:
    """A model part that records its calls; ``believing`` adds ``believe``."""

    def __init__(self, *, believing: bool = False, project=None) -> None:
        self.encoder = FeatureEncoder(SPACE)
        self.fits, self.believed, self.project = 0, 0, project
        if believing:
            self.believe = self._believe

    def fit(self, history, targets):
        self.fits += 1
        f = history.feasible
        return ModelFit(Rising(), history.X[f], targets[f], project=self.project)

    def observation_rows(self, history, targets):
        return np.arange(history.n)

    def with_failures(self, fit, history, targets, classifier):
        return fit

    def _believe(self, fit, row):
        self.believed += 1
        return fit


class CountingScorer(Scorer):
    calls = 0

    def score(self, posterior, encoder, classifier, n_obs):
        self.calls += 1
        self.classifier = classifier
        return super().score(posterior, encoder, classifier, n_obs)


def step(model, *, every=0, feasibility=None, epsilon=0.0, stall_after=0):
    rng = np.random.default_rng(0)
    candidates = EnumeratedCandidates(SPACE, 10_000)
    feasibility = feasibility or FeasibilitySettings()
    scorer = CountingScorer(SPACE, rng, candidates, prior=PriorSettings(), feasibility=feasibility)
    stall = [StallStep(StallSettings(after=stall_after))] if stall_after else []
    return BOStep(
        SPACE,
        rng,
        target=lambda h: h.signed_Y()[:, 0],
        model=model,
        scorer=scorer,
        schedule=ProposalSchedule(AcquisitionSearchSettings(epsilon=epsilon), TrustRegionSettings(every=every), *stall),
        feasibility=feasibility,
        candidates=candidates,
    )


def history(rows, values, feasible=None):
    X = np.array(rows, dtype=float)
    feasible = np.ones(len(X), bool) if feasible is None else np.array(feasible)
    return History(
        SPACE,
        [Objective("t")],
        X,
        np.array(values, dtype=float).reshape(-1, 1),
        feasible,
        np.empty((0, SPACE.width)),
        seen=set(SPACE.row_keys(X)),
    )


H = history([[0, 0], [5, 5], [10, 3]], [3.0, 2.0, 1.0])


def test_before_two_feasible_observations_the_step_draws_at_random_without_a_model():
    model = Model()
    rows = step(model).suggest(history([[0, 0], [1, 1]], [1.0, 2.0], [True, False]), 3)
    assert len(rows) == 3 and model.fits == 0


def test_a_model_that_cannot_believe_plans_a_batch_as_the_top_of_one_score():
    model = Model()
    s = step(model)
    rows = s.suggest(H, 4)
    assert s.scorer.calls == 1 and len({tuple(r) for r in rows}) == 4
    assert all(r[0] == 20 for r in rows)  # the four best unseen rows of one score


def test_a_believing_model_rescoring_after_each_pick():
    model = Model(believing=True)
    assert isinstance(model, BatchBeliever) and not isinstance(Model(), BatchBeliever)
    s = step(model)
    rows = s.suggest(H, 3)
    assert s.scorer.calls == 3 and model.believed == 2 and len({tuple(r) for r in rows}) == 3


def test_a_projection_sets_the_proposed_rows_unless_that_repeats_one():
    def hold_y(X):
        H = np.array(X, dtype=float).reshape(-1, SPACE.width)
        H[:, 1] = 7
        return H

    rows = step(Model(project=hold_y)).suggest(H, 2)
    assert rows[0][1] == 7 and rows[0][0] == 20  # scored as held, proposed as held
    assert len({tuple(r) for r in rows}) == 2  # the second cannot also be (20, 7)


def test_a_trust_region_turn_changes_one_parameter_of_the_incumbent():
    s = step(Model(), every=1)
    (row,) = s.suggest(H, 1)
    incumbent = H.X[2]
    assert s.schedule.local_picks == 1 and int(np.sum(row != incumbent)) == 1


@pytest.mark.parametrize(
    "mode, feasible, classified",
    [
        ("auto", [True, True, True], False),
        ("auto", [True, False, True], True),
        (True, [True, True, True], True),
        (False, [True, False, True], False),
    ],
)
def test_feasibility_classifier_by_mode(mode, feasible, classified):
    s = step(Model(), feasibility=FeasibilitySettings(model=mode))
    s.suggest(history([[0, 0], [5, 5], [10, 3]], [3.0, 2.0, 1.0], feasible), 1)
    assert (s.scorer.classifier is not None) == classified


def test_the_epsilon_random_step_replaces_a_suggestion_before_any_fit():
    model = Model()
    rows = step(model, epsilon=1.0).suggest(H, 2)
    assert len(rows) == 2 and model.fits == 0


def test_the_stall_step_takes_the_first_pick_before_the_trust_region():
    stalled = history([[0, 0], [5, 5], [10, 3], [1, 1], [2, 2]], [1.0, 2.0, 3.0, 4.0, 5.0])
    s = step(Model(), every=1, stall_after=1)
    s.schedule.n_model_suggestions = 5  # five model suggestions made: the last four did not improve
    s.suggest(stalled, 1)
    assert s.schedule.local_picks == 0  # the stall step answered, so the trust region did not turn
    s = step(Model(), every=1)
    s.suggest(stalled, 1)
    assert s.schedule.local_picks == 1
