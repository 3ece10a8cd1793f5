"""HyperMapper 2.0 / BaCO scenarios read unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayestune.exceptions import ScenarioError
from bayestune.scenario import load_scenario, scenario_from_dict
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real
from scenario_helpers import DATA, error_of


def test_hypermapper_fixture():
    s = load_scenario(DATA / "hypermapper_branin4.json")
    assert s.name == "branin4_feas" and s.blackbox is None
    assert [o.name for o in s.objectives] == ["Value"] and s.objectives[0].minimize
    assert s.budget == 8 + 15 * 2  # number_of_samples + optimization_iterations x evaluations per iteration
    assert s.design.method == "lhs" and s.design.size == 8 and s.design.include_default
    assert s.strategy == "bo" and s.strategy_options == {"model": "rf"}
    assert s.feasible_output == "Valid"
    x1, x2, x3, x4, mode = s.space.parameters
    assert isinstance(x1, Real) and x1.prior.shape == "gaussian" and x1.default == 0
    assert isinstance(x2, Real) and x2.log and x2.prior.shape == "decay" and x2.low == 0.00001
    assert isinstance(x3, Integer) and (x3.low, x3.high, x3.default) == (-5, 10, 0)
    assert isinstance(x4, Ordinal) and x4.values == [1, 2, 4, 8, 16] and x4.default == 4
    assert isinstance(mode, Categorical) and mode.prior.to_spec() == [0.5, 0.4, 0.1] and mode.default == "safe"
    # The unsorted ordinal's probabilities follow their values when sorted.
    sorted_version = load_hm({"x": {"parameter_type": "ordinal", "values": [1, 2, 4, 8, 16],
                                    "prior": [0.1, 0.3, 0.2, 0.3, 0.1]}})
    assert x4.prior.to_spec() == sorted_version.space["x"].prior.to_spec()


def load_hm(params, **top):
    return scenario_from_dict({"application_name": "app", "optimization_objectives": ["v"],
                               "input_parameters": params, **top}, source="hm.json")


def test_baco_fixture_with_permutation_and_constraints():
    s = load_scenario(DATA / "baco_taco_sddmm.json")
    assert s.name == "cpp_taco_SDDMM" and s.objective_names == ["compute_time"]
    assert s.budget == 11 + 50 and s.design.size == 11 and s.design.method == "cot" and s.design.include_default
    assert s.strategy == "bo" and s.strategy_options == {} and s.feasible_output == "Valid"
    p = s.space["p"]
    assert isinstance(p, Permutation) and p.n == 5 and p.metric == "spearman" and p.default == (0, 1, 2, 3, 4)
    assert s.space["cs"].log and not s.space["ost"].log
    texts = [c.expression for c in s.space.constraints]
    assert texts[:2] == ["cs % 2 == 0", "(ocs % 2 == 0) | (ocs == 1)"]
    assert "at(p, 2) < at(p, 4)" in texts[2] and "p_i" not in texts[2]
    assert texts[3:] == ["uf < cs", "uf % 2 == 0"]
    assert s.space.is_feasible(s.space.to_matrix([s.space.default_config()]))[0]
    # (cs, uf) pairs with uf < cs: 45; every ocs value is even or 1: 9; ont: 7; ost: 2; orders
    # with 0 and 1 before 2 before 4, or before 4 before 2: 4 of the 24 relative orders of
    # {0, 1, 2, 4}, i.e. 20 of 120.
    assert s.space.count_feasible() == 45 * 9 * 7 * 2 * 20


def _baco_semantics(expression: str, perm: tuple[int, ...]) -> bool:
    """Evaluate a BaCO permutation constraint as BaCO does: ``p_k`` = perm[k] and
    ``p_ik`` = perm.index(k), with numexpr's logical &, |."""
    env = {f"p_{k}": perm[k] for k in range(len(perm))}
    env.update({f"p_i{k}": perm.index(k) for k in range(len(perm))})
    return bool(eval(expression, {"__builtins__": {}}, env))  # noqa: S307 (test oracle on fixed text)


@pytest.mark.parametrize("expression", [
    "((p_i2 < p_i4) & (p_i0 < p_i2) & (p_i1 < p_i2)) | ((p_i4 < p_i2) & (p_i0 < p_i4) & (p_i1 < p_i4))",
    "(p_0 < p_3) & ~(p_i1 == 2)",
    "p_2 + p_i2 >= 4",
])
def test_baco_permutation_names_mean_what_baco_means(expression):
    s = load_hm({"p": {"parameter_type": "permutation", "values": [5], "parametrization": "kendall",
                       "constraints": [expression]}})
    perms = list(itertools.permutations(range(5)))
    X = s.space.to_matrix([{"p": perm} for perm in perms])
    ours = s.space.satisfies_constraints(X)
    truth = np.array([_baco_semantics(expression, perm) for perm in perms])
    assert truth.any() and not truth.all()
    np.testing.assert_array_equal(ours, truth)


