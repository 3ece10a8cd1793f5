"""BayestuneStrategy inside Kernel Tuner: simulation mode, failures, timeouts, budget, cache, resume, T1."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import pytest
from kt_toy import TUNE_PARAMS, failure_of, recorded_time, restriction_callable, restriction_string

from bayestune.integrations.kernel_tuner import COMPILE, VERIFICATION, BayestuneStrategy
from bayestune.storage import Journal
from bayestune.trial import FailureKind, TrialStatus

kernel_tuner = pytest.importorskip(
    "kernel_tuner", reason="kernel_tuner is not installed (pip install -e '.[kernel-tuner]' in the bayestune checkout)"
)

RESTRICTIONS = ["bx*by<=256", restriction_callable]


def _valid() -> list[tuple]:
    import itertools

    return [
        v
        for v in itertools.product(*TUNE_PARAMS.values())
        if restriction_string(dict(zip(TUNE_PARAMS, v))) and restriction_callable(*v)
    ]


# ---- simulation mode -------------------------------------------------------------------------------
def _tune(cache, strategy, max_fevals=20, **kwargs):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel_tuner.tune_kernel(
            "toy",
            "",
            (1024,),
            [],
            dict(TUNE_PARAMS),
            restrictions=list(RESTRICTIONS),
            cache=str(cache),
            simulation_mode=True,
            strategy=strategy,
            strategy_options={"max_fevals": max_fevals},
            quiet=True,
            **kwargs,
        )


def _configs(results: Sequence[dict[str, Any]]) -> list[tuple]:
    return [(r["bx"], r["by"], r["unroll"]) for r in results]


def test_simulation_mode_spends_max_fevals_on_valid_configurations_and_survives_failures(sim_cache):
    strategy = BayestuneStrategy(seed=3)
    results, env = _tune(sim_cache, strategy, max_fevals=25)
    configs = _configs(results)
    assert len(configs) == 25 and len(set(configs)) == 25
    assert all(
        restriction_string({"bx": bx, "by": by}) and restriction_callable(bx, by, u, 80) for bx, by, u in configs
    )
    assert strategy.optimizer_.n_evaluated == 25
    failed = [t for t in strategy.optimizer_.trials if t.status is TrialStatus.FAILED]
    expected = {c for c in configs if failure_of(*c)}
    assert {(t.config["bx"], t.config["by"], t.config["unroll"]) for t in failed} == expected
    # a smooth bowl of 55 valid configurations: 25 evaluations find its optimum or a neighbour
    assert env["best_config"]["time"] <= recorded_time(16, 4, 1) * 1.31


def test_same_seed_same_trajectory_other_seed_other(sim_cache):
    a, _ = _tune(sim_cache, BayestuneStrategy(seed=5), max_fevals=12)
    b, _ = _tune(sim_cache, BayestuneStrategy(seed=5), max_fevals=12)
    c, _ = _tune(sim_cache, BayestuneStrategy(seed=6), max_fevals=12)
    assert _configs(a) == _configs(b) != _configs(c)


def test_journal_resume_continues_without_repeating(sim_cache, tmp_path):
    path = tmp_path / "run.sqlite"
    first, _ = _tune(sim_cache, BayestuneStrategy(seed=1, journal=path), max_fevals=10)
    second_strategy = BayestuneStrategy(seed=1, journal=path)
    second, _ = _tune(sim_cache, second_strategy, max_fevals=10)
    assert len(first) == len(second) == 10
    assert not set(_configs(first)) & set(_configs(second))
    assert second_strategy.optimizer_.n_evaluated == 20
    assert len(Journal(path).trials()) == 20


def test_tune_kernel_T1_runs_the_class_from_a_custom_search_method_path(sim_cache, tmp_path):
    strategy_file = tmp_path / "bayestune_t1.py"
    strategy_file.write_text("from bayestune.integrations.kernel_tuner import BayestuneStrategy\n")
    t1 = {
        "General": {"BenchmarkName": "toy", "OutputFormat": "JSON"},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": k, "Type": "int", "Values": json.dumps(v), "Default": v[0]} for k, v in TUNE_PARAMS.items()
            ],
            "Conditions": [
                {"Parameters": ["bx", "by"], "Expression": "bx*by<=256"},
                {"Parameters": ["bx", "by"], "Expression": "by<=4*bx"},
            ],
        },
        "KernelSpecification": {
            "Language": "CUDA",
            "BenchmarkName": "toy",
            "KernelName": "toy",
            "KernelFile": str(tmp_path / "toy.cu"),
            "GlobalSizeType": "CUDA",
            "LocalSize": {"X": "bx", "Y": "by", "Z": "1"},
            "GlobalSize": {"X": "1024", "Y": "1", "Z": "1"},
            "ProblemSize": [1024],
            "Device": {"Name": "Simulated"},
            "Arguments": [],
        },
    }
    (tmp_path / "toy.cu").write_text("__global__ void toy() {}\n")
    t1_path = tmp_path / "toy_t1.json"
    t1_path.write_text(json.dumps(t1))
    results, _env = kernel_tuner.tune_kernel_T1(
        t1_path,
        cache_filepath=sim_cache,
        simulation_mode=True,
        output_T4=False,
        strategy="BayestuneStrategy",
        strategy_options={"custom_search_method_path": str(strategy_file), "max_fevals": 12, "seed": 2},
    )
    assert len(results) == 12 and len(set(_configs(results))) == 12


# ---- a live-like runner: exceptions, timeouts, warm start, cache writes ---------------------------
class _Searchspace:
    def __init__(self) -> None:
        self.tune_params = dict(TUNE_PARAMS)
        self.list = _valid()


class _Runner:
    """Kernel Tuner's runner contract (``run([element], tuning_options)``) with scripted misbehaviour
    (tests that count its runs set confirm_top=0: test_kernel_tuner_confirm.py tests the confirmation)."""

    simulation_mode = False

    def __init__(self) -> None:
        self.ran: list[tuple] = []

    def run(self, elements, tuning_options):
        (element,) = elements
        tuning_options.budget.add_evaluations(1)
        bx, by, unroll, arch = element
        self.ran.append(element)
        if bx == 64:
            raise RuntimeError("clBuildProgram failed: BUILD_PROGRAM_FAILURE")
        if bx == 1:
            raise RuntimeError("Kernel result verification failed for: bx=1")
        if bx == 2 and by == 1:
            time.sleep(3)  # over the per-configuration limit of the test
        return [{"bx": bx, "by": by, "unroll": unroll, "arch": arch, "time": recorded_time(bx, by, unroll)}]


def _options(tmp_path, cache: dict, max_fevals: int):
    from kernel_tuner import util
    from kernel_tuner.interface import Options

    return Options(
        objective="time",
        objective_higher_is_better=False,
        cache=cache,
        cachefile=str(tmp_path / "live.json"),
        budget=util.TuningBudget(None, max_fevals),
    )


def test_failures_and_timeouts_are_caught_per_configuration_and_cached(tmp_path):
    cache: dict = {}
    runner = _Runner()
    strategy = BayestuneStrategy(
        seed=0, confirm_top=0, journal=None, config_timeout=0.5, defaults={"bx": 64, "by": 1, "unroll": 0}
    )  # a broken default first
    results = strategy.tune(_Searchspace(), runner, _options(tmp_path, cache, 40))
    assert len(results) == 40 and len(runner.ran) == 40
    kinds = {(r["bx"], r["by"]): r.get("bayestune_failure") for r in results}
    assert kinds[(64, 1)] == COMPILE
    assert all(k == COMPILE for (bx, _), k in kinds.items() if bx == 64)
    assert all(k == VERIFICATION for (bx, _), k in kinds.items() if bx == 1)
    if (2, 1) in kinds:
        assert kinds[(2, 1)] == FailureKind.TIMEOUT
    failed_keys = {f"{r['bx']},{r['by']},{r['unroll']},80" for r in results if "__error__" in r}
    assert failed_keys and failed_keys <= set(cache)  # failures are written to Kernel Tuner's cache too
    assert strategy.optimizer_.best.values["time"] <= 1.5


def test_timeout_stops_a_slow_configuration(tmp_path):
    runner = _Runner()
    strategy = BayestuneStrategy(
        seed=0, confirm_top=0, journal=None, config_timeout=0.5, defaults={"bx": 2, "by": 1, "unroll": 0}
    )
    started = time.perf_counter()
    results = strategy.tune(_Searchspace(), runner, _options(tmp_path, {}, 1))
    assert time.perf_counter() - started < 2.5
    assert results[0]["bayestune_failure"] == FailureKind.TIMEOUT


def test_warm_start_tells_the_cache_for_free_and_journals_beside_it(tmp_path):
    cache = {
        f"{bx},{by},{u},80": {"bx": bx, "by": by, "unroll": u, "arch": 80, "time": recorded_time(bx, by, u)}
        for bx, by, u in [(16, 4, 1), (8, 2, 0), (4, 4, 1)]
    }
    runner = _Runner()
    strategy = BayestuneStrategy(seed=0, confirm_top=0)  # journal "auto": beside the cache file
    options = _options(tmp_path, dict(cache), 5)
    strategy.tune(_Searchspace(), runner, options)
    assert len(runner.ran) == 5 and not {e[:3] for e in runner.ran} & {(16, 4, 1), (8, 2, 0), (4, 4, 1)}
    assert strategy.optimizer_.n_evaluated == 8
    assert strategy.optimizer_.best.values["time"] == recorded_time(16, 4, 1)
    journal = tmp_path / "live.json.bayestune.sqlite"
    assert journal.is_file()
    # killed and restarted: the journal resumes; nothing already measured is run again
    again = _Runner()
    BayestuneStrategy(seed=0, confirm_top=0).tune(_Searchspace(), again, _options(tmp_path, dict(cache), 5))
    assert len(again.ran) == 5 and not set(again.ran) & set(runner.ran)
    assert len(Journal(journal).trials()) == 13


def test_time_limit_ends_the_run(tmp_path):
    from kernel_tuner import util

    class SlowRunner(_Runner):
        def run(self, elements, tuning_options):
            time.sleep(0.3)
            return super().run(elements, tuning_options)

    runner = SlowRunner()
    options = _options(tmp_path, {}, 1000)
    options["budget"] = util.TuningBudget(time_limit=1.0, max_fevals=1000)
    started = time.perf_counter()
    BayestuneStrategy(seed=0, confirm_top=0, journal=None, defaults={"bx": 16, "by": 4, "unroll": 1}).tune(
        _Searchspace(), runner, options
    )
    assert 2 <= len(runner.ran) <= 6 and time.perf_counter() - started < 8


def test_a_killed_run_resumes_from_its_journal(sim_cache, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    journal = tmp_path / "killed.sqlite"
    script = f"""
