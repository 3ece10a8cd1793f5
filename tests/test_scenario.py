"""Scenario files: native JSON/YAML round trips, HyperMapper/BaCO and T1 readers, error reports."""

from __future__ import annotations

import copy
import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from bayestune.exceptions import ConstraintError, ScenarioError
from bayestune.scenario import (
    DESIGN_METHODS,
    NATIVE_KEYS,
    detect_format,
    load_scenario,
    load_schema,
    save_scenario,
    scenario_from_dict,
    scenario_to_dict,
    space_from_spec,
)
from bayestune.scenario_model import DEFAULT_STRATEGY, BlackBoxSpec, Scenario
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space

DATA = Path(__file__).parent / "data" / "scenarios"
T1_DIR = Path("/work/shared/data/gpu-kernels/t1")
T1_FILES = sorted(T1_DIR.glob("*.json"))

NATIVE = {
    "name": "blur",
    "parameters": [
        {"name": "tile_x", "type": "ordinal", "values": [1, 2, 4, 8, 16, 32], "log": True, "default": 8,
         "prior": "decay"},
        {"name": "tile_y", "type": "integer", "bounds": [1, 64], "log": True, "default": 4, "prior": [2.0, 3.0]},
        {"name": "alpha", "type": "real", "bounds": [0.001, 1.0], "log": True, "prior": {"alpha": 2, "beta": 2}},
        {"name": "mode", "type": "categorical", "values": ["a", "b", 3, True], "default": "b",
         "prior": [1, 2, 3, 4]},
        {"name": "order", "type": "permutation", "n": 4, "metric": "hamming", "default": [3, 2, 1, 0]},
    ],
    "constraints": ["tile_x * tile_y <= 256", "order[0] < order[1] or mode == 'a'"],
    "objectives": ["time", {"name": "gflops", "direction": "maximize"}],
    "budget": 40,
    "initial_design": {"method": "maximin", "size": 7, "include_default": False},
    "strategy": "random",
    "strategy_options": {"note": [1, 2]},
    "blackbox": {"python": "bench.py:run", "timeout": 12.5, "options": {"x": 1}},
    "seed": 3,
    "journal": "runs/blur.db",
    "feasible_output": "valid",
}


def native(**changes):
    data = copy.deepcopy(NATIVE)
    data.update(changes)
    return data


def error_of(data, source="x.json") -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, source=source)
    return info.value


# ---------------------------------------------------------------------------------------
# native format
# ---------------------------------------------------------------------------------------
def test_native_dict_round_trip():
    s1 = scenario_from_dict(native())
    d1 = scenario_to_dict(s1)
    s2 = scenario_from_dict(d1)
    assert scenario_to_dict(s2) == d1
    assert s2.space.parameters == s1.space.parameters
    assert [c.expression for c in s2.space.constraints] == NATIVE["constraints"]
    assert s2.objectives == s1.objectives and s2.objectives[1].direction == "maximize"
    assert (s2.budget, s2.design, s2.strategy, s2.seed, s2.journal, s2.feasible_output) == \
        (40, s1.design, "random", 3, "runs/blur.db", "valid")
    assert s2.design.method == "maximin" and s2.design.size == 7 and not s2.design.include_default
    assert s2.blackbox == BlackBoxSpec("python", "bench.py:run", timeout=12.5, options={"x": 1})
    assert s2.strategy_options == {"note": [1, 2]}
    json.dumps(d1)  # JSON-ready


def test_native_types_and_values():
    s = scenario_from_dict(native())
    p = {q.name: q for q in s.space.parameters}
    assert isinstance(p["tile_x"], Ordinal) and p["tile_x"].log and p["tile_x"].default == 8
    assert isinstance(p["tile_y"], Integer) and (p["tile_y"].low, p["tile_y"].high) == (1, 64)
    assert isinstance(p["alpha"], Real) and p["alpha"].prior.alpha == 2
    assert isinstance(p["mode"], Categorical) and p["mode"].values == ["a", "b", 3, True]
    assert isinstance(p["order"], Permutation) and p["order"].metric == "hamming"
    assert p["order"].default == (3, 2, 1, 0)


