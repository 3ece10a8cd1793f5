import sys

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Space
from bayestune.trial import FailureKind, Origin, Result, TrialStatus


def small_space():
    return Space(
        [
            Ordinal("tx", [1, 2, 4, 8, 16]),
            Ordinal("ty", [1, 2, 4, 8, 16]),
            Categorical("v", ["a", "b"]),
            Permutation("p", 3),
        ],
        ["tx * ty <= 64"],
    )


def cost(cfg):
    return abs(np.log2(cfg["tx"]) - 3) + abs(np.log2(cfg["ty"]) - 1) + (cfg["v"] == "b") + cfg["p"][0]


def test_ask_never_repeats_and_respects_constraints():
    space = small_space()
    opt = Optimizer(space, objectives=["t"], strategy="cot_random", seed=0)
    seen = set()
    for _ in range(40):
        (cfg,) = opt.ask()
        key = tuple(sorted(cfg.items()))
        assert key not in seen
        seen.add(key)
        assert cfg["tx"] * cfg["ty"] <= 64
        opt.tell(cfg, cost(cfg))
    assert opt.n_evaluated == 40


def test_default_configuration_first():
    space = Space([Integer("a", 0, 100, default=42)])
    opt = Optimizer(space, strategy="random", seed=1)
    assert opt.ask()[0] == {"a": 42}


def test_exhausted_space_returns_fewer():
    space = Space([Integer("a", 0, 3)])
    opt = Optimizer(space, strategy="random", seed=1, design=DesignSpec(size=2))
    best = opt.optimize(lambda c: c["a"], budget=10)
    assert opt.n_evaluated == 4
    assert best.values["value"] == 0
    assert opt.ask(1) == []


def test_failures_are_recorded_not_raised():
    space = Space([Integer("a", 0, 50)])

    def flaky(cfg):
        if cfg["a"] % 3 == 0:
            raise RuntimeError("kernel crashed")
        if cfg["a"] % 3 == 1:
            return float("nan")
        return cfg["a"]

    opt = Optimizer(space, strategy="random", seed=2)
    opt.optimize(flaky, budget=30)
    assert opt.n_evaluated == 30
    statuses = {t.status for t in opt.trials}
    assert TrialStatus.FAILED in statuses and TrialStatus.OK in statuses
    crashed = [t for t in opt.trials if t.failure_kind == "exception"]
    assert crashed and "kernel crashed" in crashed[0].error
    assert [t for t in opt.trials if t.failure_kind == "nan"]
    assert opt.best.values["value"] % 3 == 2


def test_failed_design_points_are_replaced_until_two_feasible():
    space = Space([Integer("a", 0, 200)])
    opt = Optimizer(space, strategy="random", seed=3, design=DesignSpec(size=4))
    for _ in range(6):
        (cfg,) = opt.ask()
        opt.tell(cfg, Result.failure("boom"))
    assert opt._in_design_phase(0)
    (cfg,) = opt.ask()
    opt.tell(cfg, 1.0)
    assert opt._in_design_phase(0)
    (cfg,) = opt.ask()
    opt.tell(cfg, 2.0)
    assert not opt._in_design_phase(0)


def test_seed_reproducibility():
    def run(seed):
        opt = Optimizer(small_space(), objectives=["t"], strategy="cot_random", seed=seed)
        opt.optimize(cost, budget=15)
        return [tuple(sorted(t.config.items())) for t in opt.trials]

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_manual_tell_of_unasked_config():
    opt = Optimizer(small_space(), objectives=["t"], strategy="random", seed=0)
    cfg = {"tx": 2, "ty": 2, "v": "a", "p": (0, 1, 2)}
    trial = opt.tell(cfg, 1.5)
    assert trial.origin == "manual" and trial.feasible
    for _ in range(10):
        assert opt.ask()[0] != cfg


def test_unknown_strategy_lists_allowed():
    with pytest.raises(BayestuneError, match="allowed"):
        Optimizer(small_space(), strategy="magic")


def test_multi_objective_needs_capable_strategy():
    opt = Optimizer(small_space(), objectives=["t", "area"], strategy="random", seed=0)
    (cfg,) = opt.ask()
    trial = opt.tell(cfg, {"t": 1.0, "area": 2.0})
    assert trial.values == {"t": 1.0, "area": 2.0}
    bad = opt.tell(opt.ask()[0], {"t": 1.0})
    assert bad.status is TrialStatus.FAILED and "area" in bad.error


def test_feasible_output_names_the_flag():
    space = Space([Integer("a", 0, 9)])
    opt = Optimizer(space, strategy="random", seed=0, feasible_output="is_ok")
    (cfg,) = opt.ask()
    trial = opt.tell(cfg, {"value": 1.0, "is_ok": 0})
    assert not trial.feasible
    (cfg,) = opt.ask()
    assert opt.tell(cfg, {"value": 2.0, "is_ok": "True"}).feasible


