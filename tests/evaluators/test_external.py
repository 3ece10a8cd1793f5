"""External-process mode: the line protocol with clients written in bash/awk and Node.js,
malformed answers (each error names the stdout line and what was expected), tools that exit
or hang, restarts, and the scenario wiring."""

from __future__ import annotations

import json
import pickle
import shutil
import sys
import time
from pathlib import Path

import pytest

from bayestune.evaluators import ExternalEvaluator
from bayestune.exceptions import EvaluationError
from bayestune.execution import run
from bayestune.formatting import format_value
from bayestune.measurement.build import make_evaluator
from bayestune.optimizer import Optimizer
from bayestune.scenario import load_scenario
from bayestune.storage import Journal
from bayestune.trial import TrialStatus

CLIENTS = Path(__file__).parent / "clients"
BASH_CLIENT = f"bash {CLIENTS / 'quadratic.sh'}"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
needs_bash = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("awk") is None, reason="needs bash and awk"
)
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

pytestmark = posix_only


def node_client(mode: str = "good", count_file: Path | None = None) -> str:
    return f"node {CLIENTS / 'quadratic.js'} {mode}" + (f" {count_file}" if count_file else "")


def external(command: str, **kw) -> ExternalEvaluator:
    kw.setdefault("timeout", 5.0)
    return ExternalEvaluator(command, ["value"], parameter_names=["x", "y"], **kw)


CONFIGS = [{"x": 1, "y": 2}, {"x": 5, "y": 0}, {"x": 13, "y": 1}]


# ---- well-behaved clients ------------------------------------------------------------------
@needs_bash
def test_bash_awk_client_answers_a_batch_with_feasibility():
    with external(BASH_CLIENT) as ev:
        results = ev.evaluate_batch(CONFIGS)
        assert [r.status for r in results] == [TrialStatus.OK, TrialStatus.OK, TrialStatus.INFEASIBLE]
        assert results[0].values == {"value": 6.0} and results[1].values == {"value": 4.0}
        assert ev.evaluate({"x": 3, "y": 7}).values == {"value": 7.0}
        assert ev.starts == 1 and ev.requests == 2  # one long-running tool for every request


@needs_node
@pytest.mark.parametrize("mode", ["good", "reverse", "no-params"])
def test_node_client_rows_matched_by_echoed_parameters_or_position(mode):
    with external(node_client(mode)) as ev:
        ev.evaluate_batch(CONFIGS)  # the misbehaviour starts with the second request
        results = ev.evaluate_batch([{"x": 1, "y": 2}, {"x": 5, "y": 0}, {"x": 4, "y": 1}])
        assert [r.values["value"] for r in results] == [6.0, 4.0, 2.0]
        assert ev.starts == 1


@needs_node
def test_nan_objective_is_a_failed_evaluation_not_a_protocol_error():
    with external(node_client()) as ev:
        ok, nan = ev.evaluate_batch([{"x": 1, "y": 0}, {"x": 7, "y": 0}])
        assert ok.status is TrialStatus.OK
        assert nan.status is TrialStatus.FAILED and nan.kind == "nan"
        assert ev.starts == 1  # the stream was fine: no restart


# ---- malformed answers -----------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize(
    "mode, kind, fragments",
    [
        (
            "unknown-header",
            "protocol",
            [
                "line 4 of the tool's stdout (the answer's header)",
                "column(s) ['bogus'] are unknown",
                "expected a header of the parameters ['x', 'y']",
            ],
        ),
        (
            "wrong-columns",
            "protocol",
            ["line 5 of the tool's stdout (row 1 of 2)", "expected 4 comma-separated values", "but got 5"],
        ),
        (
            "non-numeric",
            "protocol",
            ["line 5 of the tool's stdout (row 1 of 2)", "column 'value'", "expected a number, but got 'fast'"],
        ),
        (
            "missing-row",
            "timeout",
            [
                "timed out after 1 s (2 configuration(s) x 0.5 s)",
                "waiting for row 2 of 2",
                "after line 5 of the tool's stdout",
            ],
        ),
        ("hang", "timeout", ["waiting for the answer's header"]),
        (
            "exit",
            "crash",
            [
                "expected the answer's header at line 4 of the tool's stdout",
                "exited with code 3",
                "giving up on purpose",
            ],
        ),
    ],
)
def test_malformed_answers_fail_the_batch_naming_line_and_expectation(tmp_path, mode, kind, fragments):
    starts = tmp_path / "starts"
    with external(node_client(mode, starts), timeout=0.5) as ev:
        first = ev.evaluate_batch(CONFIGS[:2])  # request 1 is answered correctly (stdout lines 1-3)
        assert all(r.status is TrialStatus.OK for r in first)
        t0 = time.monotonic()
        results = ev.evaluate_batch([{"x": 2, "y": 0}, {"x": 4, "y": 0}])
        assert time.monotonic() - t0 < 3.0
        assert len(results) == 2
        for r in results:
            assert r.status is TrialStatus.FAILED and r.kind == kind
            for fragment in fragments:
                assert fragment in r.error, r.error
            assert "request 2" in r.error
        # the tool was stopped; the next request starts a fresh one, whose first answer is good
        again = ev.evaluate_batch([{"x": 3, "y": 1}])
        assert again[0].values == {"value": 1.0}
    assert starts.read_text().count("started") == 2


