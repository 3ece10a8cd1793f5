import gzip
import json

import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.storage.csv_io import export_csv
from bayestune.storage.journal import Journal
from bayestune.transfer.runs import PriorRun, load_prior_run, load_prior_runs
from tests.transfer.conftest import all_configs, target


def test_from_configs_drops_configurations_outside_the_space_and_keeps_failures_as_nan(space):
    configs = [
        {"bx": 16, "by": 4, "c": "b"},
        {"bx": 32, "by": 32, "c": "a"},
        {"bx": 2, "by": 2, "c": "a"},
        {"bx": 3, "by": 2, "c": "a"},
    ]
    run = PriorRun.from_configs(space, configs, [1.0, 2.0, None, 4.0])
    assert len(run.X) == 2  # 32*32 breaks the constraint, 3 is no legal value
    assert run.n_feasible == 1 and np.isnan(run.y[1])


def test_a_maximised_objective_is_negated(space):
    run = PriorRun.from_configs(space, [{"bx": 1, "by": 1, "c": "a"}], [5.0], minimize=False)
    assert run.y[0] == -5.0


def test_mismatched_parameters_are_named(space):
    with pytest.raises(BayestuneError, match=r"missing parameter\(s\) \['c'\], unknown parameter\(s\) \['z'\]"):
        PriorRun.from_configs(space, [{"bx": 1, "by": 1, "z": 3}], [1.0], name="other")


def test_a_run_without_any_success_in_the_space_is_refused(space):
    with pytest.raises(BayestuneError, match="no successful evaluation"):
        PriorRun.from_configs(space, [{"bx": 1, "by": 1, "c": "a"}], [None])


def test_journal_round_trip(space, tmp_path):
    path = tmp_path / "a.db"
    opt = Optimizer(space, objectives=["t"], seed=0, journal=Journal(path))
    opt.optimize(target, 8)
    opt.journal.close()
    run = load_prior_run(path, space, "t")
    assert run.n_feasible == 8
    assert np.nanmin(run.y) == min(t.values["t"] for t in opt.trials)


def test_journal_of_another_objective_is_refused(space, tmp_path):
    path = tmp_path / "a.db"
    opt = Optimizer(space, objectives=["t"], seed=0, journal=Journal(path))
    opt.optimize(target, 3)
    opt.journal.close()
    with pytest.raises(BayestuneError, match="does not record objective 'runtime'"):
        load_prior_run(path, space, Objective("runtime"))


def test_csv_round_trip(space, tmp_path):
    opt = Optimizer(space, objectives=["t"], seed=1)
    opt.optimize(target, 6)
    path = tmp_path / "a.csv"
    export_csv(opt.trials, path, parameter_names=space.names, objectives=["t"])
    run = load_prior_run(path, space, "t")
    assert run.n_feasible == 6


def test_csv_of_another_space_is_refused(space, tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("bx,bz,c,t\n1,1,a,2.0\n")
    with pytest.raises(BayestuneError, match="does not match the space"):
        load_prior_run(path, space, "t")


def test_kernel_tuner_cache_maps_constants_away(space, tmp_path):
    configs = all_configs(space)
    cache = {
        ",".join(str(v) for v in (c["bx"], c["by"], c["c"], 128)): {**c, "n": 128, "time": target(c)} for c in configs
    }
    first = next(iter(cache))
    cache[first]["time"] = "RuntimeFailedConfig"
    data = {
        "device_name": "X",
        "kernel_name": "k",
        "tune_params_keys": ["bx", "by", "c", "n"],
        "tune_params": {"bx": [1, 2, 4, 8, 16, 32], "by": [1, 2, 4, 8, 16, 32], "c": ["a", "b"], "n": [128]},
        "cache": cache,
    }
    path = tmp_path / "k.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(data, fh)
    run = load_prior_run(path, space, "whatever")  # a cache records `time`
    assert len(run.X) == len(configs) and run.n_feasible == len(configs) - 1


def test_bad_files_give_clear_errors(space, tmp_path):
    with pytest.raises(BayestuneError, match="no such file"):
        load_prior_run(tmp_path / "missing.db", space, "t")
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(BayestuneError, match="unknown file type"):
        load_prior_run(tmp_path / "x.txt", space, "t")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(BayestuneError, match="prior run"):
        load_prior_run(tmp_path / "x.json", space, "t")
    (tmp_path / "x.db").write_text("not sqlite at all, just text" * 50)
    with pytest.raises(BayestuneError, match="prior run"):
        load_prior_run(tmp_path / "x.db", space, "t")


def test_load_prior_runs_passes_loaded_runs_through(space, related):
    assert load_prior_runs([related], space, "t") == [related]


def test_a_folder_or_glob_of_prior_runs_reads_those_of_the_space(tmp_path, caplog):
    """One cache per GPU, as Kernel Tuner users keep them, beside files of other kernels."""
    import logging
    from pathlib import Path

    from bayestune.space import Integer, Space
    from bayestune.transfer.runs import expand_source

    space = Space([Integer("x", 0, 9)])
    for name, values in (("a100.csv", [3.0, 2.0]), ("mi250x.csv", [1.0, 4.0])):
        (tmp_path / name).write_text("x,t\n" + "\n".join(f"{i},{v}" for i, v in enumerate(values)) + "\n")
    (tmp_path / "other_kernel.csv").write_text("block,t\n1,2.0\n")
    (tmp_path / "notes.txt").write_text("not a run")
    assert [p.name for p in expand_source(tmp_path)] == ["a100.csv", "mi250x.csv", "other_kernel.csv"]
    with caplog.at_level(logging.WARNING, logger="bayestune.transfer.runs"):
        runs = load_prior_runs([tmp_path], space, "t")
    assert sorted(Path(r.name).name for r in runs) == ["a100.csv", "mi250x.csv"]
    assert "other_kernel.csv" in caplog.text and "does not match the space" in caplog.text
    assert len(load_prior_runs([str(tmp_path / "a*.csv")], space, "t")) == 1
    with pytest.raises(BayestuneError, match=r"no run of this space among 1 file\(s\)"):
        load_prior_runs([str(tmp_path / "other*.csv")], space, "t")
