"""The ``ModelPart`` contract: every model a BO step plugs in (the GP, the forest, the transfer GP,
BoGraph's DAG) passes the same battery; a new model part gets it by adding one fixture row.

What the step relies on: a fit of the feasible rows with a posterior the scorer can read, the
rows P(feasible) learns from, the failure hook, the same fit from the same seed, and, only for a
part that is a :class:`BatchBeliever`, a believed value that adds a row without touching the data.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayestune.acquisition.scoring import acquisition_scorer
from bayestune.bostep.step import BatchBeliever, ModelPart
from bayestune.history import History
from bayestune.models.base import SamplingPosterior, Surrogate
from bayestune.models.forest import FeasibilityClassifier
from bayestune.objectives import Objective
from bayestune.space import Integer, Real, Space
from bayestune.strategies.base import make_strategy
from bayestune.transfer.runs import PriorRun

SPACE = Space([Real("x", 0.0, 1.0), Integer("k", 1, 8)])


def value(X: np.ndarray) -> np.ndarray:
    return (X[:, 0] - 0.3) ** 2 + 0.05 * X[:, 1]


def history(n: int = 14, seed: int = 0, *, failures: bool = False) -> History:
    X = SPACE.sample(n, np.random.default_rng(seed))
    y = value(X)
    feasible = np.ones(n, bool)
    if failures:
        feasible[::5] = False
    metrics = [{"load": float(v) * 2.0 + 1.0} for v in y]  # a logged metric for BoGraph's DAG
    Y = np.where(feasible, y, np.nan).reshape(-1, 1)
    return History(SPACE, [Objective("t")], X, Y, feasible, np.empty((0, SPACE.width)), metrics=metrics)


def gp(seed: int) -> ModelPart:
    return make_strategy("bo", SPACE, [Objective("t")], np.random.default_rng(seed)).surrogates


def forest(seed: int) -> ModelPart:
    options = {"model": "rf", "rf": {"trees": 10}}
    return make_strategy("bo", SPACE, [Objective("t")], np.random.default_rng(seed), options).surrogates


def transfer_gp(seed: int) -> ModelPart:
    strategy = make_strategy("bo", SPACE, [Objective("t")], np.random.default_rng(seed))
    X = SPACE.sample(30, np.random.default_rng(99))
    strategy.use_transfer([PriorRun("source", X, value(X) + 0.01)])
    return strategy.surrogates


def graph(seed: int) -> ModelPart:
    options = {"relearn": {"min_rows": 4}, "mc_samples": 8}
    return make_strategy("bograph", SPACE, [Objective("t")], np.random.default_rng(seed), options).graph


PARTS = {"gp": gp, "forest": forest, "transfer_gp": transfer_gp, "bograph": graph}


@pytest.fixture(params=sorted(PARTS))
def make(request):
    return PARTS[request.param]


def targets(h: History) -> np.ndarray:
    return h.signed_Y()[:, 0]


def test_a_fit_holds_the_feasible_rows_and_a_posterior_the_scorer_reads(make):
    part, h = make(0), history()
    fit = part.fit(h, targets(h))
    assert len(fit.X) == len(fit.y) and np.isfinite(fit.y).all()
    rows = {k for k, ok in zip(SPACE.row_keys(h.X), h.feasible) if ok}
    assert set(SPACE.row_keys(fit.X)) <= rows
    assert isinstance(fit.posterior, (Surrogate, SamplingPosterior))
    candidates = SPACE.sample(20, np.random.default_rng(5))
    score = acquisition_scorer(
        SPACE, part.encoder, fit.posterior, None, np.random.default_rng(0), parameter=1e-4, n_obs=h.n, prior_beta=10.0
    )(candidates)
    assert score.shape == (20,) and not np.isnan(score).any()


def test_the_observation_rows_index_the_history_and_hold_the_failures(make):
    part, h = make(0), history(failures=True)
    rows = part.observation_rows(h, targets(h))
    assert rows.dtype.kind == "i" and set(rows) <= set(range(h.n))
    assert (~h.feasible[rows]).any() and h.feasible[rows].any()  # P(feasible) sees both kinds


def test_the_failure_hook_returns_a_fit_of_the_same_rows(make):
    part, h = make(0), history(failures=True)
    t = targets(h)
    fit = part.fit(h, t)
    rows = part.observation_rows(h, t)
    classifier = FeasibilityClassifier(n_estimators=5, seed=0).fit(part.encoder.transform(h.X[rows]), h.feasible[rows])
    for c in (None, classifier):
        after = part.with_failures(fit, h, t, c)
        assert np.array_equal(after.X, fit.X) and np.array_equal(after.y, fit.y)


def test_the_same_seed_gives_the_same_fit(make):
    h = history()
    candidates = SPACE.sample(10, np.random.default_rng(7))
    scores = []
    for _ in range(2):
        part = make(3)
        fit = part.fit(h, targets(h))
        scores.append(
            acquisition_scorer(
                SPACE,
                part.encoder,
                fit.posterior,
                None,
                np.random.default_rng(0),
                parameter=1e-4,
                n_obs=h.n,
                prior_beta=10.0,
            )(candidates)
        )
    assert np.array_equal(scores[0], scores[1])


def test_a_believer_adds_a_believed_row_and_keeps_the_data(make):
    part, h = make(0), history()
    if not isinstance(part, BatchBeliever):
        pytest.skip("plans a batch as the top of one score (no believe)")
    fit = part.fit(h, targets(h))
    after = part.believe(fit, SPACE.sample(1, np.random.default_rng(4))[0])
    assert np.array_equal(after.X, fit.X) and np.array_equal(after.y, fit.y)
    assert len(after.y_fitted) == len(fit.y_fitted) + 1 and np.isfinite(after.y_fitted[-1])


def test_which_parts_believe():
    assert {name for name, make in PARTS.items() if isinstance(make(0), BatchBeliever)} == {
        "gp",
        "forest",
        "transfer_gp",
    }