import sys, warnings
sys.path.insert(0, {str(Path(__file__).parent)!r})
warnings.simplefilter("ignore")
import kernel_tuner
from kt_toy import TUNE_PARAMS, restriction_callable
from bayestune.integrations.kernel_tuner import BayestuneStrategy
kernel_tuner.tune_kernel("toy", "", (1024,), [], dict(TUNE_PARAMS), restrictions=["bx*by<=256", restriction_callable],
                         cache={str(sim_cache)!r}, simulation_mode=True, quiet=True,
                         strategy=BayestuneStrategy(seed=4, journal={str(journal)!r}), strategy_options={{"max_fevals": 50}})
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.time() + 120
    finished = 0
    while time.time() < deadline and proc.poll() is None and finished < 6:
        time.sleep(0.2)
        if journal.exists():
            with Journal(journal) as j:
                finished = sum(1 for t in j.trials() if t.status is not TrialStatus.PENDING)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Journal(journal) as j:
        before = [t for t in j.trials() if t.status is not TrialStatus.PENDING]
    strategy = BayestuneStrategy(seed=4, journal=journal)
    results, _ = _tune(sim_cache, strategy, max_fevals=8)
    assert len(results) == 8
    done = [(t.config["bx"], t.config["by"], t.config["unroll"]) for t in strategy.optimizer_.trials]
    assert len(done) == len(set(done)) >= len(before) + 8


