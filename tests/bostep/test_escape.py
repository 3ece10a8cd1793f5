"""The escape step: nothing until the trust region confirms the incumbent, then proposals outside
every confirmed minimum's basin."""

from __future__ import annotations

import numpy as np

from bayestune.bostep.escape import EscapeStep
from bayestune.bostep.proposers import Pick
from bayestune.history import History
from bayestune.models.base import ModelFit
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.objectives import Objective
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.trust_region import HammingTrustRegion, parameters_changed
from bayestune.space import Ordinal, Space

SPACE = Space([Ordinal(name, [1, 2, 3, 4]) for name in "abcd"])


def pick_for(history, rng):
    encoder = FeatureEncoder(SPACE)
    F = encoder.transform(history.X)
    y = history.Y[:, 0]
    gp = GaussianProcess(encoder.blocks, seed=0).fit(F, y)
    fit = ModelFit(gp, history.X, y, fitted=gp, F=F, y_fitted=y)
    candidates = EnumeratedCandidates(SPACE, 10_000)
    return Pick(SPACE, history, fit, encoder, None, lambda X: np.zeros(len(X)), set(history.seen), candidates, rng)


def history_around(incumbent):
    """The incumbent (value 0) and its whole one-parameter neighbourhood (values 1), evaluated."""
    X = SPACE.enumerate()
    near = X[parameters_changed(SPACE, X, incumbent) <= 1]
    y = np.where(parameters_changed(SPACE, near, incumbent) == 0, 0.0, 1.0)
    return History(SPACE, [Objective("t")], near, y.reshape(-1, 1), np.ones(len(near), bool), np.empty((0, 4)))


def test_no_escape_before_the_region_confirms_the_incumbent_then_proposals_outside_its_basin():
    incumbent = SPACE.to_matrix([{"a": 1, "b": 1, "c": 1, "d": 1}])[0]
    history = history_around(incumbent)
    region = HammingTrustRegion(coverage_cap=24)
    escape = EscapeStep(2, region)
    rng = np.random.default_rng(0)
    region.update(0.0)  # centred on the incumbent, nothing covered yet
    assert escape.pick(pick_for(history, rng)) is None
    region.radius = 2  # the ball grew: its one-parameter neighbourhood had its turns
    rows = [escape.pick(pick_for(history, rng)) for _ in range(3)]
    assert rows[2] is None and escape.picks == 2  # two escapes per confirmed minimum
    for row in rows[:2]:
        assert parameters_changed(SPACE, row, incumbent)[0] > 2
        assert SPACE.row_keys(row)[0] not in history.seen
    assert len(escape.confirmed) == 1


def test_an_improved_best_is_not_confirmed_by_a_ball_grown_around_the_old_one():
    incumbent = SPACE.to_matrix([{"a": 1, "b": 1, "c": 1, "d": 1}])[0]
    region = HammingTrustRegion(coverage_cap=24)
    region.update(0.5)
    region.radius = 2
    escape = EscapeStep(2, region)
    assert escape.pick(pick_for(history_around(incumbent), np.random.default_rng(0))) is None  # best 0 < 0.5
