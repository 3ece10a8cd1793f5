"""HyperMapper 2.0's example programs run unchanged but for their import line."""

from __future__ import annotations

import csv
import time

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
    started = time.monotonic()
    run_program(root / "example_scenarios" / program)
    assert time.monotonic() - started < 5
    samples, objectives, n = PROGRAMS[program]
    rows = list(csv.DictReader((root / samples).open()))
    assert len(rows) == n
    if objectives:
        assert all(rows[0][o] for o in objectives)
    assert "End of" in capsys.readouterr().out  # the program went on after optimize() returned
