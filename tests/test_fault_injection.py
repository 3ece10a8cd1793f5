"""The fault-injection benchmark (``benchmarks/fault_injection.py``) in CI size: one injection of
each fault that is quick to replay; every one must end clean with no evaluation lost. (kill -9
and resume, a second writer, and orphans are covered at length in ``test_crash_resume.py`` and
``evaluators/test_command.py``; losing the Dask scheduler in ``execution/test_dask_backend.py``.)"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX processes and /proc")

fault_injection = pytest.importorskip("benchmarks.fault_injection")

QUICK = [
    "background job",
    "setsid grandchild",
    "ambiguous output",
    "quoted placeholder",
    "damaged journal",
    "SIGTERM before SIGKILL",
    "every evaluation fails",
    "hostile scenario files",
    "validate:",
    "show piped",
    "backup of a running",
]


def test_every_quick_fault_ends_clean():
    rows = fault_injection.run_faults(1, QUICK)
    assert len(rows) == len(QUICK)
    table = fault_injection.table(rows)
    assert all(r.failures == 0 and r.lost == 0 for r in rows), table
