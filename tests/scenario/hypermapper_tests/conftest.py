"""The tests of ``bayestune.scenario.hypermapper`` (the folder is not named ``hypermapper``: pytest
puts tests/scenario on sys.path, and such a folder would pass for the real package when a test
checks whether it is installed). The scenario tests' helpers are loaded by path."""

import importlib.util
import sys
from pathlib import Path

if "scenario_helpers" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "scenario_helpers", Path(__file__).resolve().parents[1] / "scenario_helpers.py"
    )
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["scenario_helpers"] = _module
    _spec.loader.exec_module(_module)