def test_native_minimal_uses_defaults():
    s = scenario_from_dict({"parameters": [{"name": "x", "type": "real", "bounds": [0, 1]}], "objectives": ["y"]})
    assert s.name == "scenario" and s.budget == 50 and s.strategy == DEFAULT_STRATEGY
    assert s.blackbox is None and s.seed is None and s.journal is None and s.space.constraints == []
    assert s.design.method == "cot" and s.design.size == 10 and s.design.include_default
    back = scenario_to_dict(s)
    assert scenario_to_dict(scenario_from_dict(back)) == back


def test_parameters_as_mapping_equal_list():
    listed = scenario_from_dict(native())
    mapping = native(parameters={p["name"]: {k: v for k, v in p.items() if k != "name"}
                                 for p in NATIVE["parameters"]})
    assert scenario_to_dict(scenario_from_dict(mapping)) == scenario_to_dict(listed)


@pytest.mark.parametrize("name", ["native_full.json", "native_full.yaml"])
def test_native_fixture_files(name):
    s = load_scenario(DATA / name)
    assert s.source == str(DATA / name)
    assert s.name == "blur_tiling" and len(s.space) == 5 and s.budget == 60
    assert s.journal == "runs/blur.db"  # kept as written: relative to the file's directory
    assert s.blackbox.kind == "command" and s.blackbox.workdir == "build" and s.blackbox.timeout == 30
    assert s.space["order"].metric == "kendall"


def test_json_and_yaml_fixtures_agree():
    assert scenario_to_dict(load_scenario(DATA / "native_full.json")) == \
        scenario_to_dict(load_scenario(DATA / "native_full.yaml"))


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_file_round_trip(tmp_path, suffix):
    s1 = load_scenario(DATA / "native_full.json")
    out = tmp_path / f"copy{suffix}"
    save_scenario(s1, out)
    s2 = load_scenario(out)
    d1, d2 = scenario_to_dict(s1), scenario_to_dict(s2)
    # Relative paths were rebased so that they still name the same files.
    for key_path in (("journal",), ("blackbox", "workdir")):
        a, b = d1, d2
        for k in key_path:
            a, b = a[k], b[k]
        assert os.path.normpath(tmp_path / b) == os.path.normpath(DATA / a)
        assert not os.path.isabs(b)
    d1.pop("journal"), d2.pop("journal"), d1["blackbox"].pop("workdir"), d2["blackbox"].pop("workdir")
    assert d1 == d2
    if suffix == ".json":
        json.loads(out.read_text())


def test_save_in_same_directory_keeps_paths(tmp_path):
    src = tmp_path / "a.json"
    src.write_text(json.dumps(native()))
    save_scenario(load_scenario(src), tmp_path / "b.yaml")
    again = load_scenario(tmp_path / "b.yaml")
    assert again.journal == "runs/blur.db" and again.blackbox.target == "bench.py:run"


def test_save_rebases_python_file_target(tmp_path):
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / "s.json").write_text(json.dumps(native()))
    save_scenario(load_scenario(src_dir / "s.json"), tmp_path / "out.json")
    out = load_scenario(tmp_path / "out.json")
    assert out.blackbox.target == "src/bench.py:run" and out.journal == "src/runs/blur.db"


def test_yaml_exponent_floats(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("parameters:\n  lr: {type: real, bounds: [1e-5, 1e-1], log: true}\nobjectives: [loss]\n")
    p = load_scenario(f).space["lr"]
    assert (p.low, p.high) == (1e-5, 1e-1)


def test_space_from_spec():
    space = space_from_spec(NATIVE["parameters"], NATIVE["constraints"])
    assert isinstance(space, Space) and space.names == [p["name"] for p in NATIVE["parameters"]]
    again = space_from_spec(space.to_spec()["parameters"], space.to_spec()["constraints"])
    assert again.parameters == space.parameters
    mapped = space_from_spec({"a": {"type": "integer", "bounds": [0, 3]}}, ["a != 2"])
    assert mapped.names == ["a"] and mapped.count_feasible() == 3
    with pytest.raises(ScenarioError, match=r"\$\.parameters\.a\.bounds: `low < high` must hold, but got \[3, 0\]"):
        space_from_spec({"a": {"type": "integer", "bounds": [3, 0]}}, [])


def test_python_built_scenario_round_trips():
    space = Space([Integer("n", 1, 8), Permutation("p", 3, default=(2, 0, 1))], ["p[0] != n"])
    s = Scenario("py", space, blackbox=BlackBoxSpec("command", "run {n}"))
    d = scenario_to_dict(s)
    assert d["parameters"][1]["default"] == [2, 0, 1]
    assert scenario_to_dict(scenario_from_dict(d)) == d


# ---------------------------------------------------------------------------------------
# published JSON Schema
# ---------------------------------------------------------------------------------------
def test_schema_is_valid_and_matches_the_loader():
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(NATIVE_KEYS)
    assert schema["$defs"]["initial_design"]["properties"]["method"]["enum"] == list(DESIGN_METHODS)
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors(NATIVE))
    assert not list(validator.iter_errors(json.loads((DATA / "native_full.json").read_text())))
    assert not list(validator.iter_errors(scenario_to_dict(scenario_from_dict(native()))))


