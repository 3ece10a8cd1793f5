"""Whose file it is (HyperMapper 2.0 or BaCO) and that peer's defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bayestune.exceptions import ScenarioError
from bayestune.scenario import format_key_handling, scenario_from_dict

PEER_FILES = Path(__file__).parents[2] / "data" / "peers"
BACO = PEER_FILES / "baco-167b196" / "tests" / "aux"
HM = PEER_FILES / "hypermapper-3dfa8a7" / "example_scenarios"

X = {
    "x1": {"parameter_type": "real", "values": [-5, 10], "parameter_default": 0},
    "x2": {"parameter_type": "real", "values": [0, 15], "parameter_default": 0},
}


def load(**top):
    return scenario_from_dict(
        {
            "application_name": "branin",
            "optimization_objectives": ["Value"],
            "input_parameters": top.pop("params", X),
            **top,
        },
        source="s.json",
    )


def read_as(s) -> str:
    return format_key_handling(s.key_handling)[0]


def test_a_file_of_shared_keys_is_hypermappers_as_its_quick_start_example():
    # HyperMapper 2.0's quick_start/branin_scenario.json holds only keys both schemas share
    s = load(design_of_experiment={"number_of_samples": 10}, optimization_iterations=20)
    assert read_as(s).startswith("read as HyperMapper 2.0 (only keys both schemas share")
    assert "random forest (10 trees), ε = 0.1 random steps, raw output values" in read_as(s)
    assert s.strategy_options["model"] == "rf" and s.strategy_options["acquisition_search"] == {"epsilon": 0.1}


@pytest.mark.parametrize(
    "top, peer, evidence",
    [
        ({"baco_mode": {"mode": "default"}}, "BaCO", "baco_mode"),
        ({"predict_noiseless": True}, "BaCO", "predict_noiseless"),
        ({"params": {"p": {"parameter_type": "permutation", "values": [3]}}}, "BaCO", "permutation"),
        (
            {"params": {"x": {"parameter_type": "integer", "values": [1, 64], "transform": "log"}}},
            "BaCO",
            "input_parameters.x.transform",
        ),
        ({"acquisition_function": "EI_PIBO"}, "BaCO", "acquisition_function = 'EI_PIBO'"),
        ({"evaluations_per_optimization_iteration": 2}, "HyperMapper 2.0", "evaluations_per_optimization_iteration"),
        ({"design_of_experiment": {"doe_type": "standard latin hypercube"}}, "HyperMapper 2.0", "latin"),
        ({"prior_beta": 3}, "HyperMapper 2.0", "prior_beta"),
        ({"design_of_experiment": {"allow_repetitions": False}}, "BaCO", "design_of_experiment.allow_repetitions"),
        ({"feasible_output": {"feasibility_threshold": 0.1}}, "BaCO", "feasible_output.feasibility_threshold"),
        (
            {"feasible_output": {"enable_feasible_predictor_grid_search_on_recall_and_precision": False}},
            "HyperMapper 2.0",
            "feasible_output.enable_feasible_predictor_grid_search",
        ),
        (
            {"params": {"x": {"parameter_type": "real", "values": [0, 1], "custom_gaussian_prior_means": False}}},
            "HyperMapper 2.0",
            "input_parameters.x.custom_gaussian_prior_means",
        ),
        ({"optimization_iterations": 6000}, "HyperMapper 2.0", "optimization_iterations > 5000"),
        # both sides: the mode key decides
        ({"hypermapper_mode": {"mode": "default"}, "predict_noiseless": True}, "HyperMapper 2.0", "also BaCO-only"),
        ({"bayestune_read_as": "baco"}, "BaCO", "bayestune_read_as = 'baco'"),
    ],
)
def test_keys_and_values_only_one_schema_allows_tell_the_peer(top, peer, evidence):
    line = read_as(load(**top))
    assert line.startswith(f"read as {peer} (") and evidence in line, line


def test_baco_defaults_a_gaussian_process_without_random_steps_on_raw_values():
    s = load(baco_mode={"mode": "default"})
    assert s.strategy_options == {"log_transform": False}
    assert "Gaussian process, ε = 0 random steps, raw output values" in read_as(s)


def test_the_override_key_names_a_peer():
    with pytest.raises(ScenarioError, match=r"\$.bayestune_read_as: must be one of \['baco', 'hypermapper'\]"):
        load(bayestune_read_as="BaCO2")


def test_each_peers_pibo_strength_and_decay():
    prior = {"x": {"parameter_type": "real", "values": [0, 1], "prior": "gaussian"}}
    hm = load(params=prior, optimization_iterations=40)  # HyperMapper: prior_beta -1 = 0.1 x iterations
    assert hm.strategy_options["prior"] == {"beta": 4.0, "count": "model_steps", "design": 10}
    assert load(params=prior, prior_beta=7).strategy_options["prior"]["beta"] == 7.0
    baco = load(
        params=prior,
        baco_mode={"mode": "default"},
        design_of_experiment={"number_of_samples": 3},
        acquisition_function="EI_PIBO",
    )
    assert baco.strategy_options["prior"] == {"beta": 10.0, "count": "model_steps", "design": 3}
    assert "prior" not in load().strategy_options  # no prior: bo's default decay stays
    with pytest.raises(ScenarioError, match=r"\$.prior_beta: expected a number >= 0"):
        load(params=prior, prior_beta=-3)


def test_hypermappers_own_keys_are_accepted():
    s = load(
        prior_method="pibo",
        cma_es_sigma=0.2,
        cma_es_starting_points=1,
        cma_es_random_points=10000,
        model_posterior_weight=10,
    )
    handled = {h.key: h.handling for h in s.key_handling}
    assert {handled[k] for k in ("prior_method", "cma_es_sigma", "model_posterior_weight")} == {"ignored"}
    s = load(prior_method="bopro", model_posterior_weight=3)  # BOPrO: bayestune runs piBO (warned)
    handled = {h.key: h.handling for h in s.key_handling}
    assert handled["prior_method"] == handled["model_posterior_weight"] == "approximated"
    assert "prior" not in s.strategy_options


def test_the_peers_sample_file_name_and_header():
    hm = load(timestamp="When").peer_samples
    assert (hm.path, hm.timestamp_column, hm.feasible_column) == ("branin_output_samples.csv", "When", None)
    assert hm.parameter_names == ("x1", "x2") and hm.objectives == ("Value",) and hm.resume_from is None
    baco = load(
        baco_mode={"mode": "default"}, output_data_file="out.csv", feasible_output={"enable_feasible_predictor": True}
    ).peer_samples
    assert (baco.path, baco.timestamp_column, baco.feasible_column) == ("out.csv", "timestamp", "Valid")


def test_resume_optimization_names_the_csv_each_peer_reads():
    assert load(resume_optimization=True).peer_samples.resume_from == "branin_output_samples.csv"
    assert load(resume_optimization=True, resume_optimization_data="old.csv").peer_samples.resume_from == "old.csv"
    baco = load(baco_mode={"mode": "default"}, resume_optimization=True, resume_optimization_file="b.csv")
    assert baco.peer_samples.resume_from == "b.csv"
    with pytest.raises(ScenarioError, match=r"\$.resume_optimization_data: the file to resume from must be a CSV"):
        load(resume_optimization=True, resume_optimization_data="old.txt")


def test_client_server_mode_is_read_and_exhaustive_method_evaluates_every_configuration():
    s = load(hypermapper_mode={"mode": "client-server"})
    assert "bayestune serve" in {h.key: h.detail for h in s.key_handling}["hypermapper_mode"]
    ints = {
        "a": {"parameter_type": "integer", "values": [0, 9]},
        "b": {"parameter_type": "ordinal", "values": [1, 2, 4]},
    }
    t = load(params=ints, optimization_method="exhaustive", baco_mode={"mode": "default"}, optimization_iterations=3)
    assert t.budget == 30 and t.strategy == "cot_random"


def test_hypermappers_exhaustive_mode_searches_as_usual_with_the_table_as_black_box(tmp_path, monkeypatch):
    """HyperMapper's bo.py in mode 'exhaustive': the usual budget and search, each configuration
    answered by its row of exhaustive_search_file (taken from the working directory); a row the
    table lacks is an 'invalid' failure. The samples and the Pareto front land in run_directory."""
    import csv

    from bayestune.pareto import pareto_trials
    from bayestune.trial import FailureKind
    from bayestune.tuning import tune

    monkeypatch.chdir(tmp_path)
    rows = ["a,b,v1,v2,Valid"] + [
        f"{a},{b},{a + b},{(5 - a) * b},{str(a != 1).lower()}" for a in range(6) for b in (1, 2) if (a, b) != (4, 2)
    ]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "all.csv").write_text("\n".join(rows) + "\n")
    ints = {"a": {"parameter_type": "integer", "values": [0, 5]}, "b": {"parameter_type": "ordinal", "values": [1, 2]}}
    s = scenario_from_dict(
        {
            "application_name": "grid",
            "optimization_objectives": ["v1", "v2"],
            "input_parameters": ints,
            "optimization_iterations": 8,
            "run_directory": "out",
            "design_of_experiment": {"number_of_samples": 4},
            "feasible_output": {"enable_feasible_predictor": True},
            "hypermapper_mode": {"mode": "exhaustive", "exhaustive_search_file": "data/all.csv"},
        },
        source=str(tmp_path / "sub" / "grid.json"),
    )
    assert s.blackbox.kind == "table" and s.blackbox.target == str(tmp_path / "data" / "all.csv")
    assert s.budget == 12 and "mode 'exhaustive'" in {h.key: h.detail for h in s.key_handling}["hypermapper_mode"]
    result = tune(s, tmp_path / "grid.db", confirm=False, progress=False)
    trials = result.optimizer.trials
    assert len(trials) == 12  # every configuration, as the budget equals the space's size here
    by_config = {(t.config["a"], t.config["b"]): t for t in trials}
    assert by_config[(4, 2)].failure_kind == FailureKind.INVALID
    assert by_config[(1, 2)].status.value == "infeasible" and by_config[(3, 2)].values == {"v1": 5.0, "v2": 4.0}
    with open(tmp_path / "out" / "grid_output_samples.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 12
    with open(tmp_path / "out" / "grid_output_pareto.csv", newline="") as f:
        front = {(int(r["a"]), int(r["b"])) for r in csv.DictReader(f)}
    assert front == {(t.config["a"], t.config["b"]) for t in pareto_trials(trials, s.objectives)}
    assert front == {(0, 1), (2, 1), (3, 1), (4, 1), (5, 1)}  # (1, 1) is invalid


def test_hypermappers_default_epsilon_is_peer_behaviour_and_warns_of_nothing():
    import warnings

    import numpy as np

    from bayestune.strategies import make_strategy

    s = load()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)


def test_baco_pibo_real_pulls_as_hard_as_in_baco_at_the_first_model_step():
    """BaCO: prior^(model_weight / iteration_number), iteration_number 1 at the first model step."""
    import numpy as np

    from bayestune.strategies import make_strategy

    prior = {"x": {"parameter_type": "real", "values": [0, 1], "prior": "gaussian", "prior_parameters": [0.3, 0.1]}}
    s = load(
        params=prior,
        model_weight=300,
        baco_mode={"mode": "default"},
        design_of_experiment={"number_of_samples": 10},
        acquisition_function="EI_PIBO",
    )
    bo = make_strategy(s.strategy, s.space, s.objectives, np.random.default_rng(0), s.strategy_options)
    choice = bo.scorer.prior
    assert choice.beta / choice.decay_n(10) == 300.0 and choice.beta / choice.decay_n(12) == 100.0


def test_a_hypermapper_batchs_picks_share_its_iteration_number(monkeypatch):
    """bo.py: 4 iterations x 3 picks decay the prior with iteration_number 1, 2, 3, 4 (counting
    evaluations would give 1, 4, 7, 10)."""
    from bayestune.bostep import scorer
    from bayestune.execution import run
    from bayestune.optimizer import Optimizer

    prior = {"x": {"parameter_type": "integer", "values": [0, 99], "prior": "gaussian"}}
    s = load(
        params=prior,
        prior_beta=8,
        evaluations_per_optimization_iteration=3,
        optimization_iterations=4,
        epsilon_greedy_threshold=0,
        models={"model": "gaussian_process"},
        design_of_experiment={"number_of_samples": 6},
    )
    assert s.strategy_options["prior"] == {"beta": 8.0, "count": "model_steps", "design": 6, "batch": 3}
    seen = []
    original = scorer.acquisition_scorer
    monkeypatch.setattr(scorer, "acquisition_scorer", lambda *a, **k: seen.append(k["n_obs"]) or original(*a, **k))
    opt = Optimizer.from_scenario(s, seed=0)
    run(opt, lambda c: (c["x"] - 30) ** 2, s.budget, batch=s.batch)
    assert opt.n_evaluated == 18 and sorted(set(seen)) == [1, 2, 3, 4]


@pytest.mark.parametrize("acquisition", [None, "EI", "UCB"])
def test_baco_uses_the_priors_only_with_ei_pibo(acquisition):
    """BaCO's branin4_scenario_pibo.json: EI_PIBO weights by the priors; the same file with EI,
    UCB or no acquisition key runs without them (bo/optimize.py picks ei/ucb, not ei_pibo)."""
    data = json.loads((BACO / "branin4_scenario_pibo.json").read_text())
    assert scenario_from_dict(data, source="pibo.json").strategy_options["prior"]["beta"] == 10.0
    if acquisition is None:
        del data["acquisition_function"]
    else:
        data["acquisition_function"] = acquisition
    s = scenario_from_dict(data, source="pibo.json")
    assert "prior" not in s.strategy_options
    assert "EI_PIBO" in {h.key: h.detail for h in s.key_handling}["input_parameters.prior"]


def test_baco_refuses_ei_bopro_as_its_optimizer_does():
    data = json.loads((BACO / "branin4_scenario_bopro.json").read_text())
    with pytest.raises(ScenarioError, match="refused by BaCO's own optimizer"):
        scenario_from_dict(data, source="bopro.json")


def test_prior_floor_is_hypermapper_evidence_too():
    """HyperMapper's schema has prior_floor (default 1e-6) as BaCO's does: a shared key."""
    data = json.loads((HM / "synthetic/prior_currinexp/prior_currinexp_scenario.json").read_text())
    data["prior_floor"] = 1e-5
    assert scenario_from_dict(data, source="hm.json").key_handling[0].detail.startswith("HyperMapper 2.0")


def test_a_top_level_constraints_list_is_no_evidence():
    data = json.loads((HM / "synthetic/branin4/branin4_scenario.json").read_text())
    data["constraints"] = ["x1 + x3 <= 12"]
    s = scenario_from_dict(data, source="hm.json")
    assert s.key_handling[0].detail.startswith("HyperMapper 2.0 (only keys both schemas share")
    assert [c.expression for c in s.space.constraints] == ["x1 + x3 <= 12"]


def test_bacos_shared_keys_file_is_read_as_baco_from_the_environment(monkeypatch):
    """BaCO's chakong_haimes_scenario.json has only shared keys; the override key would make it
    invalid for BaCO's schema, the environment variable leaves it as it is."""
    data = json.loads((BACO / "chakong_haimes_scenario.json").read_text())
    assert scenario_from_dict(data, source="ch.json").key_handling[0].detail.startswith("HyperMapper 2.0")
    monkeypatch.setenv("BAYESTUNE_READ_AS", "baco")
    s = scenario_from_dict(data, source="ch.json")
    assert s.key_handling[0].detail.startswith("BaCO (BAYESTUNE_READ_AS=baco)")
    assert "experimental" not in s.strategy_options  # BaCO: no epsilon-greedy steps
    data["bayestune_read_as"] = "hypermapper"  # the file's own word wins
    assert scenario_from_dict(data, source="ch.json").key_handling[0].detail.startswith("HyperMapper 2.0")
    monkeypatch.setenv("BAYESTUNE_READ_AS", "bacoo")
    del data["bayestune_read_as"]
    with pytest.raises(ScenarioError, match="BAYESTUNE_READ_AS must be one of"):
        scenario_from_dict(data, source="ch.json")


