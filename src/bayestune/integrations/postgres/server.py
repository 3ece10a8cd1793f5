"""A throw-away PostgreSQL cluster: made by ``initdb`` in a temporary directory, reachable only
through a Unix socket there, always stopped and removed.

``initdb`` and the server refuse to run as root, so when we are root every PostgreSQL program
runs as another account (``postgres`` by default) through ``runuser``, and the workspace is
handed to that account. Every program runs in its own process group, killed as a whole when
its time is up or Ctrl-C arrives, so no stray ``pgbench`` outlives an evaluation.
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bayestune.evaluators.base import tail
from bayestune.exceptions import EvaluationError

logger = logging.getLogger(__name__)

#: The PostgreSQL programs a tuner runs.
PROGRAMS = ("initdb", "pg_ctl", "postgres", "pgbench", "psql")
#: The account the server runs as when we are root (initdb refuses root).
DEFAULT_SERVER_USER = "postgres"
#: Seconds a fast shutdown may take before the server is stopped immediately.
STOP_SECONDS = 60.0
#: Server log lines that explain why it refused to start or died.
_REASON = re.compile(
    r"FATAL|PANIC|ERROR|invalid|outside the valid range|could not|out of memory|"
    r"contains errors|unrecognized",
    re.IGNORECASE,
)
#: Lines of the server log quoted when no line matches ``_REASON``.
LOG_TAIL_LINES = 12
#: Environment of every program: English messages (they are parsed) and no stray connection defaults.
_ENV_DROP = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD", "PGSERVICE", "PGOPTIONS", "PGDATA")


class StepTimeout(Exception):
    """A program ran past its share of the evaluation's time limit (its process group was killed)."""

    def __init__(self, step: str, seconds: float) -> None:
        super().__init__(f"{step} did not finish within {seconds:.0f} s")
        self.step = step


class StepFailed(Exception):
    """A program exited non-zero; the message quotes the end of its output."""


class ServerStartError(Exception):
    """The server refused to start; the message is the reason from its log."""


@dataclass(frozen=True)
class Binaries:
    """Where the PostgreSQL programs are (a ``bindir``, else each found on ``PATH``)."""

    paths: Mapping[str, str]

    @classmethod
    def find(cls, bindir: str | Path | None = None) -> Binaries:
        missing = missing_programs(bindir)
        if missing:
            where = f"in {str(bindir)!r}" if bindir else "on PATH"
            raise EvaluationError(
                f"PostgreSQL programs {missing} not found {where}; install PostgreSQL "
                "(e.g. Debian's postgresql package) or pass bindir="
            )
        return cls({name: _locate(name, bindir) or name for name in PROGRAMS})

    def __getitem__(self, name: str) -> str:
        return self.paths[name]


def _locate(name: str, bindir: str | Path | None) -> str | None:
    if bindir is not None:
        candidate = Path(bindir) / name
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which(name)


def missing_programs(bindir: str | Path | None = None) -> list[str]:
    """The PostgreSQL programs that cannot be found (empty when all are there)."""
    return [name for name in PROGRAMS if _locate(name, bindir) is None]


@dataclass(frozen=True)
class ServerUser:
    """The account PostgreSQL programs run as, and the command prefix that switches to it."""

    name: str
    prefix: tuple[str, ...] = ()

    @classmethod
    def resolve(cls, run_as: str | None) -> ServerUser:
        """``run_as``, or ``postgres`` when we are root, else ourselves; checks the switch is possible."""
        me = pwd.getpwuid(os.geteuid()).pw_name
        root = os.geteuid() == 0
        name = run_as or (DEFAULT_SERVER_USER if root else me)
        try:
            pwd.getpwnam(name)
        except KeyError:
            raise EvaluationError(
                f"run_as: there is no account {name!r} to run the PostgreSQL server as; "
                "create one or pass run_as= an existing non-root user"
            ) from None
        if name == me and not root:
            return cls(name)
        if name == me or pwd.getpwnam(name).pw_uid == 0:
            raise EvaluationError(
                f"run_as={name!r}: initdb and postgres refuse to run as root; name another "
                f"account (default {DEFAULT_SERVER_USER!r})"
            )
        if not root:
            raise EvaluationError(
                f"run_as={name!r}: switching to another account needs root, but we run as "
                f"{me!r}; leave run_as unset to run the server as {me!r}"
            )
        runuser = shutil.which("runuser")
        if runuser is None:
            raise EvaluationError("running the server as another account needs the runuser program (util-linux)")
        return cls(name, (runuser, "-u", name, "--"))

    def give(self, path: Path) -> None:
        """Hand ``path`` (a directory we made) to this account when it is not ourselves."""
        if self.prefix:
            entry = pwd.getpwnam(self.name)
            os.chown(path, entry.pw_uid, entry.pw_gid)


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROP}
    env.update(LC_ALL="C", LANG="C", LANGUAGE="C")
    return env