# ---- objectives and device options from Kernel Tuner's own arguments ---------------------------------
def test_a_metric_objective_that_is_higher_is_better_is_maximised(sim_cache):
    strategy = BayestuneStrategy(seed=2)
    results, env = _tune(
        sim_cache,
        strategy,
        max_fevals=20,
        metrics={"speed": lambda p: 100.0 / p["time"]},
        objective="speed",
        objective_higher_is_better=True,
    )
    (objective,) = strategy.optimizer_.objectives
    assert (objective.name, objective.minimize) == ("speed", False)
    ok = [t for t in strategy.optimizer_.trials if t.feasible]
    assert ok and all(
        t.values["speed"] == pytest.approx(100.0 / recorded_time(t.config["bx"], t.config["by"], t.config["unroll"]))
        for t in ok
    )
    assert strategy.optimizer_.best.values["speed"] == max(t.values["speed"] for t in ok)
    assert env["best_config"]["speed"] == pytest.approx(strategy.optimizer_.best.values["speed"])


def test_several_objectives_are_searched_together(sim_cache):
    strategy = BayestuneStrategy(seed=2)
    results, _ = _tune(
        sim_cache, strategy, max_fevals=15, metrics={"threads": "bx*by"}, objectives={"time": False, "threads": True}
    )
    assert [(o.name, o.minimize) for o in strategy.optimizer_.objectives] == [("time", True), ("threads", False)]
    assert strategy.optimizer_.strategy.name == "parego" and len(results) == 15
    ok = [t for t in strategy.optimizer_.trials if t.feasible]
    assert ok and all(t.values["threads"] == t.config["bx"] * t.config["by"] for t in ok)