def test_hypermapper_conversions():
    s = load_hm({
        "x": {"parameter_type": "real", "values": [1, 100], "transform": "log", "prior": "gaussian",
              "prior_parameters": [10, 5]},
        "k": {"parameter_type": "integer", "values": [0, 3], "prior": [0.1, 0.2, 0.3, 0.4]},
        "c": {"parameter_type": "integer", "values": [4, 4], "parameter_default": 4},
        "r": {"parameter_type": "real", "values": [0, 1], "prior": [1, 2, 3]},
        "u": {"parameter_type": "ordinal", "values": [1, 2, 3], "prior": [1, 1, 1]},
        "q": {"parameter_type": "permutation", "values": [4], "parametrization": "naive",
              "parameter_default": [3, 2, 1, 0]},
    }, constraints=["q_0 < q_1", "(k > 0) & ~(c == 5)"], design_of_experiment={"number_of_samples": 3},
       optimization_iterations=4, feasible_output={"enable_feasible_predictor": False, "name": "ok"},
       optimization_method="evolutionary_optimization")
    x, k, c, r, u, q = s.space.parameters
    # gaussian(mean 10, std 5) on log[1, 100]: centred (log 10 is mid-range) and narrow.
    assert x.prior.alpha == pytest.approx(x.prior.beta) and x.prior.alpha > 5
    assert k.prior.alpha > k.prior.beta  # mass rises towards the high end
    assert r.prior.alpha > r.prior.beta
    assert u.prior is None  # equal probabilities are the uniform prior
    assert isinstance(c, Ordinal) and c.values == [4] and c.default == 4
    assert q.metric == "hamming" and q.default == (3, 2, 1, 0)
    assert [cn.expression for cn in s.space.constraints] == ["q[0] < q[1]", "(k > 0) & ~(c == 5)"]
    assert s.budget == 7 and s.design.method == "prior" and not s.design.include_default
    assert s.feasible_output is None and s.strategy == "genetic"


def test_hypermapper_defaults_and_ignored_keys(caplog):
    with caplog.at_level("DEBUG", logger="bayestune.scenario"):
        s = load_hm({"x": {"parameter_type": "real", "values": [0, 1], "parameter_default": 0.5}},
                    log_file="x.log", GP_model="botorch", time_budget=-1, acquisition_function="EI")
    assert s.budget == 10 + 50 and s.design.method == "cot" and s.design.include_default
    assert s.strategy == "bo" and s.name == "app"
    assert "GP_model" in caplog.text and "log_file" in caplog.text


def test_hypermapper_strategy_options_are_accepted_by_the_strategy():
    from bayestune.strategies import make_strategy

    s = load_hm({"x": {"parameter_type": "real", "values": [0, 1]}}, models={"model": "random_forest"},
                acquisition_function="UCB")
    assert s.strategy_options == {"model": "rf", "acquisition": "lcb"}
    make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)
    for method in ("local_search", "evolutionary_optimization", "exhaustive", "bayesian_optimization"):
        t = load_hm({"x": {"parameter_type": "real", "values": [0, 1]}}, optimization_method=method)
        make_strategy(t.strategy, t.space, t.objectives, np.random.default_rng(0), t.strategy_options)


def test_baco_duplicated_constraints_are_kept_once():
    s = load_hm({"a": {"parameter_type": "integer", "values": [0, 9], "constraints": ["a + b < 10"],
                       "dependencies": ["b"]},
                 "b": {"parameter_type": "integer", "values": [0, 9], "constraints": ["a + b < 10"]}})
    assert [c.expression for c in s.space.constraints] == ["a + b < 10"]


def test_hypermapper_unknown_type_file():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_unknown_type.json")
    assert str(info.value) == (f"{DATA / 'broken_unknown_type.json'}: $.input_parameters.x2.parameter_type: "
                               "unknown parameter_type \"float\"; allowed: "
                               "['real', 'integer', 'ordinal', 'categorical', 'permutation']")