def test_tool_that_cannot_start_or_dies_at_once_is_a_failure(tmp_path):
    with external("exit 4", timeout=2) as ev:
        (r,) = ev.evaluate_batch([{"x": 1, "y": 1}])
        assert r.status is TrialStatus.FAILED and r.kind == "crash"
        assert "exited with code 4" in r.error or "before it read request 1" in r.error


def test_header_errors_missing_objective_duplicates_and_partial_parameters(tmp_path):
    cases = {
        "x,y,Valid": "objective column(s) ['value'] are missing",
        "x,y,value,value": "column(s) ['value'] appear twice",
        "x,value": "lacks ['y']",
        "x,y,value,Valid,feasible": "several feasibility columns",
    }
    for header, fragment in cases.items():
        script = tmp_path / "tool.sh"
        script.write_text(f"read r; read h; read row; echo '{header}'; echo '1,2,3,True'; sleep 5\n")
        with external(f"bash {script}", timeout=2) as ev:
            (r,) = ev.evaluate_batch([{"x": 1, "y": 2}])
            assert r.kind == "protocol" and fragment in r.error, (header, r.error)
            assert "line 1 of the tool's stdout (the answer's header)" in r.error


def test_unrequested_and_duplicated_rows_and_bad_feasibility(tmp_path):
    cases = {
        "echo 'x,y,value'; echo '9,9,1'": "configuration (x=9, y=9) is not one of the 1 requested",
        "echo 'x,y,value,Valid'; echo '1,2,1,maybe'": "column 'Valid': expected True or False, but got 'maybe'",
        "echo 'x,y,value,Valid'; echo '1,2,,True'": "column 'value': expected a number, but the cell is empty",
    }
    for answer, fragment in cases.items():
        script = tmp_path / "tool.sh"
        script.write_text(f"read r; read h; read row; {answer}; sleep 5\n")
        with external(f"bash {script}", timeout=2) as ev:
            (r,) = ev.evaluate_batch([{"x": 1, "y": 2}])
            assert r.kind == "protocol" and fragment in r.error, (answer, r.error)
    script = tmp_path / "twice.sh"
    script.write_text("read r; read h; read a; read b; echo 'x,y,value'; echo '1,2,1'; echo '1,2,1'; sleep 5\n")
    with external(f"bash {script}", timeout=2) as ev:
        results = ev.evaluate_batch([{"x": 1, "y": 2}, {"x": 3, "y": 4}])
        assert all("configuration (x=1, y=2) is answered twice" in r.error for r in results)


def test_declared_metrics_and_custom_feasibility_column(tmp_path):
    script = tmp_path / "tool.sh"
    script.write_text(
        "while read r; do case $r in End*) exit 0;; esac; read h; read row; "
        "echo 'value,ok,power'; echo '2.5,true,30'; done\n"
    )
    ev = external(f"bash {script}", metrics=["power"], feasible_column="ok")
    with ev:
        (r,) = ev.evaluate_batch([{"x": 1, "y": 2}])
        assert r.status is TrialStatus.OK and r.values == {"value": 2.5, "power": 30.0}


def test_request_text_quotes_permutations_and_keeps_floats_exact(tmp_path):
    log = tmp_path / "request.txt"
    script = tmp_path / "tool.sh"
    script.write_text(
        f'read r; read h; read row; printf \'%s\\n%s\\n%s\\n\' "$r" "$h" "$row" > {log}; '
        "echo 'v'; echo '1'; read end\n"
    )
    ev = ExternalEvaluator(f"bash {script}", ["v"], parameter_names=["order", "alpha", "name"], timeout=2)
    with ev:
        (r,) = ev.evaluate_batch([{"order": (2, 0, 1), "alpha": 0.1, "name": "a b"}])
        assert r.values == {"v": 1.0}
    assert log.read_text().splitlines() == ["Request 1", "order,alpha,name", '"(2, 0, 1)",0.1,a b']
    assert format_value(1 / 3) == repr(1 / 3)


