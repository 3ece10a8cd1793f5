"""Benchmark problems with two objectives, both minimised (kind ``multiobjective``).

``chakong_haimes``
    ``f1 = 2 + (x-2)^2 + (y-1)^2``, ``f2 = 9x - (y-1)^2`` over ``x, y in [-20, 20]`` with the
    known constraints ``x^2 + y^2 <= 225`` and ``x - 3y + 10 <= 0`` (about 30 % of the box).
    Known Pareto set: ``x = -2.5``, ``2.5 <= y <= sqrt(225 - 6.25)``, i.e. the segment
    ``f2 = -0.25 - f1`` for ``f1`` in ``[24.5, 212.45]``.
``zdt_mixed``
    ZDT1 over mixed variables: ``x1`` real in [0, 1] is ``f1``; the distance function
    ``g = 1 + 9 * mean(x2/10, x3, c(x4), x5)`` reads an integer ``x2`` in 0..10, an ordinal
    ``x3`` in {0, .1, .2, .5, 1}, a categorical ``x4`` in {a, b, c} (c(a)=0, c(b)=.5, c(c)=1)
    and a real ``x5`` in [0, 1]; ``f2 = g (1 - sqrt(f1 / g))``. Hidden constraint: ``x4 = c``
    with ``x2 >= 5`` crashes (the true front, at g = 1, is unaffected). Known front:
    ``f2 = 1 - sqrt(f1)``.
``halide_blur_mo``
    The live Halide 3x3 blur schedule of :mod:`benchmarks.halide_problems` with two measured
    objectives: run time (ms) and JIT compile time (s). No known front: the reference front is
    the non-dominated set of every feasible evaluation of every run in the results file
    (HyperMapper 2.0's procedure). It reads and feeds the same
    measurement cache as ``halide_blur``, so all strategies and seeds see the same value for
    the same schedule.

Scoring: see :func:`benchmarks.metrics.hypervolume_ratio_curves`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from bayestune.space import Categorical, Integer, Ordinal, Real, Space
from bayestune.trial import Result
from benchmarks.halide_problems import blur_space, cache_path, measured_pipeline
from benchmarks.problem import Problem


def chakong_haimes_space() -> Space:
    return Space(
        [Real("x", -20.0, 20.0, default=-5.0), Real("y", -20.0, 20.0, default=5.0)],
        ["x**2 + y**2 <= 225", "x - 3*y + 10 <= 0"],
    )


def chakong_haimes(config: Mapping[str, Any]) -> dict[str, float]:
    x, y = float(config["x"]), float(config["y"])
    return {"f1": 2.0 + (x - 2.0) ** 2 + (y - 1.0) ** 2, "f2": 9.0 * x - (y - 1.0) ** 2}


def chakong_haimes_front(n: int = 2001) -> np.ndarray:
    y = np.linspace(2.5, math.sqrt(225.0 - 6.25), n)
    values = [chakong_haimes({"x": -2.5, "y": v}) for v in y]
    return np.array([[v["f1"], v["f2"]] for v in values])


ZDT_X3 = [0.0, 0.1, 0.2, 0.5, 1.0]
ZDT_X4 = {"a": 0.0, "b": 0.5, "c": 1.0}


def zdt_mixed_space() -> Space:
    return Space(
        [
            Real("x1", 0.0, 1.0),
            Integer("x2", 0, 10),
            Ordinal("x3", ZDT_X3),
            Categorical("x4", list(ZDT_X4)),
            Real("x5", 0.0, 1.0),
        ]
    )


def zdt_mixed(config: Mapping[str, Any]) -> Any:
    if config["x4"] == "c" and config["x2"] >= 5:
        return Result.failure("x4=c with x2>=5 does not build", "crash")
    g = 1.0 + 9.0 * (config["x2"] / 10.0 + config["x3"] + ZDT_X4[config["x4"]] + config["x5"]) / 4.0
    f1 = float(config["x1"])
    return {"f1": f1, "f2": g * (1.0 - math.sqrt(f1 / g))}


def zdt_front(n: int = 2001) -> np.ndarray:
    f1 = np.linspace(0.0, 1.0, n)
    return np.column_stack([f1, 1.0 - np.sqrt(f1)])


DESCRIPTIONS = {
    "chakong_haimes": "Chakong-Haimes: 2 reals, 2 known constraints; known linear front.",
    "zdt_mixed": "ZDT1 over real/integer/ordinal/categorical variables with a hidden constraint; known front.",
    "halide_blur_mo": "Live Halide 3x3 blur schedule (7 parameters incl. a permutation, 2 known constraints): "
    "run time (ms) vs JIT compile time (s) on this CPU; reference front = all runs' union.",
}
_FRONTS: dict[str, Callable[[], np.ndarray]] = {"chakong_haimes": chakong_haimes_front, "zdt_mixed": zdt_front}


def known_front(name: str) -> np.ndarray | None:
    """A dense sample of ``name``'s true Pareto front, or None where it is unknown (measured)."""
    factory = _FRONTS.get(name)
    return factory() if factory is not None else None


def _closed_form(name: str, space: Space, black_box: Callable[[Mapping[str, Any]], Any]) -> Problem:
    return Problem(
        name,
        "multiobjective",
        space,
        ["f1", "f2"],
        black_box,
        description=DESCRIPTIONS[name],
        pareto_front=known_front(name),
    )


def _halide_blur_mo() -> Problem:
    black_box = measured_pipeline("halide_blur")
    cache = cache_path("halide_blur")
    return Problem(
        "halide_blur_mo",
        "multiobjective",
        blur_space(),
        ["time", "compile_s"],
        black_box.evaluate,
        description=DESCRIPTIONS["halide_blur_mo"],
        timing_sensitive=True,
        close=black_box.close,
        metadata={"measurement_cache": str(cache) if cache else None},
    )


#: Name -> (builder, measured live).
MULTIOBJECTIVE_PROBLEMS: dict[str, tuple[Callable[[], Problem], bool]] = {
    "chakong_haimes": (lambda: _closed_form("chakong_haimes", chakong_haimes_space(), chakong_haimes), False),
    "zdt_mixed": (lambda: _closed_form("zdt_mixed", zdt_mixed_space(), zdt_mixed), False),
    "halide_blur_mo": (_halide_blur_mo, True),
}


def build_multiobjective_problem(name: str) -> Problem:
    if name not in MULTIOBJECTIVE_PROBLEMS:
        raise ValueError(f"unknown multi-objective problem {name!r}; known: {list(MULTIOBJECTIVE_PROBLEMS)}")
    return MULTIOBJECTIVE_PROBLEMS[name][0]()
