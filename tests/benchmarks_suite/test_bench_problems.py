"""Benchmark problems: stated optima, constraints, hidden failures, GPU replay loading."""

import math

import numpy as np
import pytest

from benchmarks import problems as bp

GPU_FILES = [
    "convolution-v2_RTX_3090",
    "convolution_A100",
    "convolution_MI250X",
    "dedispersion_A100",
    "dedispersion_W6600",
    "gemm_RTX_3090",
    "pnpoly_RTX_3090",
]
needs_data = pytest.mark.skipif(not bp.data_dir().is_dir(), reason=f"no GPU data in {bp.data_dir()}")


@pytest.mark.parametrize("name", sorted(bp.STATED_OPTIMA))
def test_stated_optimum_is_the_enumerated_minimum(name):
    value, config = bp.STATED_OPTIMA[name]
    best, best_config, n_ok = bp.enumerated_optimum(name)
    assert best == pytest.approx(value, rel=1e-12)
    assert best_config == config
    problem = bp.get_problem(name)
    assert problem.optimum == pytest.approx(value, rel=1e-12)
    result = problem.evaluate(config)
    assert result.feasible and result.values["value"] == pytest.approx(value, rel=1e-12)
    # nothing sampled beats it
    X = problem.space.sample(3000, np.random.default_rng(0))
    syn = bp.SYNTHETIC[name]
    cols = problem.space.columns(X)
    values = syn.value(cols)
    if syn.failure is not None:
        values = values[syn.failure(cols) == ""]
    assert values.min() >= value - 1e-12 and n_ok > 0


def test_hartmann_real_optimum_is_analytic():
    problem = bp.get_problem("hartmann6_real")
    assert problem.optimum == 1.0 and problem.optimum_source == "analytic"
    x_star = [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]
    value = problem.evaluate({f"x{i + 1}": v for i, v in enumerate(x_star)}).values["value"]
    assert value == pytest.approx(1.0, abs=1e-5)
    assert bp.hartmann6(np.random.default_rng(1).random((500, 6))).min() > bp.HARTMANN_MIN


def test_synthetic_values_are_positive():
    for name in bp.SYNTHETIC:
        problem = bp.get_problem(name)
        X = problem.space.sample(500, np.random.default_rng(2))
        for cfg in problem.space.to_configs(X[:50]):
            r = problem.evaluate(cfg)
            assert not r.feasible or r.values["value"] >= problem.optimum > 0


def test_sparse_chain_is_sparse():
    space = bp.get_problem("sparse_chain").space
    assert space.count_feasible() == 462 * 126 == 58212
    assert space.count_feasible() / space.cartesian_size < 0.01


def test_known_infeasible_configuration_is_an_invalid_failure():
    problem = bp.get_problem("sparse_chain")
    cfg = {f"p{i}": 1 for i in range(1, 11)}  # p8 >= 2 p7 is violated
    r = problem.evaluate(cfg)
    assert not r.feasible and r.kind == "invalid"
    assert not problem.known_feasible(cfg)


def test_taco_like_has_hidden_failures_of_both_kinds():
    problem = bp.get_problem("taco_like")
    X = problem.space.sample(400, np.random.default_rng(3))
    kinds = {problem.evaluate(c).kind for c in problem.space.to_configs(X)}
    assert {"compile", "runtime", None} <= kinds
    # a parallel reduction loop (k outermost) is the race
    cfg = dict(bp.STATED_OPTIMA["taco_like"][1], order=(1, 2, 3, 4, 0))
    assert problem.evaluate(cfg).kind == "runtime"


def test_kendall_distance():
    d = bp.kendall_distance(np.array([[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1]]), (2, 0, 3, 1))
    assert d[2] == 0 and d[0] + d[1] == 6


def test_resolve_problem_groups():
    assert bp.resolve_problems("synthetic") == list(bp.SYNTHETIC)
    assert bp.resolve_problems("branin_mixed,branin_mixed,sparse_chain") == ["branin_mixed", "sparse_chain"]
    assert set(bp.resolve_problems("halide")) == {"halide_blur", "halide_matmul"}
    with pytest.raises(ValueError, match="unknown problem"):
        bp.resolve_problems("nope")


def test_data_dir_honours_environment(monkeypatch, tmp_path):
    (tmp_path / "gpu-kernels").mkdir()
    monkeypatch.setenv("BAYESTUNE_DATA", str(tmp_path))
    assert bp.data_dir() == tmp_path / "gpu-kernels"
    assert bp.gpu_problem_names() == []
    monkeypatch.setenv("BAYESTUNE_DATA", str(tmp_path / "gpu-kernels"))
    assert bp.data_dir() == tmp_path / "gpu-kernels"


@pytest.mark.slow  # reads the shared GPU caches outside the repository
@needs_data
def test_the_seven_gpu_spaces_are_found():
    assert bp.gpu_problem_names() == GPU_FILES
    assert bp.resolve_problems("gpu") == GPU_FILES
    for name in GPU_FILES:
        assert bp.problem_kind(name) == "gpu"


@pytest.mark.slow  # reads the shared GPU caches outside the repository
@needs_data
def test_a_gpu_problem_loads_and_replays_its_optimum():
    problem = bp.get_problem("pnpoly_RTX_3090")
    assert problem.kind == "gpu" and problem.objective == "time" and problem.optimum_source == "cache"
    r = problem.evaluate(problem.optimum_config)
    assert r.feasible and r.values["time"] == problem.optimum
    assert problem.metadata["n_known_feasible"] == 4092


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("name", GPU_FILES)
def test_every_gpu_problem_loads(name):
    problem = bp.get_problem(name)
    assert math.isfinite(problem.optimum) and problem.optimum > 0
    assert problem.space.count_feasible() == problem.metadata["n_known_feasible"]
    assert problem.evaluate(problem.optimum_config).values["time"] == problem.optimum
