"""Kernel Tuner cache replay: failure markers, absent configurations, constants, constraints."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.evaluators.replay import load_kernel_tuner_cache
from bayestune.exceptions import EvaluationError
from bayestune.measurement.build import make_evaluator
from bayestune.scenario import load_scenario
from bayestune.space import Categorical, Ordinal
from bayestune.space.inference import log_scale_suits, parameter_for_values
from bayestune.storage import Journal

KEYS = ["block_x", "tile", "precision", "unused"]
PARAMS = {"block_x": [32, 64, 128], "tile": [1, 2], "precision": ["half", "float"], "unused": [7]}


def _cache(tmp_path, times, *, gz=True, drop_fields=False):
    """A small cache: ``times`` maps (block_x, tile, precision) -> time (a number or a marker);
    configurations not in ``times`` are absent."""
    records = {}
    for (bx, tile, prec), t in times.items():
        key = ",".join(str(v) for v in (bx, tile, prec, 7))
        rec = {"time": t, "times": [t] * 3 if isinstance(t, float) else [], "compile_time": 12.5}
        if not drop_fields:
            rec.update({"block_x": bx, "tile": tile, "precision": prec, "unused": 7})
        records[key] = rec
    data = {
        "device_name": "TestGPU",
        "kernel_name": "k",
        "problem_size": [1024],
        "tune_params_keys": KEYS,
        "tune_params": PARAMS,
        "cache": records,
    }
    path = tmp_path / ("k_TestGPU.json.gz" if gz else "k_TestGPU.json")
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf-8") as fh:
        json.dump(data, fh)
    return path


def _times():
    times = {c: 1.0 + i for i, c in enumerate(itertools.product([32, 64, 128], [1, 2], ["half", "float"]))}
    times[(32, 1, "half")] = 0.5  # the optimum
    times[(64, 1, "half")] = "CompilationFailedConfig"
    times[(64, 2, "half")] = "RuntimeFailedConfig"
    times[(128, 1, "float")] = 1e20  # very old failure encoding
    times[(128, 2, "float")] = "InvalidConfig"  # violates the kernel's restrictions
    del times[(128, 2, "half")]  # absent: excluded by a known restriction
    return times


@pytest.mark.parametrize("gz", [True, False])
def test_values_failures_and_optimum(tmp_path, gz):
    problem = load_kernel_tuner_cache(_cache(tmp_path, _times(), gz=gz))
    ev = problem.evaluator()
    ok = ev.evaluate({"block_x": 32, "tile": 1, "precision": "half"})
    assert ok.feasible and ok.values["time"] == 0.5 and ok.values["compile_time"] == 12.5
    assert problem.optimum == 0.5
    kinds = {
        cfg: ev.evaluate(dict(zip(["block_x", "tile", "precision"], cfg))).kind
        for cfg in [(64, 1, "half"), (64, 2, "half"), (128, 1, "float"), (128, 2, "float"), (128, 2, "half")]
    }
    assert kinds == {
        (64, 1, "half"): "compile",
        (64, 2, "half"): "runtime",
        (128, 1, "float"): "runtime",
        (128, 2, "float"): "invalid",
        (128, 2, "half"): "invalid",
    }
    assert problem.n_failing == 4 and problem.n_known_feasible == 10


def test_constants_leave_the_space_and_types_follow_the_values(tmp_path):
    problem = load_kernel_tuner_cache(_cache(tmp_path, _times()))
    assert problem.constants == {"unused": 7}
    assert problem.space.names == ["block_x", "tile", "precision"]
    assert isinstance(problem.space["block_x"], Ordinal) and problem.space["block_x"].log  # 32, 64, 128
    assert isinstance(problem.space["precision"], Categorical)
    assert problem.metadata == {"device_name": "TestGPU", "kernel_name": "k", "problem_size": [1024]}


def test_invalid_and_absent_configurations_are_known_infeasible(tmp_path):
    problem = load_kernel_tuner_cache(_cache(tmp_path, _times()))
    space = problem.space
    assert problem.constraint_source == "table"
    X = space.enumerate()
    configs = space.to_configs(X)
    feasible = {(c["block_x"], c["tile"], c["precision"]) for c in configs}
    assert (128, 2, "float") not in feasible and (128, 2, "half") not in feasible
    assert (64, 1, "half") in feasible  # a hidden failure is only learnt by evaluating it
    assert len(feasible) == problem.n_known_feasible == space.count_feasible()
    samples = space.to_configs(space.sample(200, np.random.default_rng(0)))
    assert all((c["block_x"], c["tile"], c["precision"]) in feasible for c in samples)


def test_t1_constraints_are_used_when_they_reproduce_the_cache(tmp_path):
    times = {c: 1.0 for c in itertools.product([32, 64, 128], [1, 2], ["half", "float"]) if c[0] * c[1] <= 128}
    t1 = tmp_path / "k.t1.json"
    t1.write_text(json.dumps({"ConfigurationSpace": {"Conditions": ["block_x * tile <= 128"]}}))
    problem = load_kernel_tuner_cache(_cache(tmp_path, times), t1_path=t1)
    assert problem.constraint_source == "t1" and problem.space.count_feasible() == len(times)
    wrong = tmp_path / "wrong.t1.json"
    wrong.write_text(json.dumps({"ConfigurationSpace": {"Conditions": ["block_x * tile <= 64"]}}))
    assert load_kernel_tuner_cache(_cache(tmp_path, times), t1_path=wrong).constraint_source == "table"


def test_records_without_parameter_fields_use_the_key_string(tmp_path):
    problem = load_kernel_tuner_cache(_cache(tmp_path, _times(), drop_fields=True))
    assert problem.optimum == 0.5 and problem.n_known_feasible == 10


def test_unreadable_files_give_clear_errors(tmp_path):
    with pytest.raises(EvaluationError, match="no such cache file"):
        load_kernel_tuner_cache(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(EvaluationError, match="not a readable Kernel Tuner cache"):
        load_kernel_tuner_cache(bad)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"tune_params_keys": ["a"], "tune_params": {"a": [1, 2]}}))
    with pytest.raises(EvaluationError, match="missing key 'cache'"):
        load_kernel_tuner_cache(partial)


@pytest.mark.parametrize(
    "values, log",
    [
        ([1, 2, 4, 8, 16], True),
        ([16, 32, 64, 128], True),
        ([16, 32, 48, 64, 80, 96, 112, 128], False),
        ([1, 2, 3, 4], False),
        ([0, 1], False),
        ([0, 2, 4, 8], False),
        ([1, 2], False),
        ([0.5, 1, 2, 4], True),
    ],
)
def test_log_scale_only_for_geometric_looking_value_lists(values, log):
    assert log_scale_suits(values) is log
    assert parameter_for_values("p", values).log is log


# ---- a replay black box named by a scenario -------------------------------------------------
REPLAY_DATA = Path(__file__).resolve().parents[1] / "data" / "replay"


def test_scenario_replay_black_box_runs_end_to_end_from_the_cli(tmp_path, monkeypatch):
    for name in ("pnpoly_small.json", "pnpoly_small.json.gz"):
        shutil.copy(REPLAY_DATA / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["optimize", "pnpoly_small.json", "--no-progress"])
    assert result.exit_code == 0, result.output + result.stderr
    assert "best: time = " in result.stdout
    with Journal.open(tmp_path / "pnpoly_small.journal.db") as journal:
        trials = journal.trials()
    assert len(trials) == 8 and all(t.feasible for t in trials)
    problem = load_kernel_tuner_cache(REPLAY_DATA / "pnpoly_small.json.gz")
    for t in trials:
        key = tuple(t.config[n] for n in problem.space.names)
        assert t.values["time"] == problem.records[key]["time"]


def test_scenario_replay_black_box_must_cover_the_cache_parameters(tmp_path):
    data = json.loads((REPLAY_DATA / "pnpoly_small.json").read_text())
    data["parameters"] = data["parameters"][:2]
    data["blackbox"] = {"replay": str(REPLAY_DATA / "pnpoly_small.json.gz")}
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(data))
    with pytest.raises(EvaluationError, match="tile_size"):
        make_evaluator(load_scenario(str(path)))
