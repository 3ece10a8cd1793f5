"""A dashboard server on a free loopback port, stopped after the test."""

from __future__ import annotations

import threading

import pytest

from bayestune.dashboard import DashboardServer


@pytest.fixture
def serve_journal():
    servers = []

    def start(path, **options):
        server = DashboardServer(str(path), "127.0.0.1", 0, **options)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
