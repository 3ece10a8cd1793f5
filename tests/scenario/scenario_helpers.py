"""Shared fixtures of the scenario tests: a full native scenario, the data folders, and a
helper that returns the ScenarioError a mapping raises."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bayestune.exceptions import ScenarioError
from bayestune.scenario import scenario_from_dict

DATA = Path(__file__).parent.parent / "data" / "scenarios"
T1_DIR = Path(__file__).parent.parent / "data" / "t1"  # copied with their licence: see its README
T1_FILES = sorted(T1_DIR.glob("*.json"))

NATIVE = {
    "name": "blur",
    "parameters": [
        {
            "name": "tile_x",
            "type": "ordinal",
            "values": [1, 2, 4, 8, 16, 32],
            "log": True,
            "default": 8,
            "prior": "decay",
        },
        {"name": "tile_y", "type": "integer", "bounds": [1, 64], "log": True, "default": 4, "prior": [2.0, 3.0]},
        {"name": "alpha", "type": "real", "bounds": [0.001, 1.0], "log": True, "prior": {"alpha": 2, "beta": 2}},
        {"name": "mode", "type": "categorical", "values": ["a", "b", 3, True], "default": "b", "prior": [1, 2, 3, 4]},
        {"name": "order", "type": "permutation", "n": 4, "metric": "hamming", "default": [3, 2, 1, 0]},
    ],
    "constraints": ["tile_x * tile_y <= 256", "order[0] < order[1] or mode == 'a'"],
    "objectives": ["time", {"name": "gflops", "direction": "maximize"}],
    "budget": 40,
    "initial_design": {"method": "maximin", "size": 7, "include_default": False},
    "strategy": "random",
    "strategy_options": {"note": [1, 2]},
    "blackbox": {"python": "bench.py:run", "timeout": 12.5, "options": {"x": 1}},
    "seed": 3,
    "journal": "runs/blur.db",
    "feasible_output": "valid",
}


def native(**changes):
    data = copy.deepcopy(NATIVE)
    data.update(changes)
    return data


def error_of(data, source="x.json") -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(data, source=source)
    return info.value
