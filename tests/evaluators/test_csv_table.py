"""A CSV table of recorded outputs as the black box (HyperMapper's exhaustive_search_file)."""

from __future__ import annotations

import pytest

from bayestune.evaluators.csv_table import CsvTableEvaluator, cell_key
from bayestune.exceptions import EvaluationError
from bayestune.trial import FailureKind, TrialStatus

TABLE = """B,OP,x1873,ALMs,DSPs,Cycles,Valid
96,1,false,1000,3,5e6,true
192,1,false,2000,3,2.5e6,true
192,2,true,,3,,false
"""


def table(tmp_path, text=TABLE):
    path = tmp_path / "table.csv"
    path.write_text(text)
    return path


def evaluator(tmp_path, text=TABLE, feasible="Valid"):
    return CsvTableEvaluator(
        table(tmp_path, text), ["ALMs", "Cycles"], parameter_names=["B", "OP", "x1873"], feasible_column=feasible
    )


def test_a_configuration_gets_its_rows_outputs_matched_by_value(tmp_path):
    ev = evaluator(tmp_path)
    assert ev.deterministic and len(ev.rows) == 3
    result = ev({"B": 192.0, "OP": 1, "x1873": "false"})  # 192.0 finds the row written 192
    assert result.status is TrialStatus.OK and result.values == {"ALMs": 2000.0, "Cycles": 2.5e6}
    infeasible = ev({"B": 192, "OP": 2, "x1873": "true"})  # an invalid row may leave its outputs empty
    assert infeasible.status is TrialStatus.INFEASIBLE and infeasible.values == {}


def test_a_configuration_the_table_lacks_is_an_invalid_failure(tmp_path):
    result = evaluator(tmp_path)({"B": 288, "OP": 1, "x1873": "false"})
    assert result.status is TrialStatus.FAILED and result.kind == FailureKind.INVALID
    assert "no row" in result.error


def test_without_a_feasible_column_a_feasible_row_must_have_numbers(tmp_path):
    ev = evaluator(tmp_path, feasible=None)
    missing = ev({"B": 192, "OP": 2, "x1873": "true"})
    assert missing.status is TrialStatus.FAILED and missing.kind == FailureKind.PARSE and "ALMs = ''" in missing.error


def test_cells_and_values_meet_on_one_key():
    assert cell_key("96") == cell_key(96) == cell_key(9.6e1) == cell_key(" 96.0 ")
    assert cell_key("(0, 2, 1)") == cell_key((0, 2, 1)) and cell_key("false") == cell_key(False)
    assert cell_key("fast") == "fast" and cell_key("nan") == "nan"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("B,OP,x1873,ALMs,Valid\n96,1,false,3,true\n", "lacks the column(s) ['Cycles']"),
        ("B,OP,x1873,ALMs,Cycles,Valid\n96,1,false,3\n", "line 2: 4 cell(s), but the header has 6"),
        ("B,OP,x1873,ALMs,Cycles,Valid\n", "has no rows"),
        ("B,OP,x1873,ALMs,Cycles,Valid\n96,1,false,3,4,maybe\n", "neither true nor false"),
        (
            "B,OP,x1873,ALMs,Cycles,Valid\n96,1,false,3,4,true\n96.0,1,false,3,5,true\n",
            "line 3: the configuration {'B': 96.0, 'OP': 1.0, 'x1873': 'false'} is already in the table with other outputs",
        ),
    ],
)
def test_a_bad_table_is_a_clear_error(tmp_path, text, fragment):
    with pytest.raises(EvaluationError) as info:
        evaluator(tmp_path, text)
    assert fragment in str(info.value)


def test_a_missing_table_names_its_path(tmp_path):
    with pytest.raises(EvaluationError, match="does not exist"):
        CsvTableEvaluator(tmp_path / "none.csv", ["v"], parameter_names=["x"])


def test_a_native_scenarios_table_black_box_is_taken_from_its_directory(tmp_path):
    import json

    from bayestune.measurement.build import make_evaluator
    from bayestune.scenario import load_scenario

    (tmp_path / "runs").mkdir()
    table(tmp_path / "runs")
    scenario = {
        "name": "t",
        "budget": 3,
        "objectives": ["ALMs", "Cycles"],
        "feasible_output": "Valid",
        "parameters": [
            {"name": "B", "type": "ordinal", "values": [96, 192]},
            {"name": "OP", "type": "ordinal", "values": [1, 2]},
            {"name": "x1873", "type": "categorical", "values": ["false", "true"]},
        ],
        "blackbox": {"table": "table.csv"},
    }
    (tmp_path / "runs" / "s.json").write_text(json.dumps(scenario))
    with make_evaluator(load_scenario(tmp_path / "runs" / "s.json")) as ev:
        assert ev({"B": 96, "OP": 1, "x1873": "false"}).values == {"ALMs": 1000.0, "Cycles": 5e6}
