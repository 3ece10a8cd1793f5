"""HyperMapper 2.0 / BaCO scenarios read unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scenario_helpers import DATA, error_of

from bayestune.exceptions import ScenarioError
from bayestune.scenario import load_scenario, scenario_from_dict
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real


def test_hypermapper_fixture():
    s = load_scenario(DATA / "hypermapper_branin4.json")
    assert s.name == "branin4_feas" and s.blackbox is None
    assert [o.name for o in s.objectives] == ["Value"] and s.objectives[0].minimize
    assert s.budget == 8 + 15 * 2  # number_of_samples + optimization_iterations x evaluations per iteration
    assert s.batch == 2  # and the iterations ask for 2 configurations at a time
    assert s.design.method == "lhs" and s.design.size == 8 and s.design.include_default
    # a hypermapper_mode key and a latin hypercube: HyperMapper 2.0's file, with its forest, epsilon and piBO
    assert s.strategy == "bo" and s.strategy_options == {
        "model": "rf",
        "rf": {"trees": 200, "bootstrap": False, "min_samples_split": 5},
        "feasibility": {"threshold": 0.2},
        "acquisition_search": {"epsilon": 0.1},
        "log_transform": False,
        "prior": {"beta": 1.5, "count": "model_steps", "design": 8, "batch": 2},
    }  # a batch shares its n
    assert s.feasible_output == "Valid"
    x1, x2, x3, x4, mode = s.space.parameters
    assert isinstance(x1, Real) and x1.prior.shape == "gaussian" and x1.default == 0
    assert isinstance(x2, Real) and x2.log and x2.prior.shape == "decay" and x2.low == 0.00001
    assert isinstance(x3, Integer) and (x3.low, x3.high, x3.default) == (-5, 10, 0)
    assert isinstance(x4, Ordinal) and x4.values == [1, 2, 4, 8, 16] and x4.default == 4
    assert isinstance(mode, Categorical) and mode.prior.to_spec() == [0.5, 0.4, 0.1] and mode.default == "safe"
    # As in BaCO, the unsorted ordinal's values are sorted and its prior list kept as written:
    # the i-th probability belongs to the i-th smallest value.
    assert x4.prior.to_spec() == {"probabilities": [0.1, 0.1, 0.2, 0.3, 0.3]}
    # BaCO's transform: log log-scales the model input only; values are drawn uniformly.
    assert x2.sampling == "uniform"


def load_hm(params, **top):
    return scenario_from_dict(
        {"application_name": "app", "optimization_objectives": ["v"], "input_parameters": params, **top},
        source="hm.json",
    )


def test_baco_fixture_with_permutation_and_constraints():
    s = load_scenario(DATA / "baco_taco_sddmm.json")
    assert s.name == "cpp_taco_SDDMM" and s.objective_names == ["compute_time"]
    assert s.budget == 11 + 50 and s.design.size == 11 and s.design.method == "cot" and s.design.include_default
    assert s.strategy == "bo" and s.strategy_options == {"log_transform": True} and s.feasible_output == "Valid"
    assert s.key_handling[0].detail.startswith("BaCO (BaCO-only ")
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


@pytest.mark.parametrize(
    "expression",
    [
        "((p_i2 < p_i4) & (p_i0 < p_i2) & (p_i1 < p_i2)) | ((p_i4 < p_i2) & (p_i0 < p_i4) & (p_i1 < p_i4))",
        "(p_0 < p_3) & ~(p_i1 == 2)",
        "p_2 + p_i2 >= 4",
    ],
)
def test_baco_permutation_names_mean_what_baco_means(expression):
    s = load_hm(
        {
            "p": {
                "parameter_type": "permutation",
                "values": [5],
                "parametrization": "kendall",
                "constraints": [expression],
            }
        }
    )
    perms = list(itertools.permutations(range(5)))
    X = s.space.to_matrix([{"p": perm} for perm in perms])
    ours = s.space.satisfies_constraints(X)
    truth = np.array([_baco_semantics(expression, perm) for perm in perms])
    assert truth.any() and not truth.all()
    np.testing.assert_array_equal(ours, truth)


def test_hypermapper_conversions():
    s = load_hm(
        {
            "x": {
                "parameter_type": "real",
                "values": [1, 100],
                "transform": "log",
                "prior": "gaussian",
                "prior_parameters": [10, 5],
            },
            "k": {"parameter_type": "integer", "values": [0, 3], "prior": [0.1, 0.2, 0.3, 0.4]},
            "c": {"parameter_type": "integer", "values": [4, 4], "parameter_default": 4},
            "r": {"parameter_type": "real", "values": [0, 1], "prior": [1, 2, 3]},
            "u": {"parameter_type": "ordinal", "values": [1, 2, 3], "prior": [1, 1, 1]},
            "q": {
                "parameter_type": "permutation",
                "values": [4],
                "parametrization": "naive",
                "parameter_default": [3, 2, 1, 0],
            },
        },
        constraints=["q_0 < q_1", "(k > 0) & ~(c == 5)"],
        design_of_experiment={"number_of_samples": 3},
        optimization_iterations=4,
        feasible_output={"enable_feasible_predictor": False, "name": "ok"},
        optimization_method="evolutionary_optimization",
    )
    x, k, c, r, u, q = s.space.parameters
    # BaCO's gaussian(mean 10, std 5) is a normal truncated to [1, 100] on the value scale.
    assert x.prior.to_spec() == {"mean": pytest.approx(9 / 99), "std": pytest.approx(5 / 99)}
    assert x.log and x.sampling == "uniform"
    assert k.prior.to_spec() == {"probabilities": [0.1, 0.2, 0.3, 0.4]}
    assert r.prior.to_spec() == {"density": [1.0, 2.0, 3.0]}
    assert u.prior is None  # equal probabilities are the uniform prior
    assert isinstance(c, Ordinal) and c.values == [4] and c.default == 4
    assert q.metric == "hamming" and q.default == (3, 2, 1, 0)
    assert [cn.expression for cn in s.space.constraints] == ["q[0] < q[1]", "(k > 0) & ~(c == 5)"]
    # BaCO draws its design uniformly and applies the priors through the acquisition (piBO).
    assert s.budget == 7 and s.design.method == "cot" and not s.design.include_default
    assert s.feasible_output is None and s.strategy == "genetic"


def test_hypermapper_defaults_and_ignored_keys(caplog):
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        s = load_hm(
            {"x": {"parameter_type": "real", "values": [0, 1], "parameter_default": 0.5}},
            log_file="x.log",
            GP_model="botorch",
            time_budget=-1,
            acquisition_function="EI",
        )
    assert s.budget == 10 + 50 and s.design.method == "cot" and s.design.include_default
    assert s.strategy == "bo" and s.name == "app"
    assert caplog.text == ""  # the peer's defaults need no warning
    handled = {h.key: h.handling for h in s.key_handling}
    assert handled["log_file"] == "mapped" and handled["GP_model"] == "ignored"
    assert handled["time_budget"] == "mapped" and s.time_limit is None and handled["application_name"] == "mapped"


def test_hypermapper_strategy_options_are_accepted_by_the_strategy():
    from bayestune.strategies import make_strategy

    s = load_hm(
        {"x": {"parameter_type": "real", "values": [0, 1]}},
        models={"model": "random_forest"},
        acquisition_function="UCB",
        baco_mode={"mode": "default"},
    )
    assert s.strategy_options == {
        "model": "rf",
        "rf": {"trees": 200},
        "acquisition": "lcb",
        "log_transform": False,
    }  # BaCO's forest
    make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)
    for method in ("local_search", "evolutionary_optimization", "exhaustive", "bayesian_optimization"):
        t = load_hm({"x": {"parameter_type": "integer", "values": [0, 9]}}, optimization_method=method)
        make_strategy(t.strategy, t.space, t.objectives, np.random.default_rng(0), t.strategy_options)


def test_baco_duplicated_constraints_are_kept_once():
    s = load_hm(
        {
            "a": {"parameter_type": "integer", "values": [0, 9], "constraints": ["a + b < 10"], "dependencies": ["b"]},
            "b": {"parameter_type": "integer", "values": [0, 9], "constraints": ["a + b < 10"]},
        }
    )
    assert [c.expression for c in s.space.constraints] == ["a + b < 10"]


def test_hypermapper_unknown_type_file():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_unknown_type.json")
    assert str(info.value) == (
        f"{DATA / 'broken_unknown_type.json'}: $.input_parameters.x2.parameter_type: "
        'unknown parameter_type "float"; allowed: '
        "['real', 'integer', 'ordinal', 'categorical', 'permutation']"
    )


@pytest.mark.parametrize(
    "params, top, path, fragment",
    [
        ({"x": {"values": [0, 1]}}, {}, "$.input_parameters.x", "missing required key 'parameter_type'"),
        ({"x": {"parameter_type": "real"}}, {}, "$.input_parameters.x", "missing required key 'values'"),
        (
            {"x": {"parameter_type": "real", "values": [5, 2]}},
            {},
            "$.input_parameters.x.values",
            "`min < max` must hold, but got [5, 2]",
        ),
        ({"x": {"parameter_type": "real", "values": [0, 1, 2]}}, {}, "$.input_parameters.x.values", "[min, max]"),
        ({"x": {"parameter_type": "integer", "values": [0, 2.5]}}, {}, "$.input_parameters.x.values", "two integers"),
        ({"x": {"parameter_type": "ordinal", "values": [1, 2, 2]}}, {}, "$.input_parameters.x.values", "distinct"),
        (
            {"x": {"parameter_type": "ordinal", "values": [1, "a"]}},
            {},
            "$.input_parameters.x.values",
            "must be numbers",
        ),
        ({"x": {"parameter_type": "categorical", "values": []}}, {}, "$.input_parameters.x.values", "non-empty list"),
        ({"x": {"parameter_type": "permutation", "values": [3, 4]}}, {}, "$.input_parameters.x.values", "[n]"),
        (
            {"x": {"parameter_type": "permutation", "values": [3], "parametrization": "lehmer"}},
            {},
            "$.input_parameters.x.parametrization",
            'but got "lehmer"',
        ),
        (
            {"x": {"parameter_type": "real", "values": [1, 2], "transform": "sqrt"}},
            {},
            "$.input_parameters.x.transform",
            "sqrt",
        ),
        (
            {"x": {"parameter_type": "categorical", "values": ["a"], "transform": "log"}},
            {},
            "$.input_parameters.x.transform",
            "not categorical",
        ),
        (
            {"x": {"parameter_type": "real", "values": [1, 2], "prior": "estimate"}},
            {},
            "$.input_parameters.x.prior",
            "not supported",
        ),
        (
            {"x": {"parameter_type": "real", "values": [1, 2], "prior": "bell"}},
            {},
            "$.input_parameters.x.prior",
            'but got "bell"',
        ),
        (
            {"x": {"parameter_type": "real", "values": [1, 2], "prior": "gaussian", "prior_parameters": [1]}},
            {},
            "$.input_parameters.x.prior_parameters",
            "[mean, std]",
        ),
        (
            {"x": {"parameter_type": "ordinal", "values": [1, 2, 4], "prior": [0.5, 0.5]}},
            {},
            "$.input_parameters.x.prior",
            "one probability per value (3)",
        ),
        (
            {"x": {"parameter_type": "categorical", "values": ["a", "b"], "prior": "decay"}},
            {},
            "$.input_parameters.x.prior",
            "list of probabilities",
        ),
        (
            {"x": {"parameter_type": "permutation", "values": [3], "prior": [1, 2]}},
            {},
            "$.input_parameters.x.prior",
            "take no prior",
        ),
        (
            {"x": {"parameter_type": "ordinal", "values": [1, 2, 4], "parameter_default": 3}},
            {},
            "$.input_parameters.x.parameter_default",
            "but got 3",
        ),
        (
            {"my-x": {"parameter_type": "integer", "values": [1, 9]}},
            {},
            '$.input_parameters["my-x"]',
            "Python identifier",
        ),
        (
            {"x": {"parameter_type": "integer", "values": [1, 9], "constraints": ["x % 2 == 0", "x < y"]}},
            {},
            "$.input_parameters.x.constraints[1]",
            "unknown name 'y'",
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"design_of_experiment": {"doe_type": "sobol"}},
            "$.design_of_experiment.doe_type",
            'but got "sobol"',
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"optimization_iterations": -1},
            "$.optimization_iterations",
            "but got -1",
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"optimization_method": "magic"},
            "$.optimization_method",
            'but got "magic"',
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"models": {"model": "svm"}},
            "$.models.model",
            'but got "svm"',
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"optimization_objectives": []},
            "$.optimization_objectives",
            "non-empty list",
        ),
        (
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            {"optimization_objectives": ["x"]},
            "$.optimization_objectives[0]",
            "name of a parameter",
        ),
        ({}, {}, "$.input_parameters", "expected an object mapping parameter names"),
    ],
)
def test_hypermapper_errors(params, top, path, fragment):
    data = {"application_name": "app", "optimization_objectives": ["v"], "input_parameters": params, **top}
    msg = str(error_of(data, source="hm.json"))
    assert msg.startswith(f"hm.json: {path}: "), msg
    assert fragment in msg, msg


def test_hypermapper_missing_objectives():
    msg = str(
        error_of({"application_name": "a", "input_parameters": {"x": {"parameter_type": "real", "values": [0, 1]}}})
    )
    assert msg == "x.json: $: missing required key 'optimization_objectives'"


# ---- fidelity: every key of the peers' schemas has a handling


def test_misspelled_top_level_keys_are_errors_with_a_suggestion():
    x = {"x": {"parameter_type": "integer", "values": [0, 9]}}
    # `contraints` once silently dropped a constraint; `optimization_iteration` changed the budget.
    msg = str(
        error_of(
            {"application_name": "a", "optimization_objectives": ["v"], "input_parameters": x, "contraints": ["x < 5"]},
            source="hm.json",
        )
    )
    assert msg.startswith("hm.json: $.contraints: unknown key 'contraints' (did you mean 'constraints'?)"), msg
    msg = str(
        error_of(
            {
                "application_name": "a",
                "optimization_objectives": ["v"],
                "input_parameters": x,
                "optimization_iteration": 8,
            },
            source="hm.json",
        )
    )
    assert "(did you mean 'optimization_iterations'?)" in msg and msg.startswith("hm.json: $.optimization_iteration:")


@pytest.mark.parametrize(
    "params, top, path, suggestion",
    [
        (
            {"x": {"parameter_type": "integer", "values": [0, 9], "parameter_defualt": 3}},
            {},
            "$.input_parameters.x.parameter_defualt",
            "parameter_default",
        ),
        (
            {"x": {"parameter_type": "integer", "values": [0, 9]}},
            {"design_of_experiment": {"number_of_sample": 3}},
            "$.design_of_experiment.number_of_sample",
            "number_of_samples",
        ),
        (
            {"x": {"parameter_type": "integer", "values": [0, 9]}},
            {"feasible_output": {"nam": "ok"}},
            "$.feasible_output.nam",
            "name",
        ),
        (
            {"x": {"parameter_type": "integer", "values": [0, 9]}},
            {"baco_mode": {"mode": "default", "exhaustive_file": "t.csv"}},
            "$.baco_mode.exhaustive_file",
            "exhaustive_search_file",
        ),
    ],
)
def test_misspelled_nested_keys_are_errors(params, top, path, suggestion):
    data = {"application_name": "app", "optimization_objectives": ["v"], "input_parameters": params, **top}
    msg = str(error_of(data, source="hm.json"))
    assert msg.startswith(f"hm.json: {path}: unknown key") and f"(did you mean {suggestion!r}?)" in msg, msg


def test_unknown_model_keys_are_warnings_as_both_schemas_tolerate_them(caplog):
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        s = load_hm(
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            models={"model": "random_forest", "number_of_tree": 20},
            bayestune_read_as="baco",
        )
    assert "unknown key 'number_of_tree' (did you mean 'number_of_trees'?)" in caplog.text
    assert s.strategy_options == {"model": "rf", "rf": {"trees": 200}, "log_transform": False}


@pytest.mark.parametrize(
    "top, fragment",
    [
        ({"time_budget": 0}, "-1 for no limit"),
        ({"baco_mode": {"mode": "exhaustive"}}, "needs the CSV table of every configuration's outputs"),
        ({"feasible_output": {"true_value": "ok", "false_value": "ok"}}, "must differ from true_value"),
        ({"estimate_multivariate_priors": True}, "no KDE priors"),
    ],
)
def test_keys_with_effects_bayestune_cannot_reproduce_are_refused(top, fragment):
    data = {
        "application_name": "app",
        "optimization_objectives": ["v"],
        "input_parameters": {"x": {"parameter_type": "real", "values": [0, 1]}},
        **top,
    }
    msg = str(error_of(data, source="hm.json"))
    assert fragment in msg, msg


def test_peer_settings_map_onto_bo_options_and_are_listed():
    s = load_hm(
        {"x": {"parameter_type": "real", "values": [0, 1], "prior": "gaussian"}},
        exploration_augmentation=0.01,
        model_weight=5,
        local_search_starting_points=4,
        local_search_random_points=300,
        acquisition_function="UCB",
        output_data_file="out.csv",
        feasible_output={"enable_feasible_predictor": True, "name": "ok", "true_value": 1, "false_value": 0},
    )
    assert s.strategy_options == {
        "acquisition": "lcb",
        "xi": 0.01,
        "log_transform": False,
        "acquisition_search": {"n_starts": 4, "n_samples": 300},
    }  # BaCO applies the priors only with EI_PIBO: none with UCB
    assert s.feasible_output == "ok"
    handled = {h.key: h.handling for h in s.key_handling}
    assert handled["input_parameters.prior"] == "ignored"
    assert handled["model_weight"] == handled["exploration_augmentation"] == "mapped"
    assert handled["output_data_file"] == "mapped" and handled["feasible_output.true_value"] == "mapped"
    from bayestune.strategies import make_strategy

    make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)


def test_peer_internals_set_to_other_values_warn(caplog):
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        s = load_hm(
            {"x": {"parameter_type": "real", "values": [0, 1]}},
            local_search_step_size=0.3,
            noise=True,
            design_of_experiment={"number_of_samples": 3, "allow_repetitions": True},
        )
    assert "local_search_step_size = 0.3" in caplog.text and "allow_repetitions" in caplog.text
    assert "noise" not in caplog.text  # the peer's default
    handled = {h.key: h.handling for h in s.key_handling}
    assert handled["local_search_step_size"] == "approximated" and handled["noise"] == "ignored"


def test_epsilon_greedy_threshold_is_bo_epsilon_with_each_peers_default():
    x = {"x": {"parameter_type": "real", "values": [0, 1]}}
    baco = {"baco_mode": {"mode": "default"}}
    assert load_hm(x, epsilon_greedy_threshold=0.3, **baco).strategy_options == {
        "acquisition_search": {"epsilon": 0.3},
        "log_transform": False,
    }
    assert load_hm(x, **baco).strategy_options == {"log_transform": False}  # BaCO's default 0
    assert load_hm(x, hypermapper_mode={"mode": "default"}).strategy_options == {
        "model": "rf",
        "rf": {"trees": 10, "bootstrap": False, "min_samples_split": 5},
        "acquisition_search": {"epsilon": 0.1},
        "log_transform": False,
    }
    assert (
        "experimental"
        not in load_hm(x, epsilon_greedy_threshold=0.3, optimization_method="local_search").strategy_options
    )


def test_bo_epsilon_takes_random_steps():
    """With epsilon 1 every step is BaCO's random step: one coin, then a uniform unseen draw."""
    from bayestune.history import History, draw_unseen
    from bayestune.strategies import make_strategy

    s = load_hm({"x": {"parameter_type": "integer", "values": [0, 999]}}, epsilon_greedy_threshold=1.0)
    X = s.space.to_matrix([{"x": v} for v in (500, 501, 502, 503)])
    history = History(
        s.space,
        list(s.objectives),
        X,
        np.array([[3.0], [2.0], [1.0], [0.5]]),
        np.ones(4, dtype=bool),
        np.empty((0, 1)),
        set(s.space.row_keys(X)),
    )
    greedy = make_strategy("bo", s.space, s.objectives, np.random.default_rng(0), s.strategy_options)
    rng = np.random.default_rng(0)
    rng.random()
    np.testing.assert_array_equal(greedy.suggest(history, 3), draw_unseen(s.space, history, 3, rng))
    model = make_strategy("bo", s.space, s.objectives, np.random.default_rng(0), {})
    rng = np.random.default_rng(0)
    rng.random()
    assert not np.array_equal(model.suggest(history, 3), draw_unseen(s.space, history, 3, rng))


