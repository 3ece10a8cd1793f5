"""Live Halide problems: a schedule compiles and runs; a bad one is a compile failure."""

import pytest

from benchmarks.halide_problems import HALIDE_AVAILABLE, blur_space, matmul_space

pytestmark = pytest.mark.skipif(not HALIDE_AVAILABLE, reason="halide is not installed (pip install halide)")


@pytest.fixture(scope="module")
def matmul():
    from benchmarks.halide_problems import HalideEvaluator

    evaluator = HalideEvaluator("halide_matmul", matmul_space(), timeout=30)
    yield evaluator
    evaluator.close()


def test_default_matmul_schedule_compiles_runs_and_is_correct(matmul):
    result = matmul(matmul_space().default_config())
    assert result.feasible, result.error
    assert 0 < result.values["time"] < 1000


def test_vectorising_the_reduction_is_a_compile_failure(matmul):
    cfg = dict(matmul_space().default_config(), vec_loop="k", vector=8)
    result = matmul(cfg)
    assert not result.feasible and result.kind == "compile"
    assert "race condition" in result.error


def test_known_infeasible_schedule_is_rejected_without_running(matmul):
    cfg = dict(matmul_space().default_config(), vector=16, tile_x=8)
    result = matmul(cfg)
    assert result.kind == "invalid"


def test_timeout_kills_the_evaluation_and_the_server_recovers(matmul):
    timeout = matmul.timeout
    matmul.timeout = 0.01
    try:
        result = matmul(dict(matmul_space().default_config(), tile_x=16))
    finally:
        matmul.timeout = timeout
    assert result.kind == "timeout"
    assert matmul(matmul_space().default_config()).feasible


def test_blur_spaces_are_well_formed():
    space = blur_space()
    assert space.is_feasible(space.to_matrix([space.default_config()]))[0]
    assert space.count_feasible() > 10_000


def test_a_blur_schedule_compiles_runs_and_is_correct():
    from benchmarks.halide_problems import HalideEvaluator

    evaluator = HalideEvaluator("halide_blur", blur_space(), timeout=30)
    try:
        cfg = dict(blur_space().default_config(), compute_at="root", order=(1, 0, 3, 2))
        result = evaluator(cfg)
    finally:
        evaluator.close()
    assert result.feasible, result.error
    assert 0 < result.values["time"] < 1000

