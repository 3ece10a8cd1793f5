"""examples/halide/tune_blur.py runs end to end: a few live evaluations, a best schedule, a resumable journal."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("halide") is None,
    reason="halide is not installed (pip install -e '.[halide]' in the bayestune checkout)",
)


def _run(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "halide" / "tune_blur.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_example_tunes_and_resumes(tmp_path):
    journal = tmp_path / "run.db"
    first = _run("--budget", "2", "--timeout", "60", "--journal", str(journal))
    assert first.returncode == 0, first.stderr
    assert "2 evaluations" in first.stdout and "default schedule:" in first.stdout
    second = _run("--budget", "3", "--timeout", "60", "--journal", str(journal))
    assert second.returncode == 0, second.stderr
    assert "3 evaluations" in second.stdout and "best found:" in second.stdout
    assert [ln[:3] for ln in second.stdout.splitlines() if ln.startswith("#")] == ["# 3"]  # only the new trial ran
