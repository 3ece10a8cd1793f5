"""HyperMapper 2.0's example programs run unchanged but for their import line."""

from __future__ import annotations

import csv
import json

import pytest
from peer_programs import copy_hypermapper_tree, run_program

PROGRAMS = {  # program -> (its sample CSV, the objectives, the rows of a 4 + 2 x batch budget)
    "quick_start/branin.py": ("branin_output_samples.csv", ["Value"], 6),
    "synthetic/batch_branin/batch_branin.py": ("batch_branin_output_samples.csv", ["Value"], 8),
    "synthetic/branin4/branin4.py": ("branin4_output_samples.csv", ["Value"], 6),
    "synthetic/chakong_haimes/chakong_haimes.py": ("chakong_haimes_output_samples.csv", ["f1_value", "f2_value"], 6),
    "synthetic/currinexp/currinexp.py": ("currinexp_output_samples.csv", ["Value"], 6),
    "synthetic/dtlz1/dtlz1.py": ("dtlz1_output_samples.csv", None, 6),
    "synthetic/multiobjective_branin/multiobjective_branin.py": (
        "multiobjective_branin_output_samples.csv",
        ["Value", "Energy"],
        6,
    ),
    "synthetic/ordinal_multiobjective_branin/ordinal_multiobjective_branin.py": (
        "ordinal_branin_output_samples.csv",
        ["Value", "Energy"],
        6,
    ),
    "synthetic/prior_currinexp/prior_currinexp.py": ("prior_currinexp_output_samples.csv", ["Value"], 6),
}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_hypermapper_example_runs_with_its_import_line_changed(program, tmp_path, monkeypatch, capsys):
    root = copy_hypermapper_tree(tmp_path, optimization_iterations=2, design_of_experiment={"number_of_samples": 4})
    monkeypatch.chdir(root)
    run_program(root / "example_scenarios" / program)
    samples, objectives, n = PROGRAMS[program]
    rows = list(csv.DictReader((root / samples).open()))
    assert len(rows) == n
    if objectives:
        assert all(rows[0][o] for o in objectives)
    assert "End of" in capsys.readouterr().out  # the program went on after optimize() returned


def test_resume_runs_all_of_hypermappers_iterations_again(tmp_path, monkeypatch):
    """HyperMapper's bo.py after a resume: the design topped up to number_of_samples, then every
    optimization iteration again (16 resumed rows, 10 + 20: 20 new), where BaCO stops at 10 + 20."""
    from peer_programs import BACO_AUX

    from bayestune.peers import hypermapper as optimizer

    root = copy_hypermapper_tree(tmp_path, optimization_iterations=20, resume_optimization=True)
    monkeypatch.chdir(root)
    scenario = root / "example_scenarios/synthetic/branin4/branin4_scenario.json"
    data = json.loads(scenario.read_text())
    data["resume_optimization_data"] = str(BACO_AUX / "branin4_resume.csv")
    scenario.write_text(json.dumps(data))
    calls = []
    optimizer.optimize(str(scenario), lambda x: calls.append(x) or sum(x.values()))
    assert len(calls) == 20
    assert len(list(csv.DictReader((root / "branin4_output_samples.csv").open()))) == 16 + 20


def test_batch_mode_passes_a_dict_of_lists(tmp_path, monkeypatch):
    root = copy_hypermapper_tree(tmp_path, optimization_iterations=3)
    monkeypatch.chdir(root)
    from bayestune.peers import hypermapper as optimizer

    seen = []

    def black_box(x):
        seen.append({k: (len(v) if isinstance(v, list) else None) for k, v in x.items()})
        return [a + b for a, b in zip(x["x1"], x["x2"])]

    optimizer.optimize("example_scenarios/synthetic/batch_branin/batch_branin_scenario.json", black_box)
    assert seen and all(s == {"x1": 2, "x2": 2} for s in seen)  # 10 design points in pairs, then 3 x 2
    assert len(seen) == 5 + 3


def test_the_feasibility_flag_is_written_and_read_in_the_files_words(tmp_path, monkeypatch):
    """chakong_haimes with true_value 'ok' / false_value 'bad' (a one-key variant): HyperMapper
    writes those words and reads nothing else back."""
    from bayestune.exceptions import JournalError

    root = copy_hypermapper_tree(tmp_path, optimization_iterations=2)
    monkeypatch.chdir(root)
    scenario = root / "example_scenarios/synthetic/chakong_haimes/chakong_haimes_scenario.json"
    data = json.loads(scenario.read_text())
    data["feasible_output"].update(true_value="ok", false_value="bad")
    scenario.write_text(json.dumps(data))
    program = root / "example_scenarios/synthetic/chakong_haimes/chakong_haimes.py"
    run_program(program)
    samples = root / "chakong_haimes_output_samples.csv"
    rows = list(csv.DictReader(samples.open()))
    assert {r["Valid"] for r in rows} <= {"ok", "bad"} and len(rows) == 20 + 2
    data.update(resume_optimization=True, resume_optimization_data=str(samples), optimization_iterations=3)
    scenario.write_text(json.dumps(data))
    run_program(program)  # its own words read back: 22 resumed rows, then 3 more iterations
    assert len(list(csv.DictReader(samples.open()))) == 22 + 3
    text = samples.read_text().replace(",ok,", ",True,", 1)
    samples.write_text(text)
    with pytest.raises(JournalError, match="expected 'ok' or 'bad', as the scenario declares"):
        run_program(program)


def test_exhaustive_mode_answers_from_the_table_without_a_black_box(tmp_path, monkeypatch):
    from bayestune.exceptions import BayestuneError
    from bayestune.peers import hypermapper as optimizer

    monkeypatch.chdir(tmp_path)
    rows = ["x1,x2,Value"] + [f"{a},{b},{(a - 3) ** 2 + b}" for a in range(8) for b in range(4)]
    (tmp_path / "all.csv").write_text("\n".join(rows) + "\n")
    scenario = {
        "application_name": "table",
        "optimization_objectives": ["Value"],
        "optimization_iterations": 4,
        "design_of_experiment": {"number_of_samples": 5},
        "hypermapper_mode": {"mode": "exhaustive", "exhaustive_search_file": "all.csv"},
        "input_parameters": {
            "x1": {"parameter_type": "integer", "values": [0, 7]},
            "x2": {"parameter_type": "integer", "values": [0, 3]},
        },
    }
    (tmp_path / "table.json").write_text(json.dumps(scenario))
    optimizer.optimize("table.json")
    assert len(list(csv.DictReader((tmp_path / "table_output_samples.csv").open()))) == 9
    (tmp_path / "default.json").write_text(json.dumps({**scenario, "hypermapper_mode": {"mode": "default"}}))
    with pytest.raises(BayestuneError, match="a black box function is required in default mode"):
        optimizer.optimize("default.json")
    with pytest.raises(BayestuneError, match="must be a .json file"):
        optimizer.optimize("table.yaml")
