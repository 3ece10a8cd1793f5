"""HyperMapper 2 / BaCO sample files: layout, round trips, warm-start rows and error messages."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from bayestune.exceptions import JournalError
from bayestune.space.parameters import Categorical, Integer, Ordinal, Permutation, Real
from bayestune.storage import Journal, export_csv, import_csv
from bayestune.trial import Result, Trial, TrialStatus

PARAMETERS = [
    Real("x", 0.0, 10.0),
    Integer("n", 1, 64),
    Ordinal("tile", [1, 2, 4, 8]),
    Categorical("vec", ["none", "sse", "avx2"]),
    Categorical("fast_math", [True, False]),
    Permutation("order", 3),
]
NAMES = [p.name for p in PARAMETERS]
CONFIG = {"x": 0.1, "n": 3, "tile": 4, "vec": "avx2", "fast_math": True, "order": (1, 2, 0)}


def _trial(tid: int, status: TrialStatus, values=None, error=None, kind=None, **config) -> Trial:
    return Trial(
        trial_id=tid,
        config={**CONFIG, **config},
        status=status,
        values=values or {},
        error=error,
        failure_kind=kind,
        started_at=1000.0 + tid,
        finished_at=1000.5 + tid,
    )


TRIALS = [
    _trial(1, TrialStatus.OK, {"runtime": 1.25, "energy": 3.0, "cache_misses": 17.0}),
    _trial(2, TrialStatus.INFEASIBLE, {"runtime": 4.5, "energy": 2.0}, order=[0, 1, 2], vec="none"),
    _trial(3, TrialStatus.FAILED, {}, error="timeout after 60 s", kind="timeout", fast_math=False, x=9.75),
    Trial(trial_id=4, config=CONFIG, status=TrialStatus.PENDING, started_at=1010.0),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


# ---- export -------------------------------------------------------------------------------
def test_export_uses_the_hypermapper_column_layout(tmp_path: Path) -> None:
    out = tmp_path / "gemm_output_samples.csv"
    export_csv(TRIALS, out, parameter_names=NAMES, objectives=["runtime", "energy"])
    rows = _rows(out)
    assert rows[0] == [*NAMES, "runtime", "energy", "Valid", "Timestamp", "cache_misses"]
    assert len(rows) == 4  # the pending trial is not exported
    ok, infeasible, failed = rows[1:]
    assert ok == ["0.1", "3", "4", "avx2", "True", "(1, 2, 0)", "1.25", "3.0", "True", "500", "17.0"]
    assert infeasible[5] == "(0, 1, 2)" and infeasible[6:9] == ["4.5", "2.0", "False"]
    assert failed[6:9] == ["", "", "False"]
    assert [r[9] for r in rows[1:]] == ["500", "1500", "2500"]  # ms since the first start
    assert '"(1, 2, 0)"' in out.read_text()  # the comma-carrying cell is quoted
    assert not (tmp_path / "gemm_output_samples.csv.tmp").exists()


def test_export_strict_layout_and_options(tmp_path: Path) -> None:
    out = tmp_path / "samples.csv"
    export_csv(
        TRIALS,
        out,
        parameter_names=NAMES,
        objectives=["runtime"],
        feasible_column=None,
        timestamp_column="timestamp",
        metrics=(),
        error_column="error",
        start_time=1001.0,
    )
    rows = _rows(out)
    assert rows[0] == [*NAMES, "runtime", "timestamp", "error"]
    assert [r[-2:] for r in rows[1:]] == [["500", ""], ["1500", ""], ["2500", "timeout after 60 s"]]


def test_export_rejects_duplicate_columns_and_missing_parameters(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match=r"\['x'\].*twice"):
        export_csv(TRIALS, tmp_path / "a.csv", parameter_names=NAMES, objectives=["x"])
    with pytest.raises(JournalError, match="trial 1 has no value for parameter 'depth'"):
        export_csv(TRIALS, tmp_path / "b.csv", parameter_names=[*NAMES, "depth"], objectives=["runtime"])


# ---- round trip ---------------------------------------------------------------------------
def test_round_trip_keeps_statuses_permutations_and_metrics(tmp_path: Path) -> None:
    out = tmp_path / "samples.csv"
    export_csv(TRIALS, out, parameter_names=NAMES, objectives=["runtime", "energy"], error_column="error")
    pairs = import_csv(out, parameters=PARAMETERS, objectives=["runtime", "energy"], error_column="error")
    assert len(pairs) == 3
    (c_ok, r_ok), (c_inf, r_inf), (c_fail, r_fail) = pairs
    assert c_ok == CONFIG and isinstance(c_ok["order"], tuple) and c_ok["fast_math"] is True
    assert r_ok == Result(values={"runtime": 1.25, "energy": 3.0, "cache_misses": 17.0})
    assert c_inf["order"] == (0, 1, 2) and c_inf["vec"] == "none"
    assert r_inf.status is TrialStatus.INFEASIBLE and r_inf.values == {"runtime": 4.5, "energy": 2.0}
    assert c_fail["fast_math"] is False and c_fail["x"] == 9.75
    assert r_fail.status is TrialStatus.FAILED and r_fail.error == "timeout after 60 s"


def test_round_trip_without_error_column_still_keeps_failures(tmp_path: Path) -> None:
    out = tmp_path / "samples.csv"
    export_csv(TRIALS, out, parameter_names=NAMES, objectives=["runtime"])
    _, failed = import_csv(out, parameters=PARAMETERS, objectives=["runtime"])[2]
    assert failed.status is TrialStatus.FAILED and failed.kind == "missing"
    assert "objective 'runtime' is empty" in failed.error and "line 4" in failed.error


def test_journal_wrappers_import_atomically_and_export_without_lost_rows(tmp_path: Path) -> None:
    out = tmp_path / "samples.csv"
    export_csv(TRIALS, out, parameter_names=NAMES, objectives=["runtime", "energy"])
    with Journal(tmp_path / "run.db") as j:
        imported = j.import_csv(out, parameters=PARAMETERS, objectives=["runtime", "energy"])
        assert [t.status for t in imported] == [TrialStatus.OK, TrialStatus.INFEASIBLE, TrialStatus.FAILED]
        assert all(t.origin == "imported" for t in imported)
        assert any(
            t.config == {k: list(v) if isinstance(v, tuple) else v for k, v in CONFIG.items()} for t in j.trials()
        )

        bad = _write(
            tmp_path / "bad.csv",
            out.read_text()
            + '0.5,3,4,sse,True,"(0, 1, 2)",1,1,True,0,\n'
            + '0.5,3,5,sse,True,"(0, 1, 2)",1,1,True,0,\n',
        )
        with pytest.raises(JournalError, match="line 6"):
            j.import_csv(bad, parameters=PARAMETERS, objectives=["runtime", "energy"])
        assert len(j.trials()) == 3  # nothing of the bad file was recorded

        j.start({**CONFIG, "n": 5})
        j.abandon_pending()
        again = tmp_path / "again.csv"
        j.export_csv(again, parameter_names=NAMES, objectives=["runtime", "energy"])
        assert len(_rows(again)) == 4  # header + 3: the lost row is not evidence


# ---- HyperMapper / BaCO files -------------------------------------------------------------
def test_hypermapper_file_with_valid_and_timestamp(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "chakong_haimes_output_samples.csv",
        "x1,x2,f1_value,f2_value,Valid,Timestamp\n"
        "0.0,0.0,7.0,-1.0,False,1613567686129\n"
        "-11.29,-0.25,180.27,-103.2,True,1613567686129\n"
        "1.5,2.5,timeout,,false,1613567687000\n",
    )
    params = [Real("x1", -20.0, 20.0), Real("x2", -20.0, 20.0)]
    pairs = import_csv(f, parameters=params, objectives=["f1_value", "f2_value"])
    (c0, r0), (c1, r1), (c2, r2) = pairs
    assert c0 == {"x1": 0.0, "x2": 0.0} and r0.status is TrialStatus.INFEASIBLE
    assert r0.values == {"f1_value": 7.0, "f2_value": -1.0}  # the Timestamp is not a metric
    assert c1 == {"x1": -11.29, "x2": -0.25} and r1.status is TrialStatus.OK
    assert r2.status is TrialStatus.FAILED and r2.kind == "parse"
    assert "'timeout'" in r2.error and "'f2_value' is empty" in r2.error


def test_baco_lowercase_timestamp_and_no_feasibility_column(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "branin_output_samples.csv", "x1,x2,Value,timestamp\n0.07,0.91,4.02,6950\n0.08,0.08,nan,6950\n"
    )
    params = [Real("x1", 0.0, 1.0), Real("x2", 0.0, 1.0)]
    with pytest.raises(JournalError, match=r"missing required column\(s\) \['Valid'\].*feasible_column=None"):
        import_csv(f, parameters=params, objectives=["Value"])
    (_, ok), (_, nan) = import_csv(f, parameters=params, objectives=["Value"], feasible_column=None)
    assert ok == Result(values={"Value": 4.02})
    assert nan.status is TrialStatus.FAILED and nan.kind == "nan"


def test_extra_columns_numeric_kept_text_ignored(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "s.csv",
        "n,runtime,Valid,Timestamp,power,host,note\n3,1.0,True,10,45.5,node1,ok\n4,2.0,True,20,,node2,7\n",
    )
    (c, r), (_, r2) = import_csv(f, parameters=[Integer("n", 1, 8)], objectives=["runtime"])
    assert c == {"n": 3}
    assert r.values == {"runtime": 1.0, "power": 45.5}
    assert r2.values == {"runtime": 2.0}


def test_cells_are_converted_per_parameter_kind(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "s.csv",
        "x,n,tile,vec,fast_math,order,runtime,Valid\n"
        '1e-1,3.0,4.0,sse,False,"[2, 0, 1]",1.0,1\n'
        " 2 , 5 ,8, none ,True,2;0;1,1.0,yes\n",
    )
    with pytest.raises(JournalError, match=r"line 3, column 'order', value '2;0;1'"):
        import_csv(f, parameters=PARAMETERS, objectives=["runtime"])
    f.write_text(f.read_text().replace("2;0;1", '"(0, 2, 1)"'))
    (c1, r1), (c2, _) = import_csv(f, parameters=PARAMETERS, objectives=["runtime"])
    assert c1 == {"x": 0.1, "n": 3, "tile": 4, "vec": "sse", "fast_math": False, "order": (2, 0, 1)}
    assert isinstance(c1["n"], int) and r1.status is TrialStatus.OK
    assert c2 == {"x": 2.0, "n": 5, "tile": 8, "vec": "none", "fast_math": True, "order": (0, 2, 1)}


# ---- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad_row", "column", "reason"),
    [
        ('abc,3,4,sse,True,"(0, 1, 2)",1,True', "x", "expected a number"),
        ('0.5,3.5,4,sse,True,"(0, 1, 2)",1,True', "n", "expected an integer"),
        ('0.5,99,4,sse,True,"(0, 1, 2)",1,True', "n", "<= 64"),
        ('0.5,3,3,sse,True,"(0, 1, 2)",1,True', "tile", "must be one of"),
        ('0.5,3,4,avx512,True,"(0, 1, 2)",1,True', "vec", "must be one of"),
        ('0.5,3,4,sse,True,"(0, 1, 1)",1,True', "order", "permutation of 0..2"),
        ('0.5,,4,sse,True,"(0, 1, 2)",1,True', "n", "empty cell"),
        ('0.5,3,4,sse,True,"(0, 1, 2)",1,maybe', "Valid", "expected True or False"),
    ],
)
def test_bad_cells_name_file_line_column_and_value(tmp_path: Path, bad_row: str, column: str, reason: str) -> None:
    f = _write(
        tmp_path / "in.csv",
        "x,n,tile,vec,fast_math,order,runtime,Valid\n"
        '0.5,3,4,sse,True,"(0, 1, 2)",1,True\n'
        "\n"  # blank lines are skipped but still counted
        f"{bad_row}\n",
    )
    with pytest.raises(JournalError) as info:
        import_csv(f, parameters=PARAMETERS, objectives=["runtime"])
    message = str(info.value)
    assert str(f) in message and "line 4" in message and f"column {column!r}" in message
    assert reason in message


def test_missing_columns_are_listed_with_the_header(tmp_path: Path) -> None:
    f = _write(tmp_path / "in.csv", "x,tile,runtime,Valid\n0.5,4,1.0,True\n")
    with pytest.raises(JournalError) as info:
        import_csv(f, parameters=PARAMETERS, objectives=["runtime", "energy"])
    message = str(info.value)
    assert "['n', 'vec', 'fast_math', 'order', 'energy']" in message
    assert "['x', 'tile', 'runtime', 'Valid']" in message and "feasible_column=None" not in message


def test_ragged_rows_missing_and_empty_files(tmp_path: Path) -> None:
    f = _write(tmp_path / "ragged.csv", "n,runtime,Valid\n3,1.0,True\n4,2.0\n")
    with pytest.raises(JournalError, match=r"ragged.csv, line 3: the row has 2 cell\(s\)"):
        import_csv(f, parameters=[Integer("n", 1, 8)], objectives=["runtime"])
    with pytest.raises(JournalError, match="does not exist"):
        import_csv(tmp_path / "nope.csv", parameters=[Integer("n", 1, 8)], objectives=["runtime"])
    with pytest.raises(JournalError, match="empty"):
        import_csv(_write(tmp_path / "empty.csv", ""), parameters=[Integer("n", 1, 8)], objectives=["runtime"])


def test_header_only_file_imports_nothing(tmp_path: Path) -> None:
    f = _write(tmp_path / "h.csv", "n,runtime,Valid,Timestamp\n")
    assert import_csv(f, parameters=[Integer("n", 1, 8)], objectives=["runtime"]) == []


def test_nan_objective_in_export_becomes_empty_cell(tmp_path: Path) -> None:
    trial = _trial(1, TrialStatus.INFEASIBLE, {"runtime": math.nan})
    out = tmp_path / "s.csv"
    export_csv([trial], out, parameter_names=NAMES, objectives=["runtime"])
    assert _rows(out)[1][6:8] == ["", "False"]
    ((_, result),) = import_csv(out, parameters=PARAMETERS, objectives=["runtime"])
    assert result.status is TrialStatus.FAILED and result.kind == "missing"


def test_peer_samples_write_the_peers_header_and_resume_reads_it_back(tmp_path):
    from bayestune.optimizer import Optimizer
    from bayestune.space import Integer, Space
    from bayestune.storage.csv_io import PeerSamples

    space = Space([Integer("a", 0, 9)])
    opt = Optimizer(space, strategy="random", seed=0)
    opt.optimize(lambda c: {"t": float(c["a"]), "Valid": c["a"] != 3}, 5)
    samples = PeerSamples(
        str(tmp_path / "app_output_samples.csv"),
        ("a",),
        ("t",),
        "Valid",
        "timestamp",
        resume_from=str(tmp_path / "app_output_samples.csv"),
    )
    path = samples.write(opt.trials)
    lines = path.read_text().splitlines()
    assert lines[0] == "a,t,Valid,timestamp" and len(lines) == 6  # BaCO's header: no extra columns
    back = samples.resumed(space.parameters)
    assert [c["a"] for c, _ in back] == [t.config["a"] for t in opt.trials]
    assert PeerSamples("x.csv", ("a",), ("t",), None, "Timestamp").resumed(space.parameters) == []
