"""Present so that pytest puts the repository root on sys.path: the tests import `benchmarks`.

It also marks the test functions listed in ``tests/slow_tests.txt`` as ``slow`` (pyproject's
addopts keep those out of a plain ``pytest``; ``.ci/run`` runs them). One list, not a decorator
in each file: the list is what ``pytest --durations`` measured, and it is kept in one place.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SLOW_LIST = Path(__file__).parent / "tests" / "slow_tests.txt"


def _slow_functions() -> set[str]:
    lines = SLOW_LIST.read_text().splitlines() if SLOW_LIST.exists() else []
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = _slow_functions()
    for item in items:
        if item.nodeid.split("[", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
