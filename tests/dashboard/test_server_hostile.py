"""The dashboard under hostile clients: idle connections are dropped and bounded, a client that
hangs up leaves no traceback, a ``Host`` that is not ours (DNS rebinding) is refused, and a
damaged journal still gets a JSON answer."""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import threading
import time

from bayestune.dashboard import server as server_module
from bayestune.dashboard.server import allowed_host
from tests.export.conftest import config, write_journal


def _request(server, host_header: str, path: str = "/api/state") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host_header)
    conn.endheaders()
    response = conn.getresponse()
    try:
        return response.status, response.read()
    finally:
        conn.close()


def test_only_our_own_names_are_served():
    assert allowed_host("127.0.0.1:8765", "127.0.0.1") and allowed_host("localhost:80", "127.0.0.1")
    assert allowed_host("[::1]:8765", "::1") and allowed_host(socket.gethostname(), "0.0.0.0")
    assert not allowed_host("evil.example:8765", "127.0.0.1") and not allowed_host(None, "127.0.0.1")
    assert not allowed_host("localhost.evil.example", "127.0.0.1")


def test_a_rebinding_host_header_is_refused(tmp_path, serve_journal):
    server = serve_journal(write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 2.0})]))
    assert _request(server, "evil.example:8765")[0] == 421
    status, body = _request(server, f"127.0.0.1:{server.server_address[1]}")
    assert status == 200 and json.loads(body)["trials"]


def test_idle_connections_are_bounded_and_dropped(tmp_path, serve_journal, monkeypatch):
    monkeypatch.setattr(server_module._Handler, "timeout", 0.5)
    server = serve_journal(write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 2.0})]))
    before = threading.active_count()
    idle = [socket.create_connection(server.server_address[:2]) for _ in range(server_module.MAX_CONNECTIONS + 40)]
    time.sleep(0.3)
    assert threading.active_count() - before <= server_module.MAX_CONNECTIONS
    time.sleep(1.5)  # past the timeout: every idle connection is dropped, its thread gone
    assert threading.active_count() - before <= 1
    for s in idle:
        s.close()
    assert _request(server, "localhost")[0] == 200


def test_a_client_that_hangs_up_leaves_no_traceback(tmp_path, serve_journal, capfd):
    server = serve_journal(write_journal(tmp_path / "r.db", [(config(i, 0.0), {"runtime": 2.0}) for i in range(1, 60)]))
    for _ in range(20):
        s = socket.create_connection(server.server_address[:2])
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\n\r\n")
        s.close()  # reset before the answer is written
    time.sleep(0.5)
    assert "Traceback" not in capfd.readouterr().err


def test_a_damaged_journal_still_gets_a_json_answer(tmp_path, serve_journal):
    path = write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 2.0})])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE trials SET config = '5'")
    conn.commit()
    conn.close()
    status, body = _request(serve_journal(path), "localhost")
    assert status in (500, 503) and "error" in json.loads(body)
