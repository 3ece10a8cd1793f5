"""A long-running tool's process for the external-process mode: its stdin, its stdout as
bounded lines read by a thread, the tail of its stderr, and how it is stopped.

Kept apart from the protocol (:mod:`bayestune.evaluators.external`): this part only moves bytes
and owns the process. A line is at most :data:`MAX_LINE_BYTES`: a tool printing without a
newline gets a protocol failure instead of growing bayestune's memory without bound.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping

from bayestune.evaluators.base import tail
from bayestune.evaluators.leftovers import with_run_marker
from bayestune.trial import FailureKind

logger = logging.getLogger(__name__)

#: Seconds the tool gets to exit after ``End`` before its process group is killed.
CLOSE_GRACE_SECONDS = 2.0
#: Lines of the tool's stderr kept for error messages.
STDERR_LINES = 40
#: Longest stdout line read from a tool (a tool printing without a newline is stopped here).
MAX_LINE_BYTES = 16 * 2**20
_TOO_LONG = object()
_EOF = object()


class ProtocolError(Exception):
    """The tool's answer breaks the protocol; ``kind`` is the failure kind to record."""

    def __init__(self, message: str, kind: str = FailureKind.PROTOCOL) -> None:
        super().__init__(message)
        self.kind = kind


class ToolProcess:
    """A running tool: its stdin, a thread turning its stdout into lines, the tail of its stderr."""

    def __init__(self, command: str, cwd: str | None, env: Mapping[str, str] | None) -> None:
        self.command = command
        try:
            self.proc = subprocess.Popen(
                command,
                shell=True,
                start_new_session=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=with_run_marker(env),
            )
        except OSError as exc:
            raise ProtocolError(f"cannot start external tool {command!r}: {exc}", FailureKind.CRASH) from None
        self.lines: queue.Queue = queue.Queue()
        self.line_no = 0  # stdout lines consumed so far
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        threading.Thread(target=self._pump_stdout, name=f"bayestune-tool-{self.proc.pid}-out", daemon=True).start()
        threading.Thread(target=self._pump_stderr, name=f"bayestune-tool-{self.proc.pid}-err", daemon=True).start()
        logger.debug("started external tool pid %d: %s", self.proc.pid, command)

    def _pump_stdout(self) -> None:
        """Lines of stdout, each at most :data:`MAX_LINE_BYTES`: a longer one (a tool printing
        without end) becomes one over-long marker and its rest is skipped, so memory stays bounded."""
        assert self.proc.stdout is not None
        skipping = False
        for raw in iter(lambda: self.proc.stdout.readline(MAX_LINE_BYTES + 1), b""):  # type: ignore[union-attr]
            complete = raw.endswith(b"\n")
            if skipping:
                skipping = not complete
                continue
            if not complete and len(raw) > MAX_LINE_BYTES:
                self.lines.put(_TOO_LONG)
                skipping = True
                continue
            self.lines.put(raw.decode(errors="replace").rstrip("\r\n"))
        self.lines.put(_EOF)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in iter(lambda: self.proc.stderr.readline(64 * 1024), b""):  # type: ignore[union-attr]
            self.stderr.append(raw.decode(errors="replace").rstrip("\r\n"))

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def read_line(self, deadline: float | None) -> str | None:
        """The next non-blank stdout line; None at end of output; TimeoutError past ``deadline``."""
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError from None
            if line is _EOF:
                self.lines.put(_EOF)  # keep answering "end of output"
                return None
            if line is _TOO_LONG:
                self.line_no += 1
                raise ProtocolError(
                    f"external tool {self.command!r} printed a line of more than {MAX_LINE_BYTES // 2**20} MB "
                    "(its rest skipped); answer one line per configuration"
                )
            self.line_no += 1
            if line.strip():
                return line

    def exit_note(self) -> str:
        """``"exited with code N"`` (waiting briefly for the exit status) plus the stderr tail."""
        try:
            rc = self.proc.wait(timeout=1.0)
            text = f"exited with code {rc}" if rc >= 0 else f"was killed by signal {-rc}"
        except subprocess.TimeoutExpired:
            text = "closed its stdout but is still running"
        return text + self.stderr_note()

    def stderr_note(self) -> str:
        time.sleep(0.05)  # let the stderr thread catch the last lines
        text = "\n".join(self.stderr).strip()
        return f"\nstderr (end):\n{tail(text, 1500)}" if text else ""

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            logger.warning("external tool pid %d did not die after SIGKILL", self.proc.pid)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def close(self) -> None:
        """Say ``End``, close stdin, give the tool a moment to exit, then kill its process group."""
        try:
            self.send("End\n")
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=CLOSE_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            logger.warning(
                "external tool %r did not exit within %.0f s of 'End'; killing it", self.command, CLOSE_GRACE_SECONDS
            )
        self.kill()


# ---- the evaluator ------------------------------------------------------------------------------
