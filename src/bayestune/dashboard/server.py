"""The dashboard's web server: the standard library's ``http.server``, two routes, no dependency.

Why no web framework: the page is one static file that polls one JSON endpoint, so
``ThreadingHTTPServer`` is all it needs, and ``pip install bayestune`` stays light. ``GET /``
is the page, ``GET /api/state`` the snapshot (:mod:`bayestune.dashboard.snapshot`). Bound to
127.0.0.1 unless ``--host`` says otherwise (then with a warning: the page shows every
configuration and error text of the run).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from bayestune.dashboard.snapshot import RunView
from bayestune.exceptions import BayestuneError

logger = logging.getLogger(__name__)


def page_html(interval: float) -> bytes:
    """The page, told how often to poll (milliseconds)."""
    text = resources.files("bayestune.dashboard").joinpath("page.html").read_text(encoding="utf-8")
    return text.replace("__POLL_MS__", str(int(interval * 1000))).encode("utf-8")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: Connections served at once (each is a thread) and seconds a connection may stay idle: idle
#: or slow clients cannot pile up threads. A connection beyond the limit waits for a free one (up
#: to the idle time, then it is closed), and the kernel queues up to :data:`ACCEPT_QUEUE` more:
#: a burst of requests is answered late, not refused (300 at once: all answered).
MAX_CONNECTIONS = 32
CONNECTION_TIMEOUT_SECONDS = 10.0
ACCEPT_QUEUE = 1024
#: Seconds a snapshot is served again to requests arriving meanwhile: a burst reads the journal
#: once, not once per request (the page polls every ``interval`` seconds, 2 by default).
SNAPSHOT_REUSE_SECONDS = 0.5


def allowed_host(header: str | None, bound_host: str) -> bool:
    """Whether a request's ``Host`` names this server: an IP address, ``localhost``, the ``--host``
    given or this machine's name. Any other name is a page of another site that resolved its own
    name to us (DNS rebinding) to read the run."""
    if not header:
        return False
    name = header.strip().lower()
    name = (
        name[1:].split("]", 1)[0] if name.startswith("[") else name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    )
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return name in {"localhost", bound_host.lower(), socket.gethostname().lower(), socket.getfqdn().lower()}


class DashboardServer(ThreadingHTTPServer):
    """An HTTP server over one :class:`RunView`; snapshots are taken one at a time and shared by
    the requests of :data:`SNAPSHOT_REUSE_SECONDS`, at most :data:`MAX_CONNECTIONS` connections are
    served at once (others wait for a free one), and a client that hangs up is not an error."""

    daemon_threads = True
    request_queue_size = ACCEPT_QUEUE  # listen() backlog: a burst is queued, not dropped

    def __init__(
        self,
        journal_path: str,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        interval: float = 2.0,
        importance_interval: float = 15.0,
    ) -> None:
        self.view = RunView(journal_path, importance_interval=importance_interval)
        self.page = page_html(interval)
        self._snapshot_lock = threading.Lock()
        self._latest: tuple[float, int, bytes] | None = None  # (monotonic time, status, body)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.bound_host = host
        try:
            super().__init__((host, port), _Handler)
        except OSError as exc:
            raise BayestuneError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if isinstance(host, bytes):  # only for a Unix socket address, which this server never binds
            host = host.decode()
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(timeout=CONNECTION_TIMEOUT_SECONDS):
            logger.debug(
                "dashboard: %d connections busy for %g s; closing one from %s",
                MAX_CONNECTIONS,
                CONNECTION_TIMEOUT_SECONDS,
                client_address,
            )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One log line, no traceback: a client that hangs up or times out is routine."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            logger.debug("dashboard: client %s went away (%s)", client_address, exc)
        else:
            logger.warning("dashboard: request from %s failed: %s: %s", client_address, type(exc).__name__, exc)

    def state_json(self) -> tuple[int, bytes]:
        """``(HTTP status, body)`` of ``/api/state``; a journal that cannot be read is a 503 naming why."""
        with self._snapshot_lock:
            latest = self._latest
            if latest is not None and time.monotonic() - latest[0] < SNAPSHOT_REUSE_SECONDS:
                return latest[1], latest[2]
            try:
                body: dict[str, Any] = self.view.snapshot()
                status = HTTPStatus.OK
            except BayestuneError as exc:
                body, status = {"error": " ".join(str(exc).split())}, HTTPStatus.SERVICE_UNAVAILABLE
            except Exception as exc:  # noqa: BLE001 - the page must get an answer, whatever the journal holds
                logger.warning("dashboard: cannot read %s: %s: %s", self.view.journal_path, type(exc).__name__, exc)
                body = {"error": f"cannot read the journal: {type(exc).__name__}: {' '.join(str(exc).split())}"}
                status = HTTPStatus.INTERNAL_SERVER_ERROR
            text = json.dumps(body, allow_nan=False).encode("utf-8")
            self._latest = (time.monotonic(), int(status), text)
        return int(status), text


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    timeout = CONNECTION_TIMEOUT_SECONDS  # http.server sets it on the socket: idle clients are dropped

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        if not allowed_host(self.headers.get("Host"), self.server.bound_host):
            self._send(
                HTTPStatus.MISDIRECTED_REQUEST,
                "text/plain; charset=utf-8",
                b"this server answers to its address, localhost or its host name only\n",
            )
        elif path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", self.server.page)
        elif path == "/api/state":
            status, body = self.server.state_json()
            self._send(status, "application/json", body)
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"not found\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        logger.debug("%s %s", self.address_string(), format % args)


def serve(
    journal_path: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    interval: float = 2.0,
    announce: Callable[[str], None] = logger.warning,
) -> None:
    """Serve the dashboard of ``journal_path`` until Ctrl-C."""
    server = DashboardServer(journal_path, host, port, interval=interval)
    if not is_loopback(host):
        announce(
            f"warning: listening on {host}, not loopback: anyone who can reach this machine on port "
            f"{server.server_address[1]} can read the run's configurations and errors"
        )
    announce(f"dashboard of {journal_path}: {server.url} (read only; Ctrl-C stops it)")
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
