"""When every Dask worker is gone the run says so at once and stops, resumable, after the
patience: it never waits silently forever."""

from __future__ import annotations

import logging
import sys
import threading
import time

import pytest

distributed = pytest.importorskip("distributed")

from bayestune.execution import (  # noqa: E402
    CommandFactory,
    dask_backend,  # noqa: E402
    run,
)
from bayestune.execution.dask_backend import DaskBackend, SchedulerLost  # noqa: E402
from bayestune.optimizer import Optimizer  # noqa: E402
from bayestune.space import Integer, Space  # noqa: E402
from bayestune.storage import Journal  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_losing_every_worker_warns_and_stops_the_run_resumably(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(dask_backend, "WORKER_CHECK_SECONDS", 0.5)
    monkeypatch.setattr(dask_backend, "NO_WORKERS_PATIENCE_SECONDS", 3.0)
    local = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1", dashboard_address=None, silence_logs=50
    )
    try:
        journal = Journal(tmp_path / "run.db")
        opt = Optimizer(Space([Integer("x", 0, 99)]), strategy="cot_random", seed=2, journal=journal)
        backend = DaskBackend(CommandFactory("sleep 0.3; echo {x}", ["value"], timeout=30), local.scheduler_address)

        def on_trial(_trial):
            if opt.n_evaluated == 2:
                threading.Thread(target=local.scale, args=(0,), daemon=True).start()

        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="bayestune"):
            with pytest.raises(SchedulerLost, match="no Dask worker connected"):
                run(opt, None, 40, backend=backend, callback=on_trial)
        assert time.monotonic() - start < 60
        assert any("no worker is connected" in r.getMessage() for r in caplog.records)
        assert 2 <= journal.n_finished() < 40
        journal.close()
    finally:
        local.close()
