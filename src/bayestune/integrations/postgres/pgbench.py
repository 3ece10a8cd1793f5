"""The pgbench workload: its settings, its command line and what its report says."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bayestune.exceptions import EvaluationError

#: pgbench's built-in scripts (``-b``).
BUILTINS = ("tpcb-like", "simple-update", "select-only")
#: pgbench's query protocols (``-M``).
PROTOCOLS = ("simple", "extended", "prepared")

_TPS = re.compile(r"^tps = ([0-9.eE+-]+)", re.MULTILINE)
_LATENCY = re.compile(r"^latency average = ([0-9.eE+-]+) ms", re.MULTILINE)
_CONNECT = re.compile(r"^initial connection time = ([0-9.eE+-]+) ms", re.MULTILINE)
_FAILED = re.compile(r"^number of failed transactions: (\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Pgbench:
    """What each evaluation runs: ``clients`` sessions on ``threads`` threads for ``duration`` s
    of the built-in script on a database of ``scale`` (x 100,000 accounts, about 16 MB each).

    ``warmup`` seconds of the same load run first, unmeasured, so the shared buffers are not
    cold. ``script`` is a pgbench script (SQL and ``\\set`` lines) run besides the built-in one,
    chosen ``script_weight`` times for every ``builtin_weight`` times of the built-in (pgbench's
    ``-b name@w -f file@w``); ``builtin=""`` runs the script alone. The defaults take about 5 s
    of measurement on a small 2-core machine.
    """

    scale: int = 10
    clients: int = 4
    threads: int = 2
    duration: int = 5
    warmup: int = 0
    builtin: str = "tpcb-like"
    protocol: str = "simple"
    script: str = ""
    builtin_weight: int = 1
    script_weight: int = 1

    def __post_init__(self) -> None:
        for name, low in (
            ("scale", 1),
            ("clients", 1),
            ("threads", 1),
            ("duration", 1),
            ("warmup", 0),
            ("builtin_weight", 1),
            ("script_weight", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise EvaluationError(f"Pgbench.{name} must be an integer >= {low}, but got {value!r}")
        if self.threads > self.clients:
            raise EvaluationError(
                f"Pgbench: `threads <= clients` must hold (pgbench's rule), but got "
                f"threads={self.threads}, clients={self.clients}"
            )
        if not isinstance(self.script, str):
            raise EvaluationError(f"Pgbench.script must be the text of a pgbench script, but got {self.script!r}")
        if self.builtin not in BUILTINS and not (self.builtin == "" and self.script.strip()):
            raise EvaluationError(
                f"Pgbench.builtin must be one of {list(BUILTINS)} (or '' with a script), but got {self.builtin!r}"
            )
        if self.protocol not in PROTOCOLS:
            raise EvaluationError(f"Pgbench.protocol must be one of {list(PROTOCOLS)}, but got {self.protocol!r}")

    def init_args(self) -> list[str]:
        """``pgbench -i``: create and fill the tables (quietly), vacuumed, with primary keys."""
        return ["-i", "-q", "-s", str(self.scale)]

    def run_args(self, seconds: int, script_file: str | None = None) -> list[str]:
        """A timed run; ``-n`` because the template was vacuumed when it was made. ``script_file``
        is where :attr:`script` was written (needed when there is one)."""
        if self.script.strip() and not script_file:
            raise EvaluationError("Pgbench has a script: run_args needs the file it was written to")
        mix: list[str] = []
        if self.builtin:
            mix += ["-b", f"{self.builtin}@{self.builtin_weight}" if self.script.strip() else self.builtin]
        if self.script.strip():
            mix += ["-f", f"{script_file}@{self.script_weight}"]
        return ["-n", *mix, "-M", self.protocol, "-c", str(self.clients), "-j", str(self.threads), "-T", str(seconds)]


@dataclass(frozen=True)
class PgbenchReport:
    """The numbers of one pgbench report."""

    tps: float
    latency_ms: float
    connection_ms: float
    failed: int


def parse_report(text: str) -> PgbenchReport:
    """Read pgbench's report; ValueError quoting the output when a number is missing."""
    tps, latency = _TPS.search(text), _LATENCY.search(text)
    if tps is None or latency is None:
        raise ValueError(f"pgbench reported no tps / latency average: {text.strip()[-800:]!r}")
    connect, failed = _CONNECT.search(text), _FAILED.search(text)
    return PgbenchReport(
        tps=float(tps.group(1)),
        latency_ms=float(latency.group(1)),
        connection_ms=float(connect.group(1)) if connect else float("nan"),
        failed=int(failed.group(1)) if failed else 0,
    )
