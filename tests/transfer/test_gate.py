import numpy as np
import pytest

from bayestune.optimizer import Optimizer
from bayestune.scenario.records import TransferSpec
from bayestune.transfer.gate import TRUST_AUC, DesignGate, pairwise_auc
from tests.transfer.conftest import target


def test_pairwise_auc_counts_wins_ties_and_failures():
    assert pairwise_auc([1.0], [2.0, 3.0]) == 1.0
    assert pairwise_auc([2.0], [1.0, 2.0]) == 0.25
    assert pairwise_auc([np.nan], [5.0]) == 0.0  # a failed pick loses
    assert pairwise_auc([np.nan], [np.nan]) == 0.5
    assert np.isnan(pairwise_auc([], [1.0]))


def run(space, source, seed=0, budget=10, sign=1.0):
    opt = Optimizer(space, objectives=["t"], seed=seed, transfer=TransferSpec([source], mode="auto"))
    for _ in range(budget):
        cfg = opt.ask()[0]
        opt.tell(cfg, {"t": sign * target(cfg)})
    return opt


def picks(source, k):
    return [tuple(r) for r in source.X[np.argsort(source.y, kind="stable")[:k]]]


def test_a_related_source_keeps_the_gate_open_and_alternates_with_the_cold_design(space, related):
    opt = run(space, related)
    rows = [tuple(space.to_matrix([t.config])[0]) for t in opt.trials]
    gate = opt._gate.state(opt.history())
    assert gate.open and gate.n_picks == 5 and gate.sources[0].auc >= TRUST_AUC
    best = picks(related, 5)
    assert rows[0] == tuple(space.to_matrix([space.default_config()])[0])
    assert [rows[i] for i in (1, 3, 5, 7, 9)] == best  # a pick, a cold point, a pick, ...
    assert not {rows[i] for i in (2, 4, 6, 8)} & set(best)
    assert min(t.values["t"] for t in opt.trials) == 1.0  # the related source's best is the optimum
    assert "related: trusted after 5 measured pick(s)" in opt.transfer_note()


def test_an_unrelated_source_is_dropped_after_its_picks_lose_and_says_so(space, unrelated):
    closed = []
    for seed in range(8):
        opt = run(space, unrelated, seed=seed)
        state = opt._gate.state(opt.history())
        if state.open:
            continue
        closed.append(state.n_picks)
        assert "unrelated: dropped after evaluation" in opt.transfer_note()
        assert "the rest of the design is the cold one" in opt.transfer_note()
        # not one pick after the gate closed: the rest of the design is the cold run's, in order
        keys = set(opt._gate.keys[0])
        rows = [tuple(r) for r in opt.history().X]
        taken = [r for r in rows[: state.closed_at] if space.row_keys(np.array([r]))[0] in keys]
        rest = [r for r in rows if r not in taken]
        cold = Optimizer(space, objectives=["t"], seed=seed)
        cold_rows = []
        for _ in range(10):
            cfg = cold.ask()[0]
            cold.tell(cfg, {"t": target(cfg)})
            cold_rows.append(tuple(space.to_matrix([cfg])[0]))
        cold_rows = [r for r in cold_rows if r not in taken]  # a cold point already measured is skipped
        assert len(taken) == state.n_picks and rest == cold_rows[: len(rest)]
    assert len(closed) >= 6 and np.mean(closed) <= 2.5


def test_the_gate_reads_a_maximised_objective_the_right_way_round(space, related):
    from bayestune.objectives import Objective
    from bayestune.transfer.runs import PriorRun

    flipped = PriorRun(related.name, related.X, related.y)  # signed to minimise already
    opt = Optimizer(
        space, objectives=[Objective("t", "maximize")], seed=0, transfer=TransferSpec([flipped], mode="auto")
    )
    for _ in range(10):
        cfg = opt.ask()[0]
        opt.tell(cfg, {"t": -target(cfg)})
    assert opt._gate.state(opt.history()).open


def test_a_resumed_run_reaches_the_same_decision(space, unrelated, tmp_path):
    from bayestune.storage import Journal

    path = tmp_path / "run.db"
    with Journal(path) as journal:
        first = Optimizer(space, objectives=["t"], seed=3, journal=journal, transfer=TransferSpec([unrelated]))
        for _ in range(6):
            cfg = first.ask()[0]
            first.tell(cfg, {"t": target(cfg)})
        before = first._gate.state(first.history())
    with Journal(path) as journal:
        again = Optimizer(
            space, objectives=["t"], seed=3, journal=journal, resume=True, transfer=TransferSpec([unrelated])
        )
        assert again._gate.state(again.history()) == before


def test_auto_is_the_default_mode_and_its_gate_holds_at_most_top_picks(space, related):
    assert TransferSpec(["a.csv"]).mode == "auto"
    gate = DesignGate(space, [related], top=3, horizon=10)
    assert len(gate.rows[0]) == 3
    with pytest.raises(Exception, match="transfer mode must be one of"):
        TransferSpec(["a.csv"], mode="sometimes")


def test_each_source_is_gated_on_its_own_picks(space, related, unrelated):
    """A folder of caches with one unrelated among siblings: the unrelated one is dropped, the
    related one keeps filling the design's source turns."""
    kept = []
    for seed in range(4):
        opt = Optimizer(space, objectives=["t"], seed=seed, transfer=TransferSpec([unrelated, related], mode="auto"))
        for _ in range(10):
            cfg = opt.ask()[0]
            opt.tell(cfg, {"t": target(cfg)})
        bad, good = opt._gate.state(opt.history()).sources
        assert not bad.open and bad.n_picks <= 2
        assert good.open and good.n_picks >= 3
        seen = set(space.row_keys(opt.history().X))
        kept.append(sum(k in seen for k in opt._gate.keys[1]))
        assert "unrelated: dropped" in opt.transfer_note() and "related: trusted" in opt.transfer_note()
    assert min(kept) >= 3


def test_one_load_spike_on_a_pick_does_not_drop_a_good_source_and_the_note_says_why(space, related):
    """The issue-42 case: a sibling's pick measured once at a load spike (190 ms for 0.8 ms)."""
    first_pick = picks(related, 1)[0]
    opt = Optimizer(space, objectives=["t"], seed=0, transfer=TransferSpec([related], mode="auto"))
    spiked = 0
    for _ in range(10):
        cfg = opt.ask()[0]
        value = target(cfg)
        if tuple(space.to_matrix([cfg])[0]) == first_pick:
            value, spiked = 1000.0 * value, spiked + 1
        opt.tell(cfg, {"t": value})
    state = opt._gate.state(opt.history())
    assert spiked == 1 and state.open and state.sources[0].spike_at == 2
    assert "was set aside, measured over 10x worse than every other design point" in opt.transfer_note()
    assert "related: trusted after 4 measured pick(s)" in opt.transfer_note()


def test_a_spike_is_set_aside_once_per_source():
    from bayestune.transfer.gate import is_spike

    assert is_spike(190.0, [0.8, 5.0, 12.0], minimize=True) and not is_spike(30.0, [0.8, 5.0, 12.0], minimize=True)
    assert is_spike(0.5, [10.0, 50.0], minimize=False) and not is_spike(5.0, [10.0, 50.0], minimize=False)
    assert not is_spike(190.0, [-1.0, 5.0], minimize=True) and not is_spike(np.nan, [1.0], minimize=True)