def test_written_scenarios_validate_against_the_schema():
    validator = Draft202012Validator(load_schema())
    for path in [DATA / "hypermapper_branin4.json", DATA / "baco_taco_sddmm.json", *T1_FILES]:
        assert not list(validator.iter_errors(scenario_to_dict(load_scenario(path)))), path


# ---------------------------------------------------------------------------------------
# HyperMapper 2.0 / BaCO
# ---------------------------------------------------------------------------------------
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
    assert s.space.default_is_feasible()
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


# ---------------------------------------------------------------------------------------
# T1 search spaces
# ---------------------------------------------------------------------------------------
def test_all_t1_files_are_present():
    assert len(T1_FILES) == 5, "expected the five T1 files in /work/shared/data/gpu-kernels/t1"


@pytest.mark.parametrize("path", T1_FILES, ids=lambda p: p.stem)
def test_t1_files_build_spaces(path):
    raw = json.loads(path.read_text())
    s = load_scenario(path)
    tps = raw["ConfigurationSpace"]["TuningParameters"]
    assert detect_format(raw) == "t1"
    assert s.name == raw["General"]["BenchmarkName"]
    assert s.space.names == [tp["Name"] for tp in tps]
    assert s.objective_names == ["time"] and s.objectives[0].minimize and s.blackbox is None
    assert [c.expression for c in s.space.constraints] == [c["Expression"] for c in raw["ConfigurationSpace"]["Conditions"]]
    for p, tp in zip(s.space.parameters, tps):
        assert isinstance(p, Ordinal)  # every T1 parameter here is a numeric list
        assert p.values == sorted(p.values)
        assert p.log == (p.values[0] > 0 and p.values[-1] / p.values[0] >= 16)
        default = tp["Default"][0] if isinstance(tp["Default"], list) else tp["Default"]
        assert p.default == default
    back = scenario_to_dict(s)
    assert scenario_to_dict(scenario_from_dict(back)) == back


def test_t1_value_expressions_and_log_rule():
    s = load_scenario(T1_DIR / "pnpoly.json")
    assert s.space["block_size_x"].values == [32 * i for i in range(1, 32)] and s.space["block_size_x"].log
    assert s.space["tile_size"].values == [1] + [2 * i for i in range(1, 11)] and s.space["tile_size"].log
    assert s.space["between_method"].values == [0, 1, 2, 3] and not s.space["between_method"].log
    gemm = load_scenario(T1_DIR / "gemm_milo.json")
    assert gemm.space["GEMMK"].values == [0] and gemm.space["GEMMK"].default == 0  # constant, list default
    assert not gemm.space["MWG"].log  # 128 / 16 = 8 < 16


def test_t1_constraints_match_the_kernel_restrictions():
    """The T1 restrictions of convolution_milo admit exactly the 4362 configurations of its
    Kernel Tuner cache (README of the data set); a small space, cheap to count."""
    s = load_scenario(T1_DIR / "convolution_milo.json")
    assert s.space.count_feasible() == 4362


def test_t1_strings_floats_and_unsorted_values():
    s = scenario_from_dict({"General": {"BenchmarkName": "k"}, "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "algo", "Type": "string", "Values": "['naive', 'tiled']", "Default": "tiled"},
            {"Name": "f", "Type": "float", "Values": "[0.5, 0.25, 1.0]", "Default": [0.5]},
            {"Name": "b", "Type": "int", "Values": [256, 1, 16], "Default": 16},
        ],
        "Conditions": ["algo == 'tiled' or b <= 16"]}})
    algo, f, b = s.space.parameters
    assert isinstance(algo, Categorical) and algo.values == ["naive", "tiled"] and algo.default == "tiled"
    assert f.values == [0.25, 0.5, 1.0] and not f.log and f.default == 0.5
    assert b.values == [1, 16, 256] and b.log


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "[open('/etc/passwd')]", "[x.real for x in [1]]",
    "[i for i in range(10 ** 9)]", "'a' * 10 ** 9", "[1, 2",
])
def test_t1_values_are_never_evaluated_unsafely(text):
    err = error_of({"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": text}]}},
                   source="t1.json")
    assert "t1.json: $.ConfigurationSpace.TuningParameters[0].Values: cannot read a list of values" in str(err)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------
