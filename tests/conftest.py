"""Shared fixtures: real journals written by the optimizer (for insight, plots and reports)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space
from bayestune.storage import Journal


def accelerator_space() -> Space:
    return Space(
        [
            Ordinal("tile", [4, 8, 16, 32, 64, 128], log=True),
            Integer("par", 1, 8),
            Categorical("pipe", ["off", "on"]),
            Real("clock", 0.5, 1.5),
            Permutation("order", 3),
        ],
        ["tile * par <= 512"],
    )


def accelerator(cfg: dict) -> dict:
    """A toy FPGA design: cycles fall and logic grows with parallelism; big designs don't fit
    (util > 90 is infeasible by output constraint); tile >= 64 with clock > 1.25 crashes."""
    if cfg["tile"] >= 64 and cfg["clock"] > 1.25:
        raise RuntimeError("timing closure failed")
    par, tile = cfg["par"], cfg["tile"]
    pipe = 1.0 if cfg["pipe"] == "on" else 0.0
    cycles = 1e5 / (par * (1 + pipe) * cfg["clock"]) * (1 + abs(math.log2(tile) - 4) / 4) * (1 + 0.1 * cfg["order"][0])
    util = 8 * par * (1 + 0.5 * pipe) * cfg["clock"] + tile / 16
    throughput = 1e6 / cycles
    return {"cycles": cycles, "throughput": throughput, "util": util}


@pytest.fixture(scope="session")
def mo_journal(tmp_path_factory) -> Path:
    """A two-objective run (cycles min, util min) with an output constraint and crashes."""
    path = tmp_path_factory.mktemp("journals") / "mo.db"
    with Journal(path) as journal:
        opt = Optimizer(
            accelerator_space(),
            objectives=[Objective("cycles"), Objective("util")],
            strategy="pareto_rf",
            strategy_options={"n_candidates": 2000, "rf": {"trees": 30}},
            seed=0,
            journal=journal,
            design=DesignSpec(size=8),
            output_constraints=["util <= 90"],
        )
        opt.optimize(accelerator, 24)
    return path


@pytest.fixture(scope="session")
def so_journal(tmp_path_factory) -> Path:
    """A one-objective run (throughput, maximised)."""
    path = tmp_path_factory.mktemp("journals") / "so.db"
    with Journal(path) as journal:
        opt = Optimizer(
            accelerator_space(),
            objectives=[Objective("throughput", "maximize")],
            strategy="random",
            seed=1,
            journal=journal,
            design=DesignSpec(size=5),
        )
        opt.optimize(accelerator, 14)
    return path
