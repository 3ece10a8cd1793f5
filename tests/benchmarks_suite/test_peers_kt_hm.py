"""Kernel Tuner (simulation mode) and HyperMapper peers: budget rules, conversions, mappings."""

import gzip
import importlib.util
import json
import math
import os
import shutil
from pathlib import Path

import pytest

from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real
from benchmarks import problems as bp
from benchmarks.contenders import STRATEGIES, make_contender
from benchmarks.peers import hypermapper_peer as hm
from benchmarks.peers import kernel_tuner_peer as ktp

SMALL_GPU = "pnpoly_RTX_3090"  # the smallest cache; 318 recorded failures
KT_NAMES = (
    "kt_bayes_opt",
    "kt_bayes_opt_multi_advanced",
    "kt_bayes_opt_ei",
    "kt_genetic_algorithm",
    "kt_random_sample",
)


#: A 576-configuration slice of the pnpoly cache (MIT, see tests/data/replay/README.md), in the
#: repository: the suite reads nothing outside it.
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "replay" / "pnpoly_576.json.gz"


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    """A replayed GPU problem built from :data:`FIXTURE`, named as the harness names GPU spaces."""
    pytest.importorskip("kernel_tuner")
    data = tmp_path_factory.mktemp("gpu-kernels")
    shutil.copy(FIXTURE, data / f"{SMALL_GPU}.json.gz")
    before = os.environ.get("BAYESTUNE_DATA")
    os.environ["BAYESTUNE_DATA"] = str(data)
    try:
        problem = bp.build_gpu_problem(SMALL_GPU)
    finally:
        if before is None:
            del os.environ["BAYESTUNE_DATA"]
        else:
            os.environ["BAYESTUNE_DATA"] = before
    with gzip.open(problem.metadata["file"], "rt") as fh:
        cache = json.load(fh)
    return problem, cache


def _cache_time(cache, setup, config):
    params = setup.to_kt(config)
    record = cache["cache"][",".join(str(params[k]) for k in setup.keys)]
    t = record["time"]
    return float(t) if isinstance(t, (int, float)) and math.isfinite(t) else None


def test_peers_are_registered_with_availability():
    for name in (*KT_NAMES, "hypermapper"):
        assert STRATEGIES[name].family == "peer"
    kt_missing = importlib.util.find_spec("kernel_tuner") is None
    assert (STRATEGIES["kt_random_sample"].available() is not None) == kt_missing
    hm_missing = importlib.util.find_spec("hypermapper") is None
    assert (STRATEGIES["hypermapper"].available() is not None) == hm_missing


def test_kt_refuses_problems_that_are_not_gpu_replays():
    pytest.importorskip("kernel_tuner")
    with pytest.raises(RuntimeError, match="GPU cache replays"):
        make_contender("kt_random_sample", bp.get_problem("branin_mixed"), 0)


@pytest.mark.parametrize("name", ["kt_random_sample", "kt_genetic_algorithm", "kt_bayes_opt"])
def test_kt_run_counts_exactly_the_budget_with_cache_values(gpu, name):
    problem, cache = gpu
    setup = ktp.kt_setup(problem)
    budget = 15
    tr = make_contender(name, problem, 3).run(problem, budget, 3)
    assert len(tr.evaluations) == budget and tr.notes == ""
    keys = {tuple(e.config[n] for n in problem.space.names) for e in tr.evaluations}
    assert len(keys) == budget  # unique
    for e in tr.evaluations:
        assert problem.known_feasible(e.config)
        assert e.value == _cache_time(cache, setup, e.config)
        assert e.feasible == (e.value is not None)
    assert sum(e.ask_s for e in tr.evaluations) <= tr.strategy_s + 1e-6
    again = make_contender(name, problem, 3).run(problem, budget, 3)  # reproducible per seed
    assert [e.config for e in again.evaluations] == [e.config for e in tr.evaluations]


def test_kt_configuration_conversion_round_trips(gpu):
    problem, cache = gpu
    setup = ktp.kt_setup(problem)
    assert len(setup.known_feasible) == problem.metadata["n_known_feasible"]
    for record in list(cache["cache"].values())[::97]:
        config = setup.from_kt(record)
        assert set(config) == set(problem.space.names)
        assert setup.to_kt(config) == {k: record[k] for k in setup.keys}
        assert problem.known_feasible(config) == (record["time"] != "InvalidConfig")


