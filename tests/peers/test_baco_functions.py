"""BaCO's own test black boxes (tests/aux/functions.py) on its own test scenarios, run as its
tests/test_all.py runs them with only ``from baco import run`` changed, on small budgets."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest
from peer_programs import BACO_AUX

from bayestune.peers import baco as run  # was: from baco import run

spec = importlib.util.spec_from_file_location("baco_functions", BACO_AUX / "functions.py")
functions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(functions)

CASES = {  # scenario -> BaCO's function for it (test_all.py's crash_test, and the deviation-returning two)
    "branin4_scenario_gp": functions.branin4_function,
    "branin4_scenario_integer": functions.branin4_function,
    "branin4_scenario_feas": functions.branin4_function_feas,
    "branin4_scenario_discrete": functions.branin4_function,
    "rs_cot_1024_scenario": functions.rs_cot_1024,
    "branin4_scenario_pibo": functions.branin4_function,
    "branin4_scenario_pibo_real": functions.branin4_function,
    "perm": functions.perm,
    "harris": functions.harris,
    "branin4_scenario_fixed": functions.branin4_function_stde,
    "base_hartmann6_h": functions.hartmann6_function_h,
    "hartmann6_scenario_gp": functions.hartmann6_function,
    "chakong_haimes_scenario": functions.chakong_haimes,
}


def settings_of(scenario: str, tmp_path, **changes) -> dict:
    """As test_all.py's runBenchmark: the settings read, the files placed, then ``changes``."""
    settings = json.loads((BACO_AUX / f"{scenario}.json").read_text())
    settings["output_data_file"] = str(tmp_path / f"{scenario}.csv")
    settings.update(changes)
    return settings


@pytest.mark.parametrize("scenario", sorted(CASES))
def test_a_baco_test_function_runs_on_its_scenario(scenario, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = settings_of(scenario, tmp_path, optimization_iterations=2)
    settings["design_of_experiment"] = {**settings.get("design_of_experiment", {}), "number_of_samples": 4}
    run.optimize(settings, CASES[scenario])
    rows = list(csv.DictReader(open(settings["output_data_file"])))
    assert len(rows) == 6
    header = list(rows[0])
    assert header[: len(settings["input_parameters"])] == list(settings["input_parameters"])
    assert "timestamp" in header
    if settings.get("GP_model") in ("botorch_fixed", "botorch_heteroskedastic"):
        assert header[-1] == "std_estimate" and header[-2] == "timestamp"  # BaCO writes it last
        assert {r["std_estimate"] for r in rows} == {"1.0" if scenario == "branin4_scenario_fixed" else "0.01"}


def test_resume_continues_bacos_own_csv_and_counts_it_against_the_iterations(tmp_path, monkeypatch):
    """branin4_scenario_resume.json with its branin4_resume.csv (16 rows): BaCO ends at
    number_of_samples + optimization_iterations = 10 + 15, so 9 new evaluations."""
    monkeypatch.chdir(tmp_path)
    settings = settings_of("branin4_scenario_resume", tmp_path)
    settings["resume_optimization_file"] = str(BACO_AUX / settings["resume_optimization_file"])
    calls = []
    run.optimize(settings, lambda x: calls.append(x) or functions.branin4_function(x))
    rows = list(csv.DictReader(open(settings["output_data_file"])))
    assert len(calls) == 9 and len(rows) == 16 + 9
    first = next(csv.DictReader(open(settings["resume_optimization_file"])))
    assert rows[0]["Value"] == first["Value"]  # the resumed rows come first, as BaCO writes them


def test_a_malformed_answer_stops_with_one_line(tmp_path, monkeypatch):
    from bayestune.exceptions import EvaluationError

    monkeypatch.chdir(tmp_path)
    settings = settings_of("branin4_scenario_feas", tmp_path, optimization_iterations=1)
    with pytest.raises(EvaluationError, match="should return the metric 'Valid' but did not"):
        run.optimize(settings, lambda x: {"Value": 1.0})
    with pytest.raises(EvaluationError, match="should return 2 metrics"):
        run.optimize(settings, lambda x: (1.0,))
