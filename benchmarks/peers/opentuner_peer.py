"""OpenTuner as a single-objective peer (``opentuner``), driven through its "slave" API
``opentuner.api.TuningRunManager`` (``get_next_desired_result`` / ``report_result``).

Settings: OpenTuner's default search (the ``AUCBanditMetaTechniqueA`` ensemble: differential
evolution, Nelder-Mead/Torczon, greedy mutation, chosen by a multi-armed bandit) and its default
arguments except ``--database`` (an SQLite file in a temporary directory) and ``--no-dups``
(quiet about duplicates). OpenTuner draws from Python's ``random`` and NumPy's global
generator: both are seeded with the run's seed (and restored afterwards). Its initial
configurations come from its own techniques (no separate design).

Parameter mapping (``ConfigurationManipulator``):

* Real -> ``FloatParameter`` (``LogFloatParameter`` where log-scaled).
* Integer -> ``IntegerParameter`` (``LogIntegerParameter`` where log-scaled).
* Ordinal -> ``IntegerParameter`` over the index into the value list (OpenTuner has no ordinal
  type; ``EnumParameter`` would lose the order, ``PowerOfTwoParameter`` fits only some lists).
* Categorical -> ``EnumParameter`` over the values.
* Permutation -> ``PermutationParameter`` over the elements ``0..n-1`` (native): OpenTuner's
  value is the sequence of elements by position, bayestune's ``p[i]`` is element i's position.

Known constraints: OpenTuner cannot express them; a proposal outside the known-feasible set is
rejected free of charge by :class:`CountedObjective` and reported as
``Result(state="ERROR", time=inf)``, OpenTuner's native failed measurement, as is a hidden
failure. Guard: ``MAX_PROPOSALS`` proposals (notes in ``Trajectory.notes``).
"""

from __future__ import annotations

import logging
import math
import os
import random
import tempfile
from typing import Any

from bayestune.space import Categorical, Integer, Ordinal, Real
from benchmarks.budget import CountedObjective, ProposalGuard, Trajectory, run_measured
from benchmarks.contenders import register_strategy
from benchmarks.peers import missing
from benchmarks.problem import Problem

MAX_PROPOSALS = 200_000


def _available() -> str | None:
    return missing(("opentuner", "opentuner.api"), "pip install opentuner")


def build_manipulator(space: Any) -> Any:
    from opentuner.search.manipulator import (
        ConfigurationManipulator,
        EnumParameter,
        FloatParameter,
        IntegerParameter,
        LogFloatParameter,
        LogIntegerParameter,
        PermutationParameter,
    )

    m = ConfigurationManipulator()
    for p in space.parameters:
        if isinstance(p, Real):
            m.add_parameter((LogFloatParameter if p.log else FloatParameter)(p.name, p.low, p.high))
        elif isinstance(p, Integer):
            m.add_parameter((LogIntegerParameter if p.log else IntegerParameter)(p.name, p.low, p.high))
        elif isinstance(p, Ordinal):
            m.add_parameter(IntegerParameter(p.name, 0, len(p.values) - 1))
        elif isinstance(p, Categorical):
            m.add_parameter(EnumParameter(p.name, list(p.values)))
        elif p.kind == "permutation":
            m.add_parameter(PermutationParameter(p.name, list(range(p.n))))
        else:
            raise TypeError(f"no OpenTuner mapping for parameter {p!r}")
    return m


def from_opentuner(data: dict[str, Any], space: Any) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for p in space.parameters:
        v = data[p.name]
        if isinstance(p, Real):
            config[p.name] = min(max(float(v), p.low), p.high)
        elif isinstance(p, Integer):
            config[p.name] = int(v)
        elif isinstance(p, Ordinal):
            config[p.name] = p.values[int(v)]
        elif isinstance(p, Categorical):
            config[p.name] = v
        else:
            positions = [0] * p.n
            for k, element in enumerate(v):
                positions[int(element)] = k
            config[p.name] = tuple(positions)
    return config


def to_opentuner(config: dict[str, Any], space: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in space.parameters:
        v = p.validate(config[p.name])
        if isinstance(p, Ordinal):
            out[p.name] = p.values.index(v)
        elif p.kind == "permutation":
            out[p.name] = sorted(range(p.n), key=lambda i: v[i])
        else:
            out[p.name] = v
    return out


class OpenTunerContender:
    def __init__(self, max_proposals: int = MAX_PROPOSALS) -> None:
        self.max_proposals = max_proposals

    def run(self, problem: Problem, budget: int, seed: int) -> Trajectory:
        import numpy as np
        import opentuner
        from opentuner import MeasurementInterface, Result
        from opentuner.api import TuningRunManager

        logging.getLogger("opentuner").setLevel(logging.WARNING)
        space = problem.space
        name = problem.objective
        guard = ProposalGuard(self.max_proposals)

        class Interface(MeasurementInterface):
            def manipulator(self) -> Any:
                return build_manipulator(space)

            def run(self, desired_result: Any, input: Any, limit: Any) -> Any:  # pragma: no cover
                raise NotImplementedError("driven through TuningRunManager")

            def program_name(self) -> str:
                return f"bayestune_{problem.name}"

            def program_version(self) -> str:
                return "0"

            def save_final_config(self, configuration: Any) -> None:
                pass

        py_state, np_state = random.getstate(), np.random.get_state()
        random.seed(seed)
        np.random.seed(seed % 2**32)

        def drive(objective: CountedObjective) -> None:
            with tempfile.TemporaryDirectory(prefix="opentuner_") as d:
                args = opentuner.default_argparser().parse_args(
                    ["--database", "sqlite:///" + os.path.join(d, "opentuner.db"), "--no-dups"]
                )
                api = TuningRunManager(Interface(args=args), args)
                try:
                    while not objective.exhausted and guard.allow():
                        dr = api.get_next_desired_result()
                        if dr is None:
                            continue
                        config = from_opentuner(dr.configuration.data, space)
                        res = objective(config)  # BudgetExhausted ends the run
                        value = res.values.get(name) if res.status.value == "ok" else None
                        if value is not None and math.isfinite(value):
                            api.report_result(dr, Result(time=float(value)))
                        else:
                            api.report_result(dr, Result(state="ERROR", time=float("inf")))
                finally:
                    try:
                        api.finish()
                    except Exception:
                        pass

        try:
            trajectory = run_measured(problem, budget, drive)
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
        return guard.annotate(trajectory, budget)


register_strategy(
    "opentuner",
    lambda problem, seed: OpenTunerContender(),
    description=(
        "OpenTuner default search (AUCBanditMetaTechniqueA) via TuningRunManager; Python/NumPy "
        "global RNGs seeded; known constraints not expressible: rejected proposals and hidden "
        "failures reported as ERROR results; ordinals as integer indices, permutations native"
    ),
    family="peer",
    available=_available,
    packages=("opentuner",),
)
