"""Every entry of tests/slow_tests.txt names a test function that exists (a renamed or removed
test would otherwise quietly run in the default suite again)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_listed_slow_test_exists():
    missing = []
    for line in (ROOT / "tests" / "slow_tests.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, _, name = line.strip().partition("::")
        tree = ast.parse((ROOT / path).read_text()) if (ROOT / path).exists() else None
        if tree is None or name not in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}:
            missing.append(line)
    assert not missing, f"tests/slow_tests.txt names tests that do not exist: {missing}"