def test_hypermapper_files_without_models_mean_a_random_forest():
    x = {"x": {"parameter_type": "real", "values": [0, 1]}}
    hm = load_hm(x, hypermapper_mode={"mode": "default"}, output_pareto_file="p.csv")
    forest = {
        "model": "rf",
        "rf": {"trees": 10, "bootstrap": False, "min_samples_split": 5},
        "acquisition_search": {"epsilon": 0.1},
        "log_transform": False,
    }  # HyperMapper's forest and epsilon
    assert hm.strategy_options == forest
    baco = load_hm(x, baco_mode={"mode": "default"})
    assert baco.strategy_options == {"log_transform": False}
    shared = load_hm(x)  # only keys both know: HyperMapper's examples are written so
    assert shared.strategy_options == forest
    assert load_hm(x, bayestune_read_as="baco").strategy_options == {"log_transform": False}
    assert "HyperMapper" in {h.key: h.detail for h in hm.key_handling}["models"]
    explicit = load_hm(x, hypermapper_mode={"mode": "default"}, models={"model": "gaussian_process"})
    assert explicit.strategy_options == {"acquisition_search": {"epsilon": 0.1}, "log_transform": False}


def test_the_key_table_covers_both_published_schemas():
    from bayestune.scenario.hypermapper.keys import HANDLINGS, TOP_LEVEL
    from bayestune.scenario.hypermapper.schemas import BACO_KEYS, BAYESTUNE_KEYS, HYPERMAPPER_KEYS

    assert set(TOP_LEVEL) == BACO_KEYS | HYPERMAPPER_KEYS | BAYESTUNE_KEYS
    assert {h for h, _, _ in TOP_LEVEL.values()} <= set(HANDLINGS)