def test_bad_bounds_message_names_file_path_rule_and_value():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_bounds.json")
    assert str(info.value) == f"{DATA / 'broken_bounds.json'}: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]"


def test_invalid_json_reports_line_and_column():
    with pytest.raises(ScenarioError, match=r"broken_syntax\.json: invalid JSON at line 5, column 3"):
        load_scenario(DATA / "broken_syntax.json")


def test_invalid_yaml_reports_line_and_column():
    with pytest.raises(ScenarioError, match=r"broken_syntax\.yaml: invalid YAML at line 4, column 1"):
        load_scenario(DATA / "broken_syntax.yaml")


def test_empty_and_unreadable_files(tmp_path):
    with pytest.raises(ScenarioError, match="empty"):
        load_scenario(DATA / "empty.yaml")
    (tmp_path / "blank.json").write_text("  \n")
    with pytest.raises(ScenarioError, match=r"blank\.json: the file is empty"):
        load_scenario(tmp_path / "blank.json")
    with pytest.raises(ScenarioError, match=r"missing\.json: cannot read the scenario file: no such file"):
        load_scenario(tmp_path / "missing.json")
    with pytest.raises(ScenarioError, match="it is a directory"):
        load_scenario(tmp_path)
    (tmp_path / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(tmp_path / "latin1.json")


def test_duplicate_keys_are_errors(tmp_path):
    (tmp_path / "d.json").write_text('{"parameters": [], "parameters": [], "objectives": ["t"]}')
    with pytest.raises(ScenarioError, match="duplicate key 'parameters'"):
        load_scenario(tmp_path / "d.json")
    (tmp_path / "d.yaml").write_text("parameters:\n  a: {type: real, bounds: [0, 1]}\n"
                                     "  a: {type: integer, bounds: [0, 3]}\nobjectives: [t]\n")
    with pytest.raises(ScenarioError, match=r"invalid YAML at line 3, column 3: found duplicate key 'a'"):
        load_scenario(tmp_path / "d.yaml")


def test_unknown_format_and_non_mapping(tmp_path):
    assert "unknown scenario format" in str(error_of({"tuning": {}}))
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ScenarioError, match=r"list\.yaml: \$: a scenario must be an object"):
        load_scenario(tmp_path / "list.yaml")


def test_unknown_key_lists_allowed_keys():
    msg = str(error_of(native(budgett=3)))
    assert msg.startswith("x.json: $: unknown key 'budgett'; allowed keys: [")
    for key in ("budget", "objectives", "parameters", "initial_design"):
        assert repr(key) in msg
    msg = str(error_of(native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "values": [1]}])))
    assert "$.parameters[0]: unknown key 'values'; allowed keys: ['bounds', 'default', 'log', 'name', 'prior', 'type']" in msg