def run_program(argv: Sequence[str], user: ServerUser, *, step: str, timeout: float) -> str:
    """Run ``argv`` as ``user``; its combined output, or StepFailed / StepTimeout.

    The program leads its own process group; the group is killed on timeout and on any
    exception here (Ctrl-C included), which is then raised on. It starts in ``/``: the server's
    account may not enter our working directory (PostgreSQL's programs then complain into the
    output that is parsed).
    """
    if timeout <= 0:
        raise StepTimeout(step, 0.0)
    proc = subprocess.Popen(
        [*user.prefix, *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_environment(),
        start_new_session=True,
        cwd="/",
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise StepTimeout(step, timeout) from None
    except BaseException:
        _kill_group(proc)
        raise
    text = out.decode(errors="replace")
    if proc.returncode != 0:
        raise StepFailed(f"{step} exited with status {proc.returncode}: {tail(text, 1500)}")
    return text


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class Workspace:
    """The temporary directory of one tuner: the clusters' data directories, logs and socket."""

    def __init__(self, user: ServerUser, parent: str | Path | None = None) -> None:
        self.user = user
        self.root = Path(tempfile.mkdtemp(prefix="bayestune-pg-", dir=parent))
        user.give(self.root)
        self.running: list[Cluster] = []

    def cluster(self, name: str, binaries: Binaries) -> Cluster:
        return Cluster(self, name, binaries)

    def cleanup(self) -> None:
        """Stop every server still running and remove the directory (safe to call twice)."""
        for cluster in list(self.running):
            cluster.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Cluster:
    """One data directory and the server on it; the socket is in the workspace directory."""

    def __init__(self, workspace: Workspace, name: str, binaries: Binaries) -> None:
        self.workspace = workspace
        self.binaries = binaries
        self.data_dir = workspace.root / name
        self.log_file = workspace.root / f"{name}.log"

    @property
    def socket_dir(self) -> Path:
        return self.workspace.root

    def _run(self, program: str, args: Sequence[str], *, step: str, timeout: float) -> str:
        return run_program([self.binaries[program], *args], self.workspace.user, step=step, timeout=timeout)

    def initdb(self, timeout: float) -> None:
        """A fresh cluster: no fsync while creating it, C locale, trust authentication on the socket."""
        self._run(
            "initdb",
            ["-D", str(self.data_dir), "-A", "trust", "-N", "-E", "UTF8", "--locale=C"],
            step="initdb",
            timeout=timeout,
        )

    def copy_from(self, template: Cluster, timeout: float) -> None:
        """This data directory as a copy of ``template``'s (a stopped server), owned by the server account."""
        run_program(
            ["cp", "-a", str(template.data_dir), str(self.data_dir)],
            self.workspace.user,
            step="copying the template cluster",
            timeout=timeout,
        )

    def configure(self, settings: Mapping[str, str]) -> None:
        """Append ``settings`` to postgresql.conf; later lines override the defaults above them."""
        lines = [f"{name} = '{value.replace(chr(39), chr(39) * 2)}'" for name, value in settings.items()]
        with open(self.data_dir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# set by bayestune\n" + "\n".join(lines) + "\n")

    def start(self, timeout: float) -> None:
        """Start the server and wait until it accepts connections; ServerStartError quotes its log."""
        self.workspace.running.append(self)
        try:
            self._run(
                "pg_ctl",
                [
                    "-D",
                    str(self.data_dir),
                    "-l",
                    str(self.log_file),
                    "-w",
                    "-s",
                    "-t",
                    str(max(1, int(timeout))),
                    "start",
                ],
                step="starting the server",
                timeout=timeout + 5.0,
            )
        except StepFailed as exc:
            raise ServerStartError(self.failure_reason() or str(exc)) from None

    def failure_reason(self) -> str:
        """Why the server refused to start or died, from its log: the error lines, else its end."""
        try:
            lines = self.log_file.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        reasons = [line.strip() for line in lines if _REASON.search(line)]
        return tail("\n".join(reasons or lines[-LOG_TAIL_LINES:]), 1500)

    def psql(self, commands: str | Sequence[str], timeout: float, *, step: str) -> str:
        """Run SQL ``commands`` (each its own transaction) in the ``postgres`` database; bare output."""
        commands = [commands] if isinstance(commands, str) else list(commands)
        args = ["-h", str(self.socket_dir), "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        for command in commands:
            args += ["-c", command]
        return self._run("psql", args, step=step, timeout=timeout)

    def pgbench(self, args: Sequence[str], timeout: float, *, step: str) -> str:
        return self._run("pgbench", ["-h", str(self.socket_dir), *args, "postgres"], step=step, timeout=timeout)

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        """Stop the server if it runs: fast shutdown, else immediate, else SIGKILL. Never raises."""
        if self in self.workspace.running:
            self.workspace.running.remove(self)
        pid = self._postmaster_pid()
        if pid is None:
            return
        for mode in ("fast", "immediate"):
            try:
                self._run(
                    "pg_ctl",
                    ["-D", str(self.data_dir), "-m", mode, "-w", "-s", "-t", str(int(STOP_SECONDS)), "stop"],
                    step=f"{mode} shutdown",
                    timeout=STOP_SECONDS + 5.0,
                )
                return
            except (StepFailed, StepTimeout) as exc:
                if self._postmaster_pid() is None:
                    return
                logger.warning("PostgreSQL in %s: %s", self.data_dir, exc)
        _kill_postmaster(pid)

    def remove(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
        try:
            self.log_file.unlink()
        except FileNotFoundError:
            pass


def _kill_postmaster(pid: int) -> None:
    """SIGKILL the postmaster; its children exit when they notice it is gone."""
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