def test_time_budget_minutes_become_a_wall_clock_limit_that_stops_the_run():
    import time

    from bayestune.optimizer import Optimizer
    from bayestune.scenario import scenario_to_dict

    s = load_hm({"x": {"parameter_type": "integer", "values": [0, 99]}}, time_budget=0.005)  # 0.3 s
    assert s.time_limit == pytest.approx(0.3) and {h.key: h.handling for h in s.key_handling}["time_budget"] == "mapped"
    assert scenario_from_dict(scenario_to_dict(s)).time_limit == pytest.approx(0.3)  # kept in the native format
    assert load_hm({"x": {"parameter_type": "integer", "values": [0, 99]}}, time_budget=-1).time_limit is None
    opt = Optimizer(s.space, objectives=s.objectives, design=s.design, seed=0, strategy="random")
    started = time.monotonic()
    opt.optimize(lambda c: time.sleep(0.05) or c["x"], s.budget, time_limit=s.time_limit)
    assert 3 <= opt.n_evaluated < 20 and time.monotonic() - started < 2.0


def test_evaluations_per_iteration_is_a_lock_step_batch():
    from bayestune.execution import run
    from bayestune.optimizer import Optimizer
    from bayestune.scenario import scenario_to_dict

    s = load_hm(
        {"x": {"parameter_type": "integer", "values": [0, 99]}},
        optimization_iterations=3,
        evaluations_per_optimization_iteration=4,
        design_of_experiment={"number_of_samples": 2},
    )
    assert s.budget == 2 + 3 * 4 and s.batch == 4
    assert scenario_from_dict(scenario_to_dict(s)).batch == 4
    assert load_hm({"x": {"parameter_type": "integer", "values": [0, 99]}}).batch is None
    asked = []
    opt = Optimizer(s.space, objectives=s.objectives, design=s.design, seed=0, strategy="random")
    original = opt.ask
    opt.ask = lambda n=1: asked.append(n) or original(n)
    run(opt, lambda c: c["x"], s.budget, batch=s.batch)
    assert opt.n_evaluated == 14 and asked == [4, 4, 4, 2]