def test_kt_shortfall_is_rerun_then_recorded(gpu, monkeypatch):
    problem, _ = gpu
    real = ktp.run_kernel_tuner
    calls = []

    def stops_at_half(setup, strategy, options, max_fevals, seed, fix=True):  # a strategy ending early
        calls.append(max_fevals)
        return real(setup, strategy, options, max_fevals // 2, seed, fix)

    monkeypatch.setattr(ktp, "run_kernel_tuner", stops_at_half)
    tr = make_contender("kt_random_sample", problem, 0).run(problem, 12, 0)
    assert calls == [12, 24] and len(tr.evaluations) == 12  # the rerun with twice max_fevals suffices
    assert "rerun with 24" in tr.notes and "shortfall" not in tr.notes

    calls.clear()
    monkeypatch.setattr(
        ktp,
        "run_kernel_tuner",
        lambda setup, strategy, options, max_fevals, seed, fix=True: (
            calls.append(max_fevals) or real(setup, strategy, options, 5, seed, fix)
        ),
    )
    tr = make_contender("kt_random_sample", problem, 0).run(problem, 12, 0)
    assert calls == [12, 24, 48] and len(tr.evaluations) == 5
    assert "shortfall: kernel tuner evaluated 5 unique configurations of the budget 12" in tr.notes


def test_kt_bayes_opt_failure_fix_is_scoped(monkeypatch):
    pytest.importorskip("kernel_tuner")
    import sys

    import kernel_tuner.strategies.bayes_opt as kt_bo

    def fake(self, param_config):  # Kernel Tuner's cost of a failed configuration is float max
        return sys.float_info.max if param_config == "failed" else 2.5

    class BO:
        invalid_value = 1e20

    monkeypatch.setattr(kt_bo.BayesianOptimization, "evaluate_objective_function", fake)
    with ktp.bo_failure_fix():
        f = kt_bo.BayesianOptimization.evaluate_objective_function
        assert f(BO(), "failed") == 1e20 and f(BO(), "ok") == 2.5
    assert kt_bo.BayesianOptimization.evaluate_objective_function is fake


# ---- HyperMapper -------------------------------------------------------------------------------
MAPPED = [
    Real("r", -2.0, 3.0),
    Real("rl", 1e-3, 10.0, log=True),
    Integer("i", -5, 7),
    Integer("il", 1, 4096, log=True),
    Ordinal("o", [1, 2, 4, 8, 16, 32], log=True),
    Ordinal("of", [0.1, 0.25, 0.5]),
    Categorical("c", ["a", 3, True, 2.5]),
    Permutation("p", 4),
]


def _samples(p):
    if isinstance(p, Real):
        return [p.low, p.high, (p.low + p.high) / 2, math.sqrt(p.low * p.high) if p.log else p.low + 0.1]
    if isinstance(p, Integer):
        return list(range(p.low, p.high + 1)) if p.high - p.low < 5000 else [p.low, p.high]
    if isinstance(p, (Ordinal, Categorical)):
        return list(p.values)
    import itertools

    return list(itertools.permutations(range(p.n)))


@pytest.mark.parametrize("p", MAPPED, ids=lambda p: p.name)
def test_hypermapper_mapping_round_trips(p):
    spec = hm.hypermapper_parameter(p)
    assert spec["parameter_type"] in ("real", "integer", "ordinal", "categorical")
    for value in _samples(p):
        x = hm.to_hypermapper(p, value)
        if spec["parameter_type"] in ("real", "integer"):
            lo, hi = spec["values"]
            assert lo - 1e-12 <= x <= hi + 1e-12
        else:
            assert x in spec["values"]
        back = hm.from_hypermapper(p, x)
        if isinstance(p, Real):
            assert back == pytest.approx(value, rel=1e-12)
        else:
            assert back == value and type(back) is type(value)
    if isinstance(p, Integer) and p.log:  # any real HyperMapper proposes maps into the range
        lo, hi = spec["values"]
        assert all(p.low <= hm.from_hypermapper(p, lo + (hi - lo) * k / 50) <= p.high for k in range(51))


def test_hypermapper_scenario_is_single_objective_with_design_of_ten(tmp_path):
    params = {p.name: p for p in MAPPED}
    sc = hm.scenario("x", params, ["time"], 30, str(tmp_path))
    assert sc["optimization_objectives"] == ["time"]
    assert sc["design_of_experiment"] == {"doe_type": "random sampling", "number_of_samples": 10}
    assert sc["feasible_output"]["enable_feasible_predictor"] is True
    assert set(sc["input_parameters"]) == set(params)


def test_hypermapper_run_counts_the_budget(gpu):
    pytest.importorskip("hypermapper")
    problem, _ = gpu
    tr = make_contender("hypermapper", problem, 0).run(problem, 12, 0)
    assert len(tr.evaluations) == 12
    assert all(problem.known_feasible(e.config) for e in tr.evaluations)