def test_a_peer_file_runs_each_configuration_once_unless_asked_otherwise(tmp_path):
    """HyperMapper's branin4 with a black box attached: 6 + 2 configurations cost 8 runs (no
    racing probe, no confirmation), and validate announces none; bayestune_measurement: {} asks
    for bayestune's own policy."""
    from dataclasses import replace

    from bayestune.scenario import BlackBoxSpec
    from bayestune.tuning import tune

    (tmp_path / "bb.py").write_text(
        "def run(cfg):\n"
        f"    open({str(tmp_path / 'calls')!r}, 'a').write('x')\n"
        "    return {'Value': (cfg['x1'] - 1) ** 2 + cfg['x2'] + cfg['x3'] + cfg['x4']}\n"
    )
    data = json.loads((HM / "synthetic/branin4/branin4_scenario.json").read_text())
    data.update(optimization_iterations=2, design_of_experiment={"number_of_samples": 6})
    s = replace(scenario_from_dict(data, source=str(tmp_path / "b.json")), blackbox=BlackBoxSpec("python", "bb.py:run"))
    result = tune(s, tmp_path / "once.db", progress=False)
    assert len(result.optimizer.trials) == 8 and len((tmp_path / "calls").read_text()) == 8
    ours = scenario_from_dict({**data, "bayestune_measurement": {}}, source="b.json")
    assert ours.measurement.races and ours.measurement.confirmation[0] > 0