@pytest.mark.parametrize("data, path, fragment", [
    (native(parameters=[{"name": "x", "type": "float", "bounds": [0, 1]}]),
     "$.parameters[0].type", 'must be one of ["real", "integer", "ordinal", "categorical", "permutation"], but got "float"'),
    (native(parameters=[{"name": "x", "type": "integer", "bounds": [4, 4]}]),
     "$.parameters[0].bounds", "`low < high` must hold, but got [4, 4]"),
    (native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "log": True}]),
     "$.parameters[0].bounds", "a log-scale parameter needs `low > 0`"),
    (native(parameters=[{"name": "x", "type": "integer", "bounds": [0, 1.5]}]),
     "$.parameters[0].bounds[1]", "expected an integer, but got 1.5"),
    (native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1, 2]}]),
     "$.parameters[0].bounds", "must have at most 2 item(s)"),
    (native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "prior": "gausian"}]),
     "$.parameters[0].prior", 'but got "gausian"'),
    (native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1], "prior": [0, 2]}]),
     "$.parameters[0].prior", "but got [0, 2]"),
    (native(parameters=[{"name": "c", "type": "categorical", "values": ["a", "b"], "prior": [1]}]),
     "$.parameters[0].prior", "a list of 2 probabilities"),
    (native(parameters=[{"name": "x", "type": "ordinal", "values": [1, 4, 2]}]),
     "$.parameters[0].values", "strictly increasing"),
    (native(parameters=[{"name": "x", "type": "ordinal", "values": [1, 2, 4], "default": 3}]),
     "$.parameters[0].default", "value must be one of [1, 2, 4], but got 3"),
    (native(parameters=[{"name": "p", "type": "permutation", "n": 3, "default": [0, 0, 1]}]),
     "$.parameters[0].default", "expected a permutation of 0..2"),
    (native(parameters=[{"name": "p", "type": "permutation", "n": 3, "metric": "ulam"}]),
     "$.parameters[0].metric", 'but got "ulam"'),
    (native(parameters=[{"name": "tile-x", "type": "real", "bounds": [0, 1]}]),
     "$.parameters[0].name", "Python identifier"),
    (native(parameters={"tile-x": {"type": "real", "bounds": [0, 1]}}),
     '$.parameters["tile-x"]', "a parameter name must be a Python identifier"),
    (native(parameters={"a": {"name": "b", "type": "real", "bounds": [0, 1]}}),
     "$.parameters.a.name", "must match the key 'a'"),
    (native(parameters=[{"name": "x", "type": "real", "bounds": [0, 1]}, {"name": "x", "type": "integer", "bounds": [0, 3]}]),
     "$.parameters[1].name", "parameter names must be unique, but 'x' also names $.parameters[0]"),
    (native(parameters=[]), "$.parameters", "must have at least 1 item(s)"),
    ({k: v for k, v in NATIVE.items() if k != "objectives"}, "$", "missing required key 'objectives'"),
    (native(objectives=[]), "$.objectives", "must have at least 1 item(s), but got []"),
    (native(objectives=["t", {"name": "t", "direction": "maximize"}]),
     "$.objectives[1]", "objective names must be unique, but 't' also appears at $.objectives[0]"),
    (native(objectives=["tile_x"]), "$.objectives[0]", "has the name of a parameter"),
    (native(objectives=[{"name": "t", "direction": "up"}]), "$.objectives[0]", 'but got {"name": "t", "direction": "up"}'),
    (native(budget=0), "$.budget", "`value >= 1` must hold, but got 0"),
    (native(budget=2.5), "$.budget", "expected an integer, but got 2.5"),
    (native(initial_design={"method": "sobol"}), "$.initial_design.method", 'but got "sobol"'),
    (native(seed=-1), "$.seed", "`value >= 0` must hold"),
    (native(feasible_output="time"), "$.feasible_output", "must not be an objective"),
    (native(blackbox={"timeout": 3}), "$.blackbox", "exactly one of ['python', 'command', 'external', 'replay'] must be given, but got none"),
    (native(blackbox={"python": "m:f", "command": "run"}), "$.blackbox", "but got ['python', 'command']"),
    (native(blackbox={"python": "bench.run"}), "$.blackbox.python", 'expected "module:function"'),
    (native(blackbox={"shell": "run"}), "$.blackbox", "unknown key 'shell'; allowed keys: ['command', 'external', 'options', 'python', 'replay', 'timeout', 'workdir']"),
    (native(blackbox={"command": "run", "timeout": 0}), "$.blackbox.timeout", "`value > 0` must hold, but got 0"),
    (native(blackbox="run.sh"), "$.blackbox", 'expected an object or null, but got "run.sh"'),
])
def test_native_errors(data, path, fragment):
    msg = str(error_of(data))
    assert msg.startswith(f"x.json: {path}: "), msg
    assert fragment in msg, msg


def test_bad_constraint_is_wrapped_with_its_path():
    with pytest.raises(ScenarioError) as info:
        load_scenario(DATA / "broken_constraint.yaml")
    assert str(info.value).startswith(f"{DATA / 'broken_constraint.yaml'}: $.constraints[1]: ")
    assert "unknown name 'c'" in str(info.value)
    assert isinstance(info.value.__cause__, ConstraintError)
    err = error_of(native(constraints=["tile_x <= 8", "tile_x +* 2"]))
    assert str(err).startswith("x.json: $.constraints[1]: ") and isinstance(err.__cause__, ConstraintError)


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