def test_resumed_trials_keep_tuple_permutations(tmp_path):
    from bayestune.storage import Journal

    space = small_space()
    journal = Journal(tmp_path / "j.db")
    opt = Optimizer(space, objectives=["t"], strategy="random", seed=0, journal=journal)
    opt.optimize(cost, 5)
    resumed = Optimizer(space, objectives=["t"], strategy="random", seed=0, journal=journal, resume=True)
    assert resumed.n_evaluated == 5
    assert all(isinstance(t.config["p"], tuple) for t in resumed.trials)
    resumed.optimize(cost, 8)
    assert len(journal.trials()) == 8


def test_without_a_journal_trials_keep_their_origin_and_journal_ids():
    space = Space([Integer("a", 0, 100, default=42)])
    opt = Optimizer(space, strategy="random", design=DesignSpec(method="uniform", size=3), seed=0)
    opt.optimize(lambda cfg: float(cfg["a"]), budget=5)
    opt.tell({"a": 7}, 7.0)
    assert [t.origin for t in opt.trials] == [
        Origin.DEFAULT,
        Origin.INITIAL,
        Origin.INITIAL,
        Origin.SUGGESTED,
        Origin.SUGGESTED,
        Origin.MANUAL,
    ]
    assert [t.trial_id for t in opt.trials] == [t.trial_id for t in opt.journal.trials()] == list(range(1, 7))
    assert opt.journal.get_meta("strategy") == "random" and opt.journal.get_meta("seed") == 0


def test_a_black_box_calling_sys_exit_is_a_recorded_failure():
    def blackbox(cfg):
        if cfg["a"] == 42:
            sys.exit(3)
        return float(cfg["a"])

    opt = Optimizer(Space([Integer("a", 0, 100, default=42)]), strategy="random", seed=0)
    opt.optimize(blackbox, budget=4)
    first = opt.trials[0]
    assert first.status is TrialStatus.FAILED and first.failure_kind == FailureKind.EXCEPTION
    assert "SystemExit" in first.error and opt.n_evaluated == 4


def test_keyboard_interrupt_stops_the_run_with_the_journal_consistent(tmp_path):
    from bayestune.storage import Journal

    calls = []

    def blackbox(cfg):
        calls.append(cfg)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return float(cfg["a"])

    with Journal(tmp_path / "run.db") as journal:
        opt = Optimizer(Space([Integer("a", 0, 100)]), strategy="random", seed=0, journal=journal)
        with pytest.raises(KeyboardInterrupt):
            opt.optimize(blackbox, budget=10)
        assert journal.n_finished() == 2 and len(journal.pending()) == 1
    with Journal.open(tmp_path / "run.db") as journal:
        resumed = Optimizer(Space([Integer("a", 0, 100)]), journal=journal, resume=True)
        resumed.optimize(lambda cfg: float(cfg["a"]), budget=10)
        assert journal.n_finished() == 10
        assert [t.origin for t in resumed.trials].count(Origin.RERUN) == 1


def test_optimize_stops_a_black_box_that_only_fails_unless_told_to_go_on():
    from bayestune.execution import AllFailedError

    def broken(config):
        raise RuntimeError("libfoo.so: cannot open shared object file")

    space = Space([Integer("x", 0, 50)])
    opt = Optimizer(space, objectives=["t"], seed=0)
    with pytest.raises(AllFailedError, match="libfoo.so"):
        opt.optimize(broken, 30, stop_after_failures=5)
    assert opt.n_evaluated == 5

    patient = Optimizer(space, objectives=["t"], seed=0)
    assert patient.optimize(broken, 12, stop_after_failures=None) is None
    assert patient.n_evaluated == 12


def test_a_default_configuration_that_breaks_a_constraint_is_reported_not_skipped_silently(caplog):
    space = Space([Integer("x", 0, 10, default=9), Integer("y", 0, 10, default=9)], constraints=["x + y <= 10"])
    opt = Optimizer(space, objectives=["t"], seed=0)
    with caplog.at_level("WARNING", logger="bayestune.optimizer"):
        first = opt.ask()[0]
    assert first != {"x": 9, "y": 9}
    assert "breaks the known constraint(s) ['x + y <= 10']" in caplog.text


def test_the_optimizer_says_what_it_read_from_prior_runs():
    from bayestune.scenario import TransferSpec
    from bayestune.space import Integer, Space
    from bayestune.transfer.runs import PriorRun

    space = Space([Integer("x", 0, 9)])
    prior = PriorRun.from_configs(
        space, [{"x": i} for i in range(5)], [5.0, 4.0, float("nan"), 2.0, 1.0], name="old.db"
    )
    opt = Optimizer(space, objectives=["t"], transfer=TransferSpec([prior], mode="design"))
    assert opt.transfer_note() == (
        "transfer: read 1 prior run(s): old.db (5 trials, 4 feasible); used to open "
        "the initial design with their best configurations"
    )
    assert Optimizer(space, objectives=["t"]).transfer_note() is None
