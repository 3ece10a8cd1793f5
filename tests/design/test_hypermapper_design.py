"""HyperMapper 2.0's designs: random sampling drawn from the priors with the default-or-random
point first, and the grid, on HyperMapper's own example files and one-key variants."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from bayestune.design import initial_design
from bayestune.design.hypermapper import grid_rows
from bayestune.history import History
from bayestune.scenario import scenario_from_dict

HM = Path(__file__).parents[1] / "data" / "peers" / "hypermapper-3dfa8a7" / "example_scenarios"


def hm_file(rel: str, **changes) -> dict:
    data = json.loads((HM / rel).read_text())
    data.update(changes)
    return data


def design_of(data: dict, seed: int = 0, n: int | None = None) -> tuple:
    s = scenario_from_dict(data, source="hm.json")
    history = History.empty(s.space, list(s.objectives))
    X = initial_design(s.space, n or s.design.size, np.random.default_rng(seed), history, s.design.method)
    return s, s.space.columns(X)


def test_an_ordinal_prior_shapes_the_design_as_in_hypermapper():
    """The issue's case: prior [0.9, 0.05, 0.05] over a 40-point design (HyperMapper about
    36/2/2; a uniform design 14/13/13)."""
    data = hm_file("synthetic/branin4/branin4_scenario.json", design_of_experiment={"number_of_samples": 40})
    data["input_parameters"]["x3"] = {"parameter_type": "ordinal", "values": [-5, 0, 10], "prior": [0.9, 0.05, 0.05]}
    s, cols = design_of(data)
    assert s.design.method == "hypermapper" and s.design.size == 40
    counts = Counter(cols["x3"].tolist())
    assert counts[-5] >= 30 and counts[0] + counts[10] <= 10


def test_prior_currinexp_draws_its_reals_from_the_named_beta_shapes():
    """HyperMapper's prior_currinexp example: x1 'decay' Beta(0.8, 1), x2 'exponential' Beta(1, 0.8)."""
    s, cols = design_of(hm_file("synthetic/prior_currinexp/prior_currinexp_scenario.json"), n=600)
    assert s.design.method == "hypermapper"
    assert abs(np.mean(cols["x1"]) - 0.8 / 1.8) < 0.03  # uniform would be 0.5
    assert abs(np.mean(cols["x2"]) - 1 / 1.8) < 0.03


def test_baco_keeps_a_uniform_design():
    data = hm_file("synthetic/branin4/branin4_scenario.json", bayestune_read_as="baco")
    data["input_parameters"]["x3"] = {"parameter_type": "ordinal", "values": [-5, 0, 10], "prior": [0.9, 0.05, 0.05]}
    s, _ = design_of(data)
    assert s.design.method == "cot"


def test_some_defaults_missing_opens_with_the_default_or_random_point():
    """HyperMapper's get_default_or_random_configuration: the given defaults, the rest drawn."""
    data = hm_file("synthetic/branin4/branin4_scenario.json")
    del data["input_parameters"]["x2"]["parameter_default"]
    for seed in range(3):
        s, cols = design_of(data, seed=seed)
        assert not s.design.include_default
        first = {k: v[0] for k, v in cols.items()}
        assert first["x1"] == 0 and first["x3"] == 0 and first["x4"] == 0 and 0 <= first["x2"] <= 15
        assert not np.all(cols["x1"][1:] == 0)  # only the first point is the defaults


def test_grid_search_is_every_grid_point_and_no_iterations():
    """HyperMapper evaluates the whole grid (a real at np.linspace(min, max, 10)) and sets the
    optimization iterations to 0."""
    data = hm_file(
        "synthetic/ordinal_multiobjective_branin/ordinal_multiobjective_branin_scenario.json",
        design_of_experiment={"doe_type": "grid_search", "number_of_samples": 5},
    )
    s = scenario_from_dict(data, source="hm.json")
    assert s.design.method == "grid" and s.design.size == 16 * 16 and s.budget == 16 * 16
    cols = s.space.columns(grid_rows(s.space))
    assert cols["x1"][:16].tolist() == [-5] * 16 and cols["x2"][:16].tolist() == list(range(16))  # product order
    branin = hm_file("quick_start/branin_scenario.json", design_of_experiment={"doe_type": "grid_search"})
    assert scenario_from_dict(branin, source="hm.json").budget == 100  # 10 x 10 reals; the default (0, 0) is on them
    branin["input_parameters"]["x1"]["parameter_default"] = 1
    s = scenario_from_dict(branin, source="hm.json")
    assert s.budget == 100 + 1  # a default off the grid is evaluated first, as in HyperMapper
    assert "no iterations" in {h.key: h.detail for h in s.key_handling}["design_of_experiment.doe_type"]
