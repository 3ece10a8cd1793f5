"""The fault-injection rows of the third round of hostile inputs (issue 29) that are quick to
replay: each must end with no traceback, no hang, no code injection and no evaluation lost.
(Damaged journals, read-only storage, Dask and the dashboard have their own tests under
``tests/storage``, ``tests/execution`` and ``tests/dashboard``.)"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX processes and /proc")

fault_injection = pytest.importorskip("benchmarks.fault_injection")

QUICK = [
    "1 self-referencing",
    "2 names into",
    "3 values into",
    "4 --resume through",
    "5 lock file planted",
    "7 500 MB",
    "11 sizes",
    "12 non-UTF-8",
]


def test_every_quick_hostile_fault_ends_clean():
    rows = fault_injection.run_faults(1, QUICK)
    assert len(rows) == len(QUICK)
    table = fault_injection.table(rows)
    assert all(r.failures == r.lost == r.tracebacks == r.hangs == r.injections == 0 for r in rows), table