def test_docs_list_every_key_with_its_handling():
    from pathlib import Path

    from bayestune.scenario.hypermapper.keys import key_table

    docs = (Path(__file__).parents[3] / "docs" / "scenario.md").read_text()
    for key, _peers, handling, _detail in key_table():
        assert f"| `{key}` |" in docs and handling in docs, key


def test_format_key_handling_groups_by_handling():
    from bayestune.scenario.hypermapper.keys import format_key_handling

    s = load_hm({"x": {"parameter_type": "real", "values": [0, 1]}}, log_file="a.log", local_search_step_size=0.5)
    lines = format_key_handling(s.key_handling)
    assert lines[0].startswith("read as BaCO (BaCO-only local_search_step_size): strategy bo, Gaussian process")
    assert lines[1].startswith("mapped: ") and "mapped: log_file -> " in "\n".join(lines)
    assert lines[-1].startswith("approximated: local_search_step_size")


def test_feasibility_threshold_scales_the_random_feasibility_cut_as_in_baco():
    from bayestune.acquisition.scoring import FEASIBILITY_THRESHOLDS, acquisition_scorer

    s = load_hm(
        {"x": {"parameter_type": "real", "values": [0, 1]}},
        feasible_output={"enable_feasible_predictor": True, "feasibility_threshold": 0.5},
        bayestune_read_as="baco",
    )
    assert s.strategy_options == {"feasibility": {"threshold": 0.5}, "log_transform": False}
    assert load_hm(
        {"x": {"parameter_type": "real", "values": [0, 1]}},
        bayestune_read_as="baco",
        feasible_output={"feasibility_threshold": 0.1},
    ).strategy_options == {"log_transform": False}

    class Flat:  # a posterior with the same EI everywhere, and a classifier saying P(feasible) = 0.3
        best_y_latent_ = 0.0

        def predict_latent(self, F):
            return np.zeros(len(F)), np.ones(len(F))

    class Classifier:
        def predict_proba(self, F):
            return np.full(len(F), 0.3)

    X = s.space.to_matrix([{"x": 0.5}])
    from bayestune.models.encoding import FeatureEncoder

    encoder = FeatureEncoder(s.space)
    ruled_out = []
    for seed in range(200):
        score = acquisition_scorer(
            s.space,
            encoder,
            Flat(),
            Classifier(),
            np.random.default_rng(seed),
            parameter=0.0,
            n_obs=5,
            prior_beta=10.0,
            feasibility_threshold=0.5,
        )
        ruled_out.append(score(X)[0] == -np.inf)
    # BaCO: eps_f drawn from 0.5 x {0, 0.1, ..., 1}; P(feasible) = 0.3 <= eps_f for 5 of the 11 draws
    assert 0.3 < np.mean(ruled_out) < 0.6
    assert FEASIBILITY_THRESHOLDS.max() == 0.1


