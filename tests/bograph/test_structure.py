"""NOTEARS-linear recovers a chain, respects forbidden edges, and the repair rules hold."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from bayestune.bograph.dag import Expert
from bayestune.bograph.parents import add_dependent_parents, loo_log_likelihood, prune_parents_by_cv, select_parents
from bayestune.bograph.structure import (
    NotearsSettings,
    allowed_mask,
    learn_structure,
    notears_linear,
    notears_weights,
    repair,
)
from bayestune.exceptions import BayestuneError

ROLES = {"p0": "parameter", "p1": "parameter", "p2": "parameter", "m": "metric", "y": "objective"}
NAMES = list(ROLES)


def _data(n: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    P = rng.uniform(size=(n, 3))
    m = P[:, 0] - P[:, 1] + 0.05 * rng.normal(size=n)
    y = m + 0.05 * rng.normal(size=n)
    return np.column_stack([P, m, y])


def test_notears_finds_the_chain_through_the_metric():
    X = _data()
    X = (X - X.mean(0)) / X.std(0)
    mask = allowed_mask(NAMES, ROLES, Expert())
    W = notears_linear(X, mask, np.array([r == "metric" for r in ROLES.values()]))
    edges = {(NAMES[i], NAMES[j]) for i, j in zip(*np.nonzero(W))}
    assert {("p0", "m"), ("p1", "m"), ("m", "y")} <= edges
    assert not any(b.startswith("p") for _, b in edges)  # parameters stay roots
    assert not any(a == "y" for a, _ in edges)  # the objective stays a sink
    assert np.all(W[~mask] == 0)


def test_forbidden_edges_are_never_learned_and_orphans_are_left_out_of_a_learned_dag():
    expert = Expert(forbidden_edges=[("p0", "m")])
    # BIC's parents only: the recall test, lenient by design, may keep an idle parameter by chance
    result = learn_structure(_data(), NAMES, ROLES, expert, "y", NotearsSettings(recall_alpha=None))
    g = result.dag
    assert not g.has_edge("p0", "m")
    assert nx.is_directed_acyclic_graph(g)
    assert nx.has_path(g, "p1", "y")
    assert not nx.has_path(g, "p2", "y")  # p2 does nothing: not modelled
    assert result.seconds >= 0 and result.n_rows == 40


def test_a_warm_start_gives_the_same_structure():
    first = learn_structure(_data(), NAMES, ROLES, Expert(), "y")
    again = learn_structure(_data(seed=1), NAMES, ROLES, Expert(), "y", previous=first)
    assert first.weights is not None and first.names == tuple(NAMES)
    assert {("p0", "m"), ("p1", "m"), ("m", "y")} <= set(again.dag.edges)


def test_dropped_orphans_come_back_when_no_parameter_reaches_the_target():
    g = repair(ROLES, [("m", "y")], Expert(), "y", orphans="drop")
    assert all(g.has_edge(p, "y") for p in ("p0", "p1", "p2"))
    g = repair(ROLES, [("p0", "m"), ("m", "y")], Expert(), "y", orphans="drop")
    assert not g.has_edge("p1", "y") and nx.has_path(g, "p0", "y")


def test_repair_reverses_edges_into_parameters_and_prunes_dangling_metrics():
    roles = {**ROLES, "d": "metric"}
    g = repair(roles, [("m", "p0"), ("y", "m"), ("p1", "d"), ("p2", "p1")], Expert(), "y")
    assert g.has_edge("p0", "m") and g.has_edge("m", "y")  # both reversed
    assert "d" not in g  # a dangling sink, pruned
    assert not g.has_edge("p2", "p1")
    assert g.has_edge("p1", "y") and g.has_edge("p2", "y")  # no path otherwise


def test_known_edges_win_and_formula_objectives_take_orphans_on_their_inputs():
    roles = {"a": "parameter", "b": "parameter", "power": "metric", "latency": "metric", "edp": "objective"}
    expert = Expert.from_options(known_edges=[["a", "power"]], formulas={"edp": "power * latency**2"})
    g = repair(roles, [("power", "a")], expert, "edp")
    assert set(g.predecessors("edp")) == {"power", "latency"}
    assert g.has_edge("b", "power") and g.has_edge("b", "latency")


def test_known_edges_that_cycle_are_refused():
    roles = {"a": "parameter", "m1": "metric", "m2": "metric", "y": "objective"}
    with pytest.raises(BayestuneError, match="cycle"):
        repair(roles, [], Expert.from_options(known_edges=[["m1", "m2"], ["m2", "m1"]]), "y")


def test_bic_keeps_a_modest_real_parent_and_drops_noise():
    rng = np.random.default_rng(3)
    n = 20
    X = rng.normal(size=(n, 4))  # a, b, noise, y
    X[:, 3] = 2.0 * X[:, 0] + 0.6 * X[:, 1] + 0.3 * rng.normal(size=n)
    W = np.zeros((4, 4))
    W[:3, 3] = [0.9, 0.2, 0.05]  # NOTEARS' shrunk candidates
    kept = select_parents(X, W)
    assert kept[0, 3] != 0 and kept[1, 3] != 0  # 0.2 < the old fixed threshold 0.3, kept by BIC
    assert kept[2, 3] == 0


def test_the_dependence_test_adds_a_non_linear_parent_bic_cannot_see():
    rng = np.random.default_rng(3)
    n = 30
    P = np.column_stack([rng.integers(0, 5, n), rng.uniform(size=n), rng.uniform(size=n)]).astype(float)
    m = np.abs(P[:, 0] - 2.0) + 2.0 * P[:, 1] + 0.1 * rng.normal(size=n)  # p0 acts as a V: no linear trend
    X = np.column_stack([P, m, m + 0.05 * rng.normal(size=n)])
    X = (X - X.mean(0)) / X.std(0)
    mask = allowed_mask(NAMES, ROLES, Expert())
    roots = np.array([r == "parameter" for r in ROLES.values()])
    sinks = np.array([r == "objective" for r in ROLES.values()])
    W = np.zeros((5, 5))
    W[1, 3] = W[3, 4] = 1.0  # what BIC kept: p1 -> m -> y
    added = add_dependent_parents(X, W, mask, roots, sinks, alpha=0.01)
    assert added[0, 3] != 0  # the V-shaped parent joins m
    assert added[2, 3] == 0 and added[2, 4] == 0  # the idle parameter does not
    assert np.all(added[W != 0] == W[W != 0]) and np.all(added[~mask] == 0)


def test_loo_likelihood_prefers_the_real_inputs_to_added_noise_inputs():
    rng = np.random.default_rng(0)
    n = 25
    Z = rng.normal(size=(n, 6))
    y = np.sin(Z[:, 0]) + 0.5 * Z[:, 1] + 0.05 * rng.normal(size=n)
    real = loo_log_likelihood(Z[:, :2], y)
    assert real > loo_log_likelihood(Z[:, :1], y)  # a real input is worth its place
    assert real > loo_log_likelihood(Z, y)  # four noise inputs cost held-out likelihood
    assert real > loo_log_likelihood(Z[:, :0], y)  # and any model beats the marginal one


def test_cv_pruning_drops_spurious_parents_and_keeps_real_ones():
    rng = np.random.default_rng(1)
    n = 20
    X = rng.normal(size=(n, 8))  # p0..p6 candidates, column 7 the node
    X[:, 7] = np.exp(0.8 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    X = (X - X.mean(0)) / X.std(0)
    W = np.zeros((8, 8))
    W[:7, 7] = 0.5  # a lenient test gave the node seven parents
    kept = np.flatnonzero(prune_parents_by_cv(X, W)[:, 7])
    assert {0, 1} <= set(kept) and len(kept) <= 4
    assert np.all(prune_parents_by_cv(X, np.zeros((8, 8))) == 0)
    only_other = np.zeros(8, dtype=bool)
    only_other[3] = True  # pruning restricted to another node leaves this one
    assert np.all(prune_parents_by_cv(X, W, columns=only_other) == W)


def test_strict_objectives_stop_chance_parameters_joining_an_objective_its_metric_explains():
    rng = np.random.default_rng(3)
    n, k = 30, 20
    P = rng.uniform(size=(n, k))  # 20 parameters, only p0 matters (through m)
    m = np.sin(3 * P[:, 0]) + 0.05 * rng.normal(size=n)
    y = m + 0.3 * P[:, 1] + 0.05 * rng.normal(size=n)  # and p1 acts on the objective directly
    X = np.column_stack([P, m, y])
    X = (X - X.mean(0)) / X.std(0)
    d = k + 2
    mask = np.zeros((d, d), dtype=bool)
    mask[: k + 1, k + 1] = True  # candidates of y: every parameter and m
    mask[:k, k] = True  # of m: every parameter
    roots = np.arange(d) < k
    sinks = np.arange(d) == k + 1
    W = np.zeros((d, d))
    W[k, k + 1] = 1.0  # BIC's parent of y: m
    lenient = add_dependent_parents(X, W, mask, roots, sinks, alpha=0.25)
    strict = add_dependent_parents(X, W, mask, roots, sinks, alpha=0.25, strict_sinks=True)
    spurious = [i for i in range(2, k)]
    assert np.count_nonzero(lenient[spurious, k + 1]) >= 2  # chance parents join the objective
    assert np.count_nonzero(strict[spurious, k + 1]) == 0
    assert strict[1, k + 1] != 0 and strict[k, k + 1] != 0  # the direct effect and the metric stay
    assert np.array_equal(strict[:, k], lenient[:, k])  # metrics' parents are unchanged


def test_a_spent_time_budget_cuts_learning_short_and_still_gives_a_valid_dag():
    import time

    X = _data()
    full = learn_structure(X, NAMES, ROLES, Expert(), "y", deadline=time.perf_counter() + 600)
    assert not full.cut_short and nx.has_path(full.dag, "p0", "y")
    start = time.perf_counter()
    cut = learn_structure(X, NAMES, ROLES, Expert(), "y", deadline=start - 1.0)
    assert cut.cut_short and time.perf_counter() - start < 5.0
    assert nx.is_directed_acyclic_graph(cut.dag) and "y" in cut.dag
    assert all(cut.dag.nodes[b]["role"] != "parameter" for _, b in cut.dag.edges)
    assert not learn_structure(X, NAMES, ROLES, Expert(), "y").cut_short  # no deadline: never cut


def test_notears_stops_at_its_deadline_with_the_weights_it_has():
    import time

    X = _data()
    X = (X - X.mean(0)) / X.std(0)
    mask = allowed_mask(NAMES, ROLES, Expert())
    cyclic = np.array([r == "metric" for r in ROLES.values()])
    late = notears_weights(X, mask, cyclic, deadline=time.perf_counter() - 1.0)
    assert late.shape == (5, 5) and np.all(late[~mask] == 0)
    assert not np.allclose(late, notears_weights(X, mask, cyclic))  # one L-BFGS-B step, not the solution
