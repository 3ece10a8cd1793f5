"""Live Halide problems: declared through the Halide helper with the spaces their measurement
caches were recorded in; a schedule compiles and runs; a bad one is a compile failure."""

import json
from pathlib import Path

import pytest

from benchmarks.halide_problems import HALIDE_AVAILABLE, blur_space, matmul_space

needs_halide = pytest.mark.skipif(not HALIDE_AVAILABLE, reason="halide is not installed (pip install halide)")
ROOT = Path(__file__).resolve().parents[2]
#: The spaces as hand-declared before the problems moved onto bayestune.integrations.halide.
RECORDED = json.loads((ROOT / "tests" / "data" / "halide_benchmark_spaces.json").read_text())


@pytest.mark.parametrize("name, factory", [("halide_blur", blur_space), ("halide_matmul", matmul_space)])
def test_the_helper_declares_the_spaces_the_caches_were_recorded_in(name, factory):
    space = factory()
    assert space.to_spec() == RECORDED[name]["spec"]
    assert space.count_feasible() == RECORDED[name]["feasible"]
    lines = (ROOT / "benchmarks" / "results" / f"{name}.cache.jsonl").read_text().splitlines()
    configs = [
        {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(json.loads(ln)["key"]).items()}
        for ln in lines
        if ln.strip()
    ]
    X = space.to_matrix([space.validate_config(c) for c in configs])
    assert space.is_feasible(X).all()


@pytest.fixture(scope="module")
def matmul():
    if not HALIDE_AVAILABLE:
        pytest.skip("halide is not installed")
    from benchmarks.halide_problems import HalideEvaluator

    evaluator = HalideEvaluator("halide_matmul", matmul_space(), timeout=30)
    yield evaluator
    evaluator.close()


@needs_halide
def test_default_matmul_schedule_compiles_runs_and_is_correct(matmul):
    result = matmul(matmul_space().default_config())
    assert result.feasible, result.error
    assert 0 < result.values["time"] < 1000


@needs_halide
def test_vectorising_the_reduction_is_a_compile_failure(matmul):
    cfg = dict(matmul_space().default_config(), vec_loop="k", vector=8)
    result = matmul(cfg)
    assert not result.feasible and result.kind == "compile"
    assert "race condition" in result.error


@needs_halide
def test_known_infeasible_schedule_is_rejected_without_running(matmul):
    cfg = dict(matmul_space().default_config(), vector=16, tile_x=8)
    result = matmul(cfg)
    assert result.kind == "invalid"


@needs_halide
def test_timeout_kills_the_evaluation_and_the_server_recovers(matmul):
    timeout = matmul.timeout
    matmul.timeout = 0.01
    try:
        result = matmul(dict(matmul_space().default_config(), tile_x=16))
    finally:
        matmul.timeout = timeout
    assert result.kind == "timeout"
    assert matmul(matmul_space().default_config()).feasible


@needs_halide
def test_blur_spaces_are_well_formed():
    space = blur_space()
    assert space.is_feasible(space.to_matrix([space.default_config()]))[0]
    assert space.count_feasible() > 10_000


@needs_halide
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