def test_external_evaluator_pickles_as_its_settings():
    ev = external("cat", timeout=3.0, metrics=["m"])
    copy = pickle.loads(pickle.dumps(ev))
    assert isinstance(copy, ExternalEvaluator) and copy.command == "cat" and copy.metrics == ["m"]
    assert copy.timeout == 3.0 and copy.starts == 0


# ---- scenario wiring and the optimizer loop ------------------------------------------------
def write_scenario(tmp_path: Path, command: str, **extra) -> Path:
    data = {
        "name": "ext",
        "parameters": [
            {"name": "x", "type": "integer", "bounds": [0, 20]},
            {"name": "y", "type": "integer", "bounds": [0, 5]},
        ],
        "objectives": ["value"],
        "budget": 12,
        "seed": 3,
        "strategy": "cot_random",
        "initial_design": {"size": 4},
        "blackbox": {"external": command, "timeout": 5},
        **extra,
    }
    path = tmp_path / "ext.json"
    path.write_text(json.dumps(data))
    return path


@needs_bash
def test_scenario_external_blackbox_drives_the_optimizer_in_batches(tmp_path):
    scenario = load_scenario(write_scenario(tmp_path, BASH_CLIENT))
    evaluator = make_evaluator(scenario)
    assert isinstance(evaluator, ExternalEvaluator) and evaluator.workdir == str(tmp_path)
    with evaluator, Journal(tmp_path / "run.db") as journal:
        opt = Optimizer.from_scenario(scenario, journal=journal)
        best = run(opt, evaluator, 12, batch=4)
        assert journal.n_finished() == 12
        assert evaluator.requests == 3  # lock-step batches of 4 rows each
        assert best.values["value"] == min(t.values["value"] for t in opt.trials if t.feasible)


@needs_bash
def test_unknown_external_option_is_rejected(tmp_path):
    from bayestune.exceptions import EvaluationError

    scenario = load_scenario(write_scenario(tmp_path, BASH_CLIENT))
    bad = scenario.blackbox.__class__(kind="external", target=BASH_CLIENT, options={"retries": 2})
    import dataclasses

    with pytest.raises(EvaluationError, match=r"\['retries'\] are not understood .* allowed: \['env', 'metrics'\]"):
        make_evaluator(dataclasses.replace(scenario, blackbox=bad))


@needs_node
def test_external_tools_in_a_process_pool_one_per_worker(tmp_path):
    starts = tmp_path / "starts"
    scenario = load_scenario(write_scenario(tmp_path, node_client("good", starts)))
    from bayestune.execution import ScenarioFactory

    opt = Optimizer.from_scenario(scenario)
    run(opt, ScenarioFactory(scenario), 10, backend="pool", workers=2)
    assert opt.n_evaluated == 10
    assert 1 <= starts.read_text().count("started") <= 2


def test_any_metric_columns_are_kept_with_star(tmp_path):
    script = tmp_path / "tool.sh"
    script.write_text(
        "while read r; do case $r in End*) exit 0;; esac; read h; read row; "
        "echo 'value,Valid,cpu.cycles,cache.misses'; echo '2.5,True,1e6,42'; done\n"
    )
    ev = external(f"bash {script}", metrics="*")
    with ev:
        (r,) = ev.evaluate_batch([{"x": 1, "y": 2}])
        assert r.status is TrialStatus.OK and r.values == {"value": 2.5, "cpu.cycles": 1e6, "cache.misses": 42.0}
    copy = pickle.loads(pickle.dumps(ev))
    assert copy.any_metrics and copy.metrics == []
    with pytest.raises(EvaluationError, match=r"list of column names or '\*'"):
        external("cat", metrics="power")


def test_a_tool_printing_one_endless_line_fails_the_request_with_bounded_memory(tmp_path, monkeypatch):
    """A tool that writes without a newline is stopped at the line limit, not read into memory forever."""
    import sys

    from bayestune.evaluators import tool_process

    monkeypatch.setattr(tool_process, "MAX_LINE_BYTES", 1 << 16)
    script = tmp_path / "endless.py"
    script.write_text("import sys\nsys.stdin.readline()\nwhile True:\n    sys.stdout.write('x' * 4096)\n")
    evaluator = ExternalEvaluator(f"{sys.executable} {script}", ["t"], parameter_names=["x"], timeout=60)
    try:
        result = evaluator.evaluate({"x": 1})
    finally:
        evaluator.close()
    assert result.kind == "protocol" and "printed a line of more than" in result.error