def test_an_objective_missing_from_the_results_is_a_clear_failure():
    from bayestune.integrations.kernel_tuner import result_of

    result = result_of({"bx": 1, "time": 1.0}, ["time", "GFLOP/s"])
    assert result.kind == FailureKind.PARSE and "'GFLOP/s'" in result.error and "metrics=" in result.error


def test_objective_options_are_read_in_every_form_kernel_tuner_stores_them():
    from kernel_tuner.interface import Options

    from bayestune.exceptions import BayestuneError
    from bayestune.integrations.kernel_tuner import kernel_tuner_objectives

    assert kernel_tuner_objectives(Options(objective="time", objective_higher_is_better=False)) == [("time", False)]
    assert kernel_tuner_objectives(
        Options(objective=["time", "GFLOP/s"], objective_higher_is_better=[False, True])
    ) == [("time", False), ("GFLOP/s", True)]
    with pytest.raises(BayestuneError, match="one direction each"):
        kernel_tuner_objectives(Options(objective=["time", "GFLOP/s"], objective_higher_is_better=[False]))


def test_device_options_come_from_tune_kernels_own_arguments():
    """A strategy only gets the runner; the device/platform given to tune_kernel are read from its frame."""
    from bayestune.integrations.kernel_tuner import tune_kernel_device_options

    namespace = {"__name__": "kernel_tuner.interface", "read": tune_kernel_device_options}
    exec(
        "def tune_kernel(device, platform):\n"
        "    device_options = {'device': device, 'platform': platform, 'compiler': None, 'quiet': True}\n"
        "    return strategy_tune()\n"
        "def strategy_tune():\n"
        "    return read(None)\n",
        namespace,
    )
    assert namespace["tune_kernel"](2, 1) == {"device": 2, "platform": 1, "compiler": None}
    assert tune_kernel_device_options(None) == {"device": 0, "platform": 0, "compiler": None, "compiler_options": None}


def test_caches_of_other_devices_open_the_design(sim_cache, tmp_path):
    """prior_caches: the same kernel's caches from other GPUs (a folder here, with an unrelated
    file beside them) are read and, in design mode, their best configuration is tried first."""
    from kt_toy import write_cache

    devices = tmp_path / "devices"
    devices.mkdir()
    write_cache(devices / "other_gpu.json")
    (devices / "unrelated.json").write_text(
        json.dumps({"cache": {}, "tune_params_keys": ["block"], "tune_params": {"block": [1, 2]}})
    )
    strategy = BayestuneStrategy(seed=0, journal=None, prior_caches=[devices], transfer_mode="design")
    results, _ = _tune(sim_cache, strategy, max_fevals=12)
    prior = strategy.optimizer_._prior_runs
    assert len(prior) == 1 and prior[0].name.endswith("other_gpu.json")
    best_recorded = min((recorded_time(*c), c) for c in _valid_configs3())[1]
    assert best_recorded in _configs(results)[:3]  # the source's best opens the design


def _valid_configs3() -> list[tuple]:
    return [(bx, by, u) for bx, by, u, _arch in _valid() if not failure_of(bx, by, u)]
