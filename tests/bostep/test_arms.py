"""The hedge over (model, acquisition) arms: it follows the arm whose picks did better, proposes
as the default does before there is evidence, and refuses bad settings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bayestune.bostep.arms import ARM_SETS, DEFAULT_ARM, OUTCOME_EXPLORE, ArmHedge, ArmSettings
from bayestune.exceptions import BayestuneError
from bayestune.optimizer import Optimizer
from bayestune.settings import ExperimentalOptionWarning
from bayestune.space import Integer, Space


class Valley:
    """A judge whose latent mean is the distance of x from 8 (lower is better)."""

    def predict_latent(self, F):
        return np.abs(F[:, 0] - 8.0), np.ones(len(F))


F_TRAIN = np.arange(20.0).reshape(-1, 1)


def rounds(hedge: ArmHedge, nominees: dict[str, np.ndarray], n: int, n_evaluated: int) -> list[str]:
    """``n`` suggestions that each judge the last nominees, then nominate the same rows again."""
    chosen = []
    for _ in range(n):
        hedge.judge({"gp": Valley()}, F_TRAIN, lambda rows: np.asarray(rows, dtype=float).reshape(len(rows), -1))
        chosen.append(hedge.choose(nominees, n_evaluated))
    return chosen


def test_it_follows_the_arm_whose_nominees_the_judges_rate_best():
    hedge = ArmHedge(ArmSettings(set="all", after=0), np.random.default_rng(0))
    nominees = {
        "gp-ei": np.array([19.0]),
        "gp-pi": np.array([0.0]),
        "gp-lcb": np.array([14.0]),
        "rf-ei": np.array([8.0]),
    }
    chosen = rounds(hedge, nominees, 12, n_evaluated=40)
    assert int(np.argmax(hedge.gains)) == hedge.arms.index("rf-ei")
    assert hedge.probabilities()[hedge.arms.index("rf-ei")] > 0.99
    assert chosen[-5:] == ["rf-ei"] * 5  # after a few judgements it proposes the good arm's nominee


def test_equal_nominees_leave_the_choice_open():
    hedge = ArmHedge(ArmSettings(set="models", after=0), np.random.default_rng(1))
    chosen = rounds(hedge, {"gp-ei": np.array([3.0]), "rf-ei": np.array([3.0])}, 200, n_evaluated=40)
    assert np.allclose(hedge.probabilities(), 0.5)
    assert 60 < chosen.count("rf-ei") < 140


def test_with_the_outcome_reward_it_follows_the_arm_whose_measured_proposals_were_better():
    hedge = ArmHedge(ArmSettings(set="all", after=0, reward="outcome", eta=0.2), np.random.default_rng(2))
    nominees = {a: np.array([float(i)]) for i, a in enumerate(ARM_SETS["all"])}
    for _ in range(80):  # the forest's proposals measure best, the others worst
        outcome = None if hedge.proposed is None else (1.0 if hedge.proposed[0] == 3.0 else -1.0)
        hedge.judge({}, F_TRAIN, None, outcome)
        hedge.choose(nominees, 40)
    p = hedge.probabilities()
    assert p.argmax() == hedge.arms.index("rf-ei") and p.max() > 0.8
    assert p.min() >= OUTCOME_EXPLORE / len(p) - 1e-12  # the uniform share keeps every arm drawn


def test_an_unmeasured_proposal_leaves_the_outcome_gains_alone():
    hedge = ArmHedge(ArmSettings(set="models", after=0, reward="outcome"), np.random.default_rng(0))
    hedge.choose({"gp-ei": np.array([1.0]), "rf-ei": np.array([1.0])}, 30)
    hedge.judge({}, F_TRAIN, None, None)
    assert np.all(hedge.gains == 0)
    hedge.choose({"gp-ei": np.array([1.0]), "rf-ei": np.array([1.0])}, 30)
    hedge.judge({}, F_TRAIN, None, 0.5)  # both nominated the measured row: both credited, chance 1
    assert np.allclose(hedge.gains, 0.5)


class Constant:
    """A judge that predicts the same value everywhere: every row ties, its predicted share is 0."""

    def predict_latent(self, F):
        return np.zeros(len(F)), np.ones(len(F))


def test_with_the_prediction_reward_it_follows_the_model_that_ranked_the_measured_proposals_right():
    hedge = ArmHedge(ArmSettings(set="models", after=0, reward="prediction", eta=5), np.random.default_rng(3))
    encode = lambda rows: np.asarray(rows, dtype=float).reshape(len(rows), -1)  # noqa: E731
    judges = {"gp": Constant(), "rf": Valley()}  # the forest predicts rows near 8 to be the best
    for step in range(30):
        # the proposal at row 8 measured best (share better 0): Valley predicted share 0, so did Constant;
        # at row 0 it measured mid-table (share 0.5): Valley predicted 15/20 (off by 0.25), Constant 0 (0.5)
        row = 8.0 if step % 2 == 0 else 0.0
        outcome = None if hedge.proposed is None else (1.0 if hedge.proposed[0] == 8.0 else 0.0)
        hedge.judge(judges, F_TRAIN, encode, outcome)
        hedge.choose({"gp-ei": np.array([row]), "rf-ei": np.array([row])}, 40)
    assert int(np.argmax(hedge.gains)) == hedge.arms.index("rf-ei")
    assert hedge.probabilities()[hedge.arms.index("rf-ei")] > 0.9


def test_the_prediction_reward_judges_nothing_after_a_turn_without_a_hedged_pick():
    hedge = ArmHedge(ArmSettings(set="models", after=0, reward="prediction"), np.random.default_rng(0))
    encode = lambda rows: np.asarray(rows, dtype=float).reshape(len(rows), -1)  # noqa: E731
    hedge.judge({"gp": Constant(), "rf": Valley()}, F_TRAIN, encode, None)
    hedge.choose({"gp-ei": np.array([0.0]), "rf-ei": np.array([0.0])}, 40)
    hedge.judge({"gp": Constant(), "rf": Valley()}, F_TRAIN, encode, 1.0)  # judged: the proposal measured
    gains = hedge.gains.copy()
    assert not np.allclose(gains, 0)
    hedge.judge({"gp": Constant(), "rf": Valley()}, F_TRAIN, encode, 1.0)  # a trust-region turn: nothing new
    assert np.allclose(hedge.gains, gains)


def test_the_default_arm_proposes_until_after_evaluations():
    hedge = ArmHedge(ArmSettings(set="models", after=20), np.random.default_rng(0))
    nominees = {"gp-ei": np.array([19.0]), "rf-ei": np.array([8.0])}
    early = rounds(hedge, nominees, 10, n_evaluated=19)
    assert early == [DEFAULT_ARM] * 10
    assert hedge.gains[hedge.arms.index("rf-ei")] > hedge.gains[hedge.arms.index("gp-ei")]  # evidence gathered
    assert rounds(hedge, nominees, 3, n_evaluated=20)[-1] == "rf-ei"


def test_every_arm_must_nominate():
    hedge = ArmHedge(ArmSettings(set="models"), np.random.default_rng(0))
    with pytest.raises(ValueError, match="rf-ei"):
        hedge.choose({"gp-ei": np.array([1.0])}, 30)
    with pytest.raises(ValueError, match="off"):
        ArmHedge(ArmSettings(), np.random.default_rng(0))


def space():
    return Space([Integer("x", 0, 30), Integer("y", 0, 30)])


def objective(cfg):
    return 1.0 + (cfg["x"] - 21) ** 2 + abs(cfg["y"] - 5) * 3


def run(budget, seed=0, **arms):
    options = {"experimental": {"arms": arms}} if arms else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalOptionWarning)
        opt = Optimizer(space(), objectives=["t"], strategy="bo", seed=seed, strategy_options=options)
    opt.optimize(objective, budget)
    return opt


@pytest.mark.parametrize("reward", ["model", "outcome", "prediction"])
def test_a_run_with_the_hedge_equals_the_default_until_after_then_uses_the_arms(reward):
    default = [t.config for t in run(30).trials]
    hedged_opt = run(30, set="all", after=20, reward=reward)
    hedged = [t.config for t in hedged_opt.trials]
    assert hedged[:20] == default[:20]
    hedge = hedged_opt.strategy.step.arms
    assert sum(hedge.picks.values()) > 0 and set(hedge.picks) == set(ARM_SETS["all"])
    assert len({tuple(sorted(c.items())) for c in hedged}) == 30  # no repeats


@pytest.mark.parametrize(
    "arms, match",
    [
        ({"set": "everything"}, "experimental.arms.set"),
        ({"eta": 0}, "experimental.arms.eta"),
        ({"discount": 1.5}, "experimental.arms.discount"),
        ({"after": -1}, "experimental.arms.after"),
        ({"reward": "regret"}, "experimental.arms.reward"),
    ],
)
@pytest.mark.filterwarnings("ignore::bayestune.settings.ExperimentalOptionWarning")
def test_bad_arm_settings_are_refused(arms, match):
    with pytest.raises(BayestuneError, match=match):
        Optimizer(space(), strategy="bo", strategy_options={"experimental": {"arms": arms}})


@pytest.mark.filterwarnings("ignore::bayestune.settings.ExperimentalOptionWarning")
def test_the_hedge_refuses_a_fixed_forest_or_model_selection():
    for options in ({"model": "rf"}, {"experimental": {"model_selection_every": 5}}):
        merged = {**options, "experimental": {**options.get("experimental", {}), "arms": {"set": "models"}}}
        with pytest.raises(BayestuneError, match="arm hedge"):
            Optimizer(space(), strategy="bo", strategy_options=merged)
