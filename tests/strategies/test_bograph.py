"""The ``bograph`` strategy end to end on small logged black boxes."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from bayestune import Real
from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.space import Space
from bayestune.strategies import make_strategy

FAST = {"acquisition_search": {"n_samples": 300, "n_starts": 2}, "mc_samples": 16}


def forrester(x: float) -> float:
    return (6 * x - 2) ** 2 * math.sin(12 * x - 4)


def logged(c):
    a, b = forrester(c["x1"]), 0.5 * forrester(c["x2"]) + 10 * (c["x2"] - 0.5) + 5
    return {"y": a + b, "f1": a, "f2": b, "noise.c1": float(np.sin(1e3 * c["x1"] * c["x2"]))}


SPACE = Space([Real("x1", 0.0, 1.0), Real("x2", 0.0, 1.0)])


def _run(options, budget=14, blackbox=logged, seed=0, objectives=("y",)):
    opt = Optimizer(
        SPACE, objectives=list(objectives), strategy="bograph", strategy_options={**FAST, **options}, seed=seed
    )
    opt.optimize(blackbox, budget)
    return opt


def test_learned_structure_is_logged_and_reaches_the_objective():
    opt = _run({"relearn": {"every": 5}})
    updates = opt.strategy.updates
    assert [u.n_rows for u in updates] == [10]
    assert all(u.seconds >= 0 and u.effective_dimension >= 1 for u in updates)
    g = opt.strategy.graph._dag
    assert nx.is_directed_acyclic_graph(g)
    assert nx.has_path(g, "x1", "y") and nx.has_path(g, "x2", "y")
    assert len({tuple(sorted(t.config.items())) for t in opt.trials}) == len(opt.trials)


def test_same_seed_same_trajectory():
    a = [t.config for t in _run({"structure": "expert", "expert": {"known_edges": [["x1", "f1"], ["f1", "y"]]}}).trials]
    b = [t.config for t in _run({"structure": "expert", "expert": {"known_edges": [["x1", "f1"], ["f1", "y"]]}}).trials]
    assert a == b


def test_expert_formula_and_dag_give_the_objective_exactly():
    opt = _run(
        {"structure": "expert", "expert": {"known_edges": [["x1", "f1"], ["x2", "f2"]], "formulas": {"y": "f1 + f2"}}}
    )
    graph = opt.strategy.fit_graph(opt.history())
    assert set(graph.dag.predecessors("y")) == {"f1", "f2"}
    assert graph.effective_dimension == 2 and graph.fit_quality()["y"] == pytest.approx(1.0)


def test_without_metrics_the_dag_is_parameters_to_objective():
    opt = _run({}, budget=12, blackbox=lambda c: forrester(c["x1"]) + c["x2"])
    assert sorted(opt.strategy.graph._dag.edges) == [("x1", "y"), ("x2", "y")]


def test_any_logged_metric_can_be_the_target():
    opt = _run({"target": "f1", "structure": "expert", "expert": {"known_edges": [["x1", "f1"]]}})
    suggested = [t.config["x1"] for t in opt.trials[10:]]
    assert np.mean([forrester(x) for x in suggested]) < 0  # f1 is driven down


def test_failures_switch_on_the_feasibility_model():
    def sometimes(c):
        if c["x1"] > 0.8:
            raise RuntimeError("crashed")
        return logged(c)

    opt = _run({}, blackbox=sometimes, budget=13)
    assert opt.n_evaluated == 13


def test_bad_options_and_unknown_names_are_refused():
    with pytest.raises(BayestuneError, match="structure"):
        make_strategy("bograph", SPACE, [], np.random.default_rng(0), {"structure": "magic"})
    with pytest.raises(BayestuneError, match="unknown option"):
        make_strategy("bograph", SPACE, [], np.random.default_rng(0), {"dag": 1})
    with pytest.raises(BayestuneError, match=r"unknown node\(s\) \['nope'\]"):
        _run({"expert": {"known_edges": [["x1", "nope"]]}}, budget=11)
    with pytest.raises(BayestuneError, match="target 'zzz'"):
        _run({"target": "zzz"}, budget=11)


def test_a_metric_that_stops_being_logged_triggers_a_new_structure():
    def fading(c):
        out = logged(c)
        if c["x1"] + c["x2"] > 0 and fading.calls > 11:
            del out["f2"]
        fading.calls += 1
        return out

    fading.calls = 0
    opt = _run({"relearn": {"every": 100}}, blackbox=fading, budget=14)
    assert opt.n_evaluated == 14 and len(opt.strategy.updates) >= 2


def test_parameters_the_dag_leaves_out_keep_the_incumbents_values():
    space = Space([Real("x1", 0.0, 1.0), Real("x2", 0.0, 1.0), Real("idle", 0.0, 1.0)])

    def box(c):
        a = forrester(c["x1"])
        return {"y": a + c["x2"], "f1": a}

    opt = Optimizer(
        space,
        objectives=["y"],
        strategy="bograph",
        seed=0,
        strategy_options={
            **FAST,
            "structure": "expert",
            "expert": {"known_edges": [["x1", "f1"], ["f1", "y"], ["x2", "y"]], "forbidden_edges": [["idle", "y"]]},
        },
    )
    opt.optimize(box, 14)
    graph = opt.strategy.fit_graph(opt.history())
    assert not nx.has_path(graph.dag, "idle", "y")
    suggested = [i for i, t in enumerate(opt.trials) if t.origin == "suggested"]
    assert len(suggested) >= 3
    for i in suggested:
        best = min(opt.trials[:i], key=lambda t: t.values["y"])
        assert opt.trials[i].config["idle"] == best.config["idle"]


def _incumbent(trials, before):
    return min(trials[:before], key=lambda t: t.values["y"]).config


def test_trust_region_turns_are_on_by_default():
    opt = _run({}, budget=16)
    assert opt.strategy.settings.trust_region.every == 3 and opt.strategy.local_picks == 2


def test_trust_region_turns_change_one_parameter_of_the_incumbent():
    space = Space([Real(f"x{i}", 0.0, 1.0) for i in range(1, 5)])

    def box(c):
        a, b = forrester(c["x1"]), forrester(c["x2"])
        return {"y": a + b + c["x3"] + c["x4"], "f1": a, "f2": b}

    def changed(opt, i):
        best = _incumbent(opt.trials, i)
        return sum(opt.trials[i].config[k] != best[k] for k in best)

    on = Optimizer(
        space,
        objectives=["y"],
        strategy="bograph",
        seed=0,
        strategy_options={**FAST, "trust_region": {"every": 1, "fail_tolerance": 3}},
    )
    on.optimize(box, 13)
    model = [i for i, t in enumerate(on.trials) if t.origin == "suggested"]
    assert len(model) == 3 and on.strategy.local_picks == 3
    # the ball starts at one parameter and grows only after three local proposals without a new incumbent
    assert [changed(on, i) for i in model] == [1, 1, 1]
    off = Optimizer(
        space, objectives=["y"], strategy="bograph", seed=0, strategy_options={**FAST, "trust_region": {"every": 0}}
    )
    off.optimize(box, 13)
    assert off.strategy.local_picks == 0
    assert max(changed(off, i) for i, t in enumerate(off.trials) if t.origin == "suggested") >= 2


def test_automatic_min_rows_to_learn_is_plain_gp_bo_until_there_are_more_rows_than_parameters():
    names = [f"x{i}" for i in range(12)]
    space = Space([Real(n, 0.0, 1.0) for n in names])

    def box(c):
        a = forrester(c["x0"])
        return {"y": a + c["x1"], "f1": a}

    auto = Optimizer(
        space, objectives=["y"], strategy="bograph", seed=0, strategy_options={**FAST, "relearn": {"every": 100}}
    )  # the default: automatic
    assert auto.strategy.graph.min_rows_to_learn == 13
    auto.optimize(box, 14)
    ups = auto.strategy.updates
    # the fallback at 10 observations, the first learned structure as soon as 13 are in (not at 10 + 100)
    assert [u.n_rows for u in ups] == [10, 13]
    assert ups[0].learned_edges == 0 and ups[1].learned_edges > 0
    fixed = Optimizer(
        space,
        objectives=["y"],
        strategy="bograph",
        seed=0,
        strategy_options={**FAST, "relearn": {"min_rows": 6, "every": 100}},
    )
    fixed.optimize(box, 12)
    assert [u.n_rows for u in fixed.strategy.updates] == [10] and fixed.strategy.updates[0].learned_edges > 0


def test_fallback_dag_before_learning_is_every_parameter_into_the_target():
    opt = _run({"relearn": {"min_rows": 50, "every": 100}}, budget=12)
    assert sorted(opt.strategy.graph._dag.edges) == [("x1", "y"), ("x2", "y")]
    assert all(u.learned_edges == 0 for u in opt.strategy.updates)


def test_relearn_growth_updates_the_structure_geometrically():
    from bayestune.bograph.model import RelearnSettings

    s = RelearnSettings(growth=1.5, every=2)
    assert not s.due(14, 10) and s.due(15, 10)
    opt = _run({"relearn": {"growth": 1.2}}, budget=17)
    assert [u.n_rows for u in opt.strategy.updates] == [10, 12, 15]
    with pytest.raises(BayestuneError, match="relearn.growth"):
        make_strategy("bograph", SPACE, [], np.random.default_rng(0), {"relearn": {"growth": 1.0}})
    with pytest.raises(BayestuneError, match="trust_region.every"):
        make_strategy("bograph", SPACE, [], np.random.default_rng(0), {"trust_region": {"every": -1}})


def test_a_batch_on_a_trust_region_turn_starts_with_the_local_pick():
    space = Space([Real(f"x{i}", 0.0, 1.0) for i in range(1, 5)])

    def box(c):
        a = forrester(c["x1"])
        return {"y": a + c["x2"] + c["x3"] + c["x4"], "f1": a}

    opt = Optimizer(
        space, objectives=["y"], strategy="bograph", seed=1, strategy_options={**FAST, "trust_region": {"every": 1}}
    )
    opt.optimize(box, 10)
    best = _incumbent(opt.trials, 10)
    batch = opt.ask(3)
    assert opt.strategy.local_picks == 1 and len(batch) == 3
    assert sum(batch[0][k] != best[k] for k in best) == 1
    keys = {tuple(sorted(c.items())) for c in batch} | {tuple(sorted(t.config.items())) for t in opt.trials}
    assert len(keys) == 13  # three new, distinct configurations


def test_old_option_names_load_with_the_new_spelling_named():
    with pytest.warns(FutureWarning, match="'max_summary_columns' is now spelled 'summary.max_columns'"):
        old = make_strategy(
            "bograph",
            SPACE,
            [Objective("y")],
            np.random.default_rng(0),
            {
                "known_edges": [["x1", "y"]],
                "relearn_every": 4,
                "max_summary_columns": 5,
                "l1": 0.2,
                "local_every": 2,
                "n_samples": 100,
            },
        )
    new = make_strategy(
        "bograph",
        SPACE,
        [Objective("y")],
        np.random.default_rng(0),
        {
            "expert": {"known_edges": [["x1", "y"]]},
            "relearn": {"every": 4},
            "summary": {"max_columns": 5},
            "notears": {"l1": 0.2},
            "trust_region": {"every": 2},
            "acquisition_search": {"n_samples": 100},
        },
    )
    assert old.settings == new.settings


def test_the_users_prior_weights_the_dag_score():
    """bograph scores through the shared scorer, so the user's prior (piBO) weights its
    Monte-Carlo EI as it does bo's."""
    with_prior = Space([Real("x1", 0.0, 1.0, prior={"mean": 0.9, "std": 0.02}), Real("x2", 0.0, 1.0)])
    opts = {**FAST, "trust_region": {"every": 0}, "hold_unmodelled": False, "prior": {"beta": 1000.0}}
    picks = []
    for space in (SPACE, with_prior):
        opt = Optimizer(space, objectives=["y"], strategy="bograph", seed=0, strategy_options=opts)
        opt.optimize(logged, 12)
        picks.append(opt.trials[-1].config["x1"])
    assert abs(picks[1] - 0.9) < 0.1 and abs(picks[0] - 0.9) > 0.1


