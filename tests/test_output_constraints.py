"""Output constraints: conditions on measured outputs that turn a result infeasible,
through the optimizer, the journal and the scenario loader; and HyperMapper's multi-objective
BO mapped onto ``parego``."""

from __future__ import annotations

import json

import pytest

from bayestune.exceptions import ScenarioError
from bayestune.objectives import OutputConstraint
from bayestune.optimizer import Optimizer
from bayestune.scenario import load_scenario, scenario_from_dict, scenario_to_dict
from bayestune.space import Integer, Space
from bayestune.storage import Journal
from bayestune.trial import TrialStatus


def fpga(cfg):
    return {"cycles": 1000.0 / cfg["par"], "logic": 15.0 * cfg["par"], "bram": 3.0}


def test_output_constraint_holds_and_names_its_outputs():
    c = OutputConstraint("logic <= 100 and log(cycles) < 7")
    assert c.outputs == ("cycles", "logic")
    assert c.holds({"logic": 90.0, "cycles": 10.0})
    assert not c.holds({"logic": 101.0, "cycles": 10.0})
    with pytest.raises(KeyError, match="logic"):
        c.holds({"cycles": 1.0})
    for bad in ("logic <=", "__import__('os')", ""):
        with pytest.raises(ScenarioError):
            OutputConstraint(bad)


def test_optimizer_marks_breaking_results_infeasible_and_keeps_values(tmp_path):
    space = Space([Integer("par", 1, 12)])
    with Journal(tmp_path / "j.db") as journal:
        opt = Optimizer(
            space,
            objectives=["cycles", "logic"],
            strategy="random",
            seed=0,
            journal=journal,
            output_constraints=["logic <= 100"],
        )
        opt.optimize(fpga, 12)
        trials = journal.trials()
    assert len(trials) == 12
    for t in trials:
        if t.config["par"] * 15 <= 100:
            assert t.status is TrialStatus.OK
        else:
            assert t.status is TrialStatus.INFEASIBLE and t.failure_kind == "output_constraint"
            assert t.values["logic"] == 15.0 * t.config["par"]  # measured values are kept
    assert opt.n_failed == sum(t.config["par"] > 6 for t in trials)
    best = opt.best
    assert best is not None and best.config["par"] == 6


def test_missing_output_is_a_parse_failure():
    opt = Optimizer(
        Space([Integer("par", 1, 4)]),
        objectives=["cycles"],
        strategy="random",
        seed=0,
        output_constraints=["power < 5"],
    )
    cfg = opt.ask()[0]
    trial = opt.tell(cfg, {"cycles": 3.0})
    assert trial.status is TrialStatus.FAILED and trial.failure_kind == "parse" and "power" in trial.error


def native(**extra):
    return {
        "parameters": [{"name": "par", "type": "integer", "bounds": [1, 12]}],
        "objectives": ["cycles", "logic"],
        "strategy": "parego",
        **extra,
    }


def test_scenario_round_trip_and_errors(tmp_path):
    s = scenario_from_dict(native(output_constraints=["logic <= 100", "bram < 10"]))
    assert s.output_constraints == ("logic <= 100", "bram < 10")
    assert scenario_to_dict(s)["output_constraints"] == ["logic <= 100", "bram < 10"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(native(output_constraints=["logic <= 100"])))
    opt = Optimizer.from_scenario(load_scenario(path))
    assert [c.expression for c in opt.output_constraints] == ["logic <= 100"]
    with pytest.raises(ScenarioError, match=r"output_constraints\[0\]"):
        scenario_from_dict(native(output_constraints=["logic <="]))
    with pytest.raises(ScenarioError, match="parameter"):
        scenario_from_dict(native(output_constraints=["par < 3"]))
    with pytest.raises(ScenarioError, match="output_constraints"):
        scenario_from_dict(native(output_constraints="logic <= 100"))


def test_hypermapper_multi_objective_bo_runs_parego():
    hm = {
        "application_name": "spatial",
        "optimization_objectives": ["cycles", "logic"],
        "input_parameters": {"par": {"parameter_type": "integer", "values": [1, 12]}},
    }
    assert scenario_from_dict(hm).strategy == "parego"
    single = dict(hm, optimization_objectives=["cycles"])
    assert scenario_from_dict(single).strategy == "bo"


def test_several_objectives_default_to_parego():
    s = scenario_from_dict(
        {"parameters": [{"name": "par", "type": "integer", "bounds": [1, 12]}], "objectives": ["cycles", "logic"]}
    )
    assert s.strategy == "parego"
    assert (
        scenario_from_dict(
            {"parameters": [{"name": "par", "type": "integer", "bounds": [1, 12]}], "objectives": ["cycles"]}
        ).strategy
        == "bo"
    )
    assert Optimizer(Space([Integer("par", 1, 4)]), objectives=["a", "b"]).strategy.name == "parego"
    assert Optimizer(Space([Integer("par", 1, 4)]), objectives=["a"]).strategy.name == "bo"
