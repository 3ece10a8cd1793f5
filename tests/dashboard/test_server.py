"""The dashboard's HTTP routes, without a browser: the page, the JSON state, errors as JSON."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from bayestune.dashboard.server import DashboardServer, is_loopback
from bayestune.exceptions import BayestuneError
from tests.export.conftest import config, write_journal


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def test_page_and_state(tmp_path, serve_journal):
    path = write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 2.0}), (config(2, 0.0), None)])
    server = serve_journal(path, interval=0.5)
    assert server.url.startswith("http://127.0.0.1:")
    status, kind, body = get(server.url)
    assert status == 200 and kind.startswith("text/html")
    assert b"const POLL_MS = 500;" in body and b"__POLL_MS__" not in body
    status, kind, body = get(server.url + "api/state")
    state = json.loads(body)
    assert status == 200 and kind == "application/json"
    assert [t["trial"] for t in state["trials"]] == [1, 2] and state["counts"]["failed"] == 1
    assert get(server.url + "nothing")[0] == 404


def test_unreadable_journal_is_a_json_error(tmp_path, serve_journal):
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    status, kind, body = get(serve_journal(bad).url + "api/state")
    assert status == 503 and kind == "application/json"
    assert "bad.db" in json.loads(body)["error"]


def test_loopback_detection_and_a_busy_port(tmp_path, serve_journal):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    path = write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 2.0})])
    port = serve_journal(path).server_address[1]
    with pytest.raises(BayestuneError, match=f"cannot listen on 127.0.0.1:{port}"):
        DashboardServer(str(path), "127.0.0.1", port)