@pytest.mark.parametrize("tps, conds, path, fragment", [
    ([{"Name": "a", "Type": "int", "Values": "[1, 2.5]"}], [], "$.ConfigurationSpace.TuningParameters[0].Values", "not an integer"),
    ([{"Name": "a", "Type": "complex", "Values": "[1]"}], [], "$.ConfigurationSpace.TuningParameters[0].Type", 'but got "complex"'),
    ([{"Name": "a", "Type": "int", "Values": "[1, 2]", "Default": 3}], [], "$.ConfigurationSpace.TuningParameters[0].Default", "but got 3"),
    ([{"Name": "a", "Type": "int", "Values": "[1, 2, 2]"}], [], "$.ConfigurationSpace.TuningParameters[0].Values", "distinct"),
    ([{"Name": "a", "Type": "int", "Values": "[]"}], [], "$.ConfigurationSpace.TuningParameters[0].Values", "at least one value"),
    ([{"Name": "a", "Values": "[1]"}, {"Name": "a", "Values": "[2]"}], [], "$.ConfigurationSpace.TuningParameters[1].Name", "unique"),
    ([{"Type": "int", "Values": "[1]"}], [], "$.ConfigurationSpace.TuningParameters[0]", "missing required key 'Name'"),
    ([{"Name": "a", "Values": "[1, 2]"}], [{"Expression": "a < b", "Parameters": ["a"]}],
     "$.ConfigurationSpace.Conditions[0].Expression", "unknown name 'b'"),
    ([{"Name": "a", "Values": "[1, 2]"}], [{"Expression": "a < 2", "Parameters": ["b"]}],
     "$.ConfigurationSpace.Conditions[0].Parameters[0]", 'unknown parameter "b"'),
    ([{"Name": "a", "Values": "[1, 2]"}], [{"Parameters": ["a"]}], "$.ConfigurationSpace.Conditions[0]", "Expression"),
    ([], [], "$.ConfigurationSpace.TuningParameters", "non-empty list"),
])
def test_t1_errors(tps, conds, path, fragment):
    data = {"General": {"BenchmarkName": "k"}, "ConfigurationSpace": {"TuningParameters": tps, "Conditions": conds}}
    msg = str(error_of(data, source="t1.json"))
    assert msg.startswith(f"t1.json: {path}: "), msg
    assert fragment in msg, msg


def test_detect_format():
    assert detect_format(NATIVE) == "native"
    assert detect_format({"application_name": "a", "input_parameters": {}}) == "hypermapper"
    assert detect_format({"optimization_objectives": ["v"]}) == "hypermapper"
    assert detect_format({"General": {}, "ConfigurationSpace": {}}) == "t1"
    assert detect_format({"foo": 1}) is None and detect_format([1]) is None


def test_save_into_missing_directory_fails_clearly(tmp_path):
    s = scenario_from_dict(native())
    with pytest.raises(ScenarioError, match="cannot write the scenario file"):
        save_scenario(s, tmp_path / "nope" / "s.json")


def test_documented_native_example_loads(tmp_path):
    """The full example of docs/scenario.md stays a valid scenario."""
    doc = (Path(__file__).parents[1] / "docs" / "scenario.md").read_text()
    section = doc[doc.index("## Native format"):]
    example = section[section.index("```yaml") + len("```yaml"):]
    example = example[:example.index("```")]
    (tmp_path / "example.yaml").write_text(example)
    s = load_scenario(tmp_path / "example.yaml")
    assert s.name == "blur_tiling" and len(s.space) == 5 and len(s.space.constraints) == 2
    assert scenario_to_dict(s)["parameters"] == scenario_to_dict(load_scenario(DATA / "native_full.yaml"))["parameters"]


def test_python_shaped_input_is_accepted():
    data = native(parameters=[{"name": "n", "type": "integer", "bounds": (np.int64(1), np.int64(8))},
                              {"name": "v", "type": "ordinal", "values": np.array([1.0, 2.0, 4.0])}],
                  constraints=("n * v <= 16",))
    s = scenario_from_dict(data)
    assert (s.space["n"].low, s.space["n"].high) == (1, 8) and s.space["v"].values == [1.0, 2.0, 4.0]
    json.dumps(scenario_to_dict(s))