@pytest.mark.parametrize("params, top, path, fragment", [
    ({"x": {"values": [0, 1]}}, {}, "$.input_parameters.x", "missing required key 'parameter_type'"),
    ({"x": {"parameter_type": "real"}}, {}, "$.input_parameters.x", "missing required key 'values'"),
    ({"x": {"parameter_type": "real", "values": [5, 2]}}, {}, "$.input_parameters.x.values", "`min < max` must hold, but got [5, 2]"),
    ({"x": {"parameter_type": "real", "values": [0, 1, 2]}}, {}, "$.input_parameters.x.values", "[min, max]"),
    ({"x": {"parameter_type": "integer", "values": [0, 2.5]}}, {}, "$.input_parameters.x.values", "two integers"),
    ({"x": {"parameter_type": "ordinal", "values": [1, 2, 2]}}, {}, "$.input_parameters.x.values", "distinct"),
    ({"x": {"parameter_type": "ordinal", "values": [1, "a"]}}, {}, "$.input_parameters.x.values", "must be numbers"),
    ({"x": {"parameter_type": "categorical", "values": []}}, {}, "$.input_parameters.x.values", "non-empty list"),
    ({"x": {"parameter_type": "permutation", "values": [3, 4]}}, {}, "$.input_parameters.x.values", "[n]"),
    ({"x": {"parameter_type": "permutation", "values": [3], "parametrization": "lehmer"}}, {},
     "$.input_parameters.x.parametrization", 'but got "lehmer"'),
    ({"x": {"parameter_type": "real", "values": [1, 2], "transform": "sqrt"}}, {}, "$.input_parameters.x.transform", "sqrt"),
    ({"x": {"parameter_type": "categorical", "values": ["a"], "transform": "log"}}, {}, "$.input_parameters.x.transform", "not categorical"),
    ({"x": {"parameter_type": "real", "values": [1, 2], "prior": "estimate"}}, {}, "$.input_parameters.x.prior", "not supported"),
    ({"x": {"parameter_type": "real", "values": [1, 2], "prior": "bell"}}, {}, "$.input_parameters.x.prior", 'but got "bell"'),
    ({"x": {"parameter_type": "real", "values": [1, 2], "prior": "gaussian", "prior_parameters": [1]}}, {},
     "$.input_parameters.x.prior_parameters", "[mean, std]"),
    ({"x": {"parameter_type": "ordinal", "values": [1, 2, 4], "prior": [0.5, 0.5]}}, {}, "$.input_parameters.x.prior", "one probability per value (3)"),
    ({"x": {"parameter_type": "categorical", "values": ["a", "b"], "prior": "decay"}}, {}, "$.input_parameters.x.prior", "list of probabilities"),
    ({"x": {"parameter_type": "permutation", "values": [3], "prior": [1, 2]}}, {}, "$.input_parameters.x.prior", "take no prior"),
    ({"x": {"parameter_type": "ordinal", "values": [1, 2, 4], "parameter_default": 3}}, {}, "$.input_parameters.x.parameter_default", "but got 3"),
    ({"my-x": {"parameter_type": "integer", "values": [1, 9]}}, {}, '$.input_parameters["my-x"]', "Python identifier"),
    ({"x": {"parameter_type": "integer", "values": [1, 9], "constraints": ["x % 2 == 0", "x < y"]}}, {},
     "$.input_parameters.x.constraints[1]", "unknown name 'y'"),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"design_of_experiment": {"doe_type": "sobol"}},
     "$.design_of_experiment.doe_type", 'but got "sobol"'),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"optimization_iterations": -1}, "$.optimization_iterations", "but got -1"),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"optimization_method": "magic"}, "$.optimization_method", 'but got "magic"'),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"models": {"model": "svm"}}, "$.models.model", 'but got "svm"'),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"optimization_objectives": []}, "$.optimization_objectives", "non-empty list"),
    ({"x": {"parameter_type": "real", "values": [0, 1]}}, {"optimization_objectives": ["x"]}, "$.optimization_objectives[0]", "name of a parameter"),
    ({}, {}, "$.input_parameters", "expected an object mapping parameter names"),
])
def test_hypermapper_errors(params, top, path, fragment):
    data = {"application_name": "app", "optimization_objectives": ["v"], "input_parameters": params, **top}
    msg = str(error_of(data, source="hm.json"))
    assert msg.startswith(f"hm.json: {path}: "), msg
    assert fragment in msg, msg


def test_hypermapper_missing_objectives():
    msg = str(error_of({"application_name": "a", "input_parameters": {"x": {"parameter_type": "real", "values": [0, 1]}}}))
    assert msg == "x.json: $: missing required key 'optimization_objectives'"