def test_random_forest_settings_map_onto_bo_options():
    from bayestune.strategies import make_strategy

    x = {"x": {"parameter_type": "real", "values": [0, 1]}}
    s = load_hm(
        x,
        models={
            "model": "random_forest",
            "number_of_trees": 30,
            "max_features": 0.8,
            "bootstrap": False,
            "min_samples_split": 4,
        },
        bayestune_read_as="baco",
    )
    assert s.strategy_options == {
        "model": "rf",
        "rf": {"trees": 30, "max_features": 0.8, "bootstrap": False, "min_samples_split": 4},
        "log_transform": False,
    }
    assert {h.key: h.handling for h in s.key_handling}["models.number_of_trees"] == "mapped"
    bo = make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)
    F = np.random.default_rng(1).random((12, 1))
    forest = bo.surrogates._fit(F, F[:, 0] + 1.0).forest_
    assert (forest.n_estimators, forest.max_features, forest.bootstrap, forest.min_samples_split) == (30, 0.8, False, 4)
    msg = str(
        error_of(
            {
                "application_name": "a",
                "optimization_objectives": ["v"],
                "input_parameters": x,
                "models": {"model": "random_forest", "number_of_trees": 0},
            },
            source="hm.json",
        )
    )
    assert msg.startswith("hm.json: $.models.number_of_trees:"), msg


