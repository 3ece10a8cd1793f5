"""A burst of requests is answered, not refused (issue 41 item 9: 300 at once, 165-178 answered
within 60 s): connections beyond the limit wait, the kernel queues the rest, and one snapshot of
the journal serves every request of its short reuse window."""

from __future__ import annotations

import time

from bayestune.dashboard import server as server_module
from benchmarks.dashboard_load import hammer, write_run


def test_three_hundred_requests_at_once_are_all_answered(tmp_path, serve_journal):
    write_run(tmp_path / "run.db", 200)
    server = serve_journal(tmp_path / "run.db")
    times, failed, _ = hammer(server.url + "api/state", 300, 60.0)
    assert failed == 0 and len(times) == 300
    assert max(times) < 30.0


def test_one_snapshot_serves_the_requests_of_its_window(tmp_path, serve_journal, monkeypatch):
    write_run(tmp_path / "run.db", 5)
    server = serve_journal(tmp_path / "run.db")
    calls = []
    real = server.view.snapshot
    monkeypatch.setattr(server.view, "snapshot", lambda: calls.append(1) or real())
    first = server.state_json()
    assert server.state_json() == first and len(calls) == 1
    time.sleep(server_module.SNAPSHOT_REUSE_SECONDS + 0.05)
    server.state_json()
    assert len(calls) == 2
