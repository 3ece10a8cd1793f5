"""Logged metrics from a command's JSON line reach the journal, the CSV export and the run."""

from __future__ import annotations

import csv
import sys

from bayestune import Integer
from bayestune.evaluators.command import CommandEvaluator
from bayestune.evaluators.output import flatten_logs, parse_output
from bayestune.optimizer import Optimizer
from bayestune.run import load_run
from bayestune.space import Space
from bayestune.storage import Journal, export_csv
from bayestune.trial import TrialStatus


def test_nested_json_objects_are_logs_with_dotted_names():
    line = '{"runtime": 2.0, "cache": {"l1": {"misses": 12, "note": "x"}, "hits": 3}, "feasible": true}'
    result = parse_output("warming up\n" + line, ["runtime"])
    assert result.status is TrialStatus.OK
    assert dict(result.values) == {"runtime": 2.0, "cache.l1.misses": 12.0, "cache.hits": 3.0}


def test_flatten_keeps_top_level_fields_as_they_are():
    assert flatten_logs({"a": "text", "b": {"c": True, "d": 1.5}}) == {"a": "text", "b.d": 1.5}


def test_command_logs_travel_to_journal_csv_and_run(tmp_path):
    script = tmp_path / "box.py"
    script.write_text(
        "import json, sys\nx = int(sys.argv[1])\n"
        "print(json.dumps({'t': (x - 3) ** 2 + 1, 'mem': {'reads': 10 * x, 'writes': x + 1}}))\n"
    )
    space = Space([Integer("x", 0, 6)])
    evaluator = CommandEvaluator(f"{sys.executable} {script} {{x}}", ["t"], parameter_names=["x"], timeout=30)
    path = tmp_path / "run.db"
    with Journal(path) as journal:
        opt = Optimizer(space, objectives=["t"], strategy="random", seed=0, journal=journal)
        for _ in range(3):
            config = opt.ask()[0]
            opt.tell(config, evaluator.evaluate(config))
    run = load_run(str(path))
    for trial in run.trials:
        x = trial.config["x"]
        assert trial.values == {"t": (x - 3) ** 2 + 1, "mem.reads": 10 * x, "mem.writes": x + 1}
    out = tmp_path / "run.csv"
    export_csv(run.trials, out, parameter_names=["x"], objectives=["t"])
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["mem.reads"]) for r in rows] == [10.0 * t.config["x"] for t in run.trials]
    assert opt.history().metrics[0]["mem.writes"] == run.trials[0].config["x"] + 1


def test_json_output_with_a_key_given_twice_is_not_read():
    from bayestune.evaluators.output import parse_output

    assert parse_output('{"t": 1, "t": 2}', ["t"], None, None).kind == "parse"


def test_a_nan_feasibility_flag_and_an_underscored_number_are_failures():
    from bayestune.trial import coerce_result

    assert "not true or false" in coerce_result({"t": 1.0, "Valid": float("nan")}, ["t"]).error
    assert coerce_result({"t": "1_000"}, ["t"]).kind == "parse"
    assert coerce_result({"t": "1000"}, ["t"]).values == {"t": 1000.0}