def test_review_keys_lists_every_problem_of_a_file_at_once():
    from bayestune.scenario.hypermapper.keys import review_keys

    data = {
        "application_name": "a",
        "optimization_objectives": ["v"],
        "optimization_iteration": 8,
        "number_of_repetitions": 3,
        "baco_mode": {"mode": "client-server"},
        "noise": True,
        "local_search_step_size": 0.2,
        "input_parameters": {"x": {"parameter_type": "real", "values": [0, 1]}},
    }
    review = {h.key: (h.handling, h.detail) for h in review_keys(data)}
    assert review["optimization_iteration"] == (
        "unknown",
        "not a key of either schema (did you mean 'optimization_iterations'?)",
    )
    assert review["baco_mode"][0] == "mapped" and review["number_of_repetitions"][0] == "ignored"
    assert review["noise"][0] == "ignored" and review["local_search_step_size"][0] == "approximated"
    assert review["input_parameters"][0] == "mapped"


def test_number_of_repetitions_is_read_by_neither_peer_so_each_configuration_runs_once():
    s = load_hm({"x": {"parameter_type": "real", "values": [0, 1]}}, number_of_repetitions=3)
    assert s.measurement.policy.repeats == 1 and not s.measurement.races and s.measurement.confirmation[0] == 0
    assert {h.key: h.handling for h in s.key_handling}["number_of_repetitions"] == "ignored"
    with pytest.raises(
        ScenarioError, match=r"\$.number_of_repetitions: `value >= 1` \(an integer\) must hold, but got 0"
    ):
        load_hm({"x": {"parameter_type": "real", "values": [0, 1]}}, number_of_repetitions=0)