def with_stand_ins(c):
    """``logged`` plus what a benchmark's logs hold besides: a latency that is 100 / y's shift
    and a counter that follows y; neither may explain y."""
    out = logged(c)
    shifted = out["y"] + 30.0  # positive on [0, 1]²
    return {**out, "latency_ms": 100.0 / shifted, "db.commits": 7.0 * shifted}


def test_stand_ins_for_the_objective_never_enter_the_dag():
    opt = _run({"relearn": {"every": 5}}, budget=16, blackbox=with_stand_ins)
    update = opt.strategy.updates[-1]
    assert {"latency_ms", "db.commits"} <= set(update.stand_ins)
    assert "a function of y" in update.stand_ins["latency_ms"]
    g = opt.strategy.graph._dag
    assert not {"latency_ms", "db.commits", "db"} & set(g.nodes)
    off = _run({"relearn": {"every": 5}, "summary": {"stand_in_threshold": None}}, budget=16, blackbox=with_stand_ins)
    assert off.strategy.updates[-1].stand_ins == {}


def test_structure_learning_keeps_to_its_time_budget():
    opt = _run({"relearn": {"every": 5, "max_seconds": 1e-9}}, budget=12, blackbox=with_stand_ins)
    learned = [u for u in opt.strategy.updates if u.learned_edges or u.cut_short]
    assert learned and all(u.cut_short for u in learned)
    assert nx.is_directed_acyclic_graph(opt.strategy.graph._dag)
    with pytest.raises(BayestuneError, match="max_seconds > 0"):
        make_strategy("bograph", SPACE, [Objective("y")], np.random.default_rng(0), {"relearn": {"max_seconds": 0}})