def test_reversed_integer_bounds_are_swapped_in_a_baco_file_as_baco_does():
    data = json.loads((BACO / "branin4_scenario_integer.json").read_text())
    name = next(k for k, v in data["input_parameters"].items() if v["parameter_type"] == "integer")
    low, high = data["input_parameters"][name]["values"]
    data["input_parameters"][name]["values"] = [high, low]
    p = scenario_from_dict(data, source="int.json").space[name]
    assert (p.low, p.high) == (low, high)
    with pytest.raises(ScenarioError, match="`min < max` must hold"):
        scenario_from_dict({**data, "bayestune_read_as": "hypermapper"}, source="int.json")


def test_each_peers_own_default_needs_no_warning(caplog):
    """normalize_inputs: false is HyperMapper's default (BaCO's is true); allow_duplicate_samples:
    false asks for what bayestune always does."""
    hm = json.loads((HM / "synthetic/branin4/branin4_scenario.json").read_text())
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        scenario_from_dict({**hm, "normalize_inputs": False}, source="hm.json")
        baco = json.loads((BACO / "branin4_scenario_gp.json").read_text())
        s = scenario_from_dict({**baco, "allow_duplicate_samples": False}, source="baco.json")
    assert "normalize_inputs" not in caplog.text and "allow_duplicate_samples" not in caplog.text
    assert {h.key: h.handling for h in s.key_handling}["allow_duplicate_samples"] == "mapped"
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        scenario_from_dict({**baco, "normalize_inputs": False}, source="baco.json")
    assert "normalize_inputs" in caplog.text  # not BaCO's default
