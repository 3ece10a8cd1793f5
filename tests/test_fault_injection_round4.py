"""The fault-injection rows of the fourth round (issue 41) that are quick to replay: each must end
clean. (A malformed page, read-only commands on a WAL and the dashboard burst have their own tests
under ``tests/storage`` and ``tests/dashboard``.)"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX processes and /proc")

fault_injection = pytest.importorskip("benchmarks.fault_injection")

QUICK = ["13 journal:", "15 one 100 MB line", "17 kill -9 after the first confirmation row"]


def test_every_quick_round_four_fault_ends_clean():
    rows = fault_injection.run_faults(1, QUICK)
    assert len(rows) == len(QUICK)
    table = fault_injection.table(rows)
    assert all(r.failures == r.lost == r.tracebacks == r.hangs == r.injections == 0 for r in rows), table
