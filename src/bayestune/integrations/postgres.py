"""A real PostgreSQL server under pgbench as a black box, its statistics views as logged metrics.

Per configuration, :class:`PostgresTuner` copies a template cluster (made once by ``initdb`` and
``pgbench -i`` in a temporary directory), writes the knobs into the copy's postgresql.conf,
starts the server on a Unix socket in that directory (no TCP), zeroes the statistics, runs
pgbench and answers its throughput (``tps``, to maximise) or latency (``latency_ms``) with every
counter of the statistics views under a dotted name (``Database.blks_hit``,
``Checkpointer.num_requested``, ``Tables.pgbench_accounts.heap_blks_read``, ...) for
structured BO. A copy per evaluation gives every configuration the same starting data.

Knob values the server refuses (out of range, inconsistent) and servers that do not start are
failures carrying the reason from the server log; the server is stopped and the copy removed
after every evaluation, also on timeout and Ctrl-C; ``close()`` removes the workspace.

    tuner = PostgresTuner()
    opt = Optimizer(tuner.space(), objectives=[tuner.objective()], seed=0)
    best = opt.optimize(tuner, budget=30)
"""

from __future__ import annotations

import logging
import math
import re
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.integrations._postgres_pgbench import Pgbench, PgbenchReport, parse_report
from bayestune.integrations._postgres_server import (
    Binaries,
    Cluster,
    ServerStartError,
    ServerUser,
    StepFailed,
    StepTimeout,
    Workspace,
    missing_programs,
)
from bayestune.integrations._postgres_stats import (
    WAIT_FOR_CLIENTS_SQL,
    metrics_from_snapshot,
    reset_sql,
    snapshot_sql,
)
from bayestune.objectives import Objective
from bayestune.space import Categorical, Integer, Real, Space
from bayestune.space.parameter import Parameter
from bayestune.trial import FailureKind, Result

__all__ = ["DEFAULT_KNOBS", "DURABILITY_KNOBS", "OBJECTIVES", "Knob", "Pgbench", "PostgresTuner",
           "missing_programs"]

logger = logging.getLogger(__name__)

#: Units PostgreSQL accepts after a number in postgresql.conf.
UNITS = ("", "B", "kB", "MB", "GB", "TB", "us", "ms", "s", "min", "h", "d")
#: What an evaluation can answer as the objective, and which way is better.
OBJECTIVES = {"tps": "maximize", "latency_ms": "minimize"}
#: Seconds allowed beyond the warm-up and the measurement for copying, starting, reading and stopping.
SETUP_SECONDS = 120.0
#: Seconds allowed for making the template (initdb, pgbench -i at the workload's scale).
TEMPLATE_SECONDS_PER_SCALE = 10.0
_SETTING_NAME = re.compile(r"^[a-z_][a-z0-9_.]*$")


@dataclass(frozen=True)
class Knob:
    """One server setting searched over: a parameter named like the setting, and the unit its
    value is written in (``Knob(Integer("shared_buffers", 16, 4096, log=True), "MB")``)."""

    parameter: Parameter
    unit: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.parameter, Parameter):
            raise EvaluationError(f"Knob needs a bayestune parameter (Integer, Real, ...), but got {self.parameter!r}")
        if not _SETTING_NAME.match(self.parameter.name):
            raise EvaluationError(f"knob {self.parameter.name!r} is not a PostgreSQL setting name "
                                  "(lower-case letters, digits, '_' and '.')")
        if self.unit not in UNITS:
            raise EvaluationError(f"knob {self.parameter.name!r}: unit must be one of {list(UNITS)}, "
                                  f"but got {self.unit!r}")

    @property
    def name(self) -> str:
        return self.parameter.name

    def setting(self, value: Any) -> str:
        """The value as postgresql.conf spells it (``'256MB'``, ``'1.5'``, ``'on'``)."""
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(self.parameter, Integer):
            return f"{int(value)}{self.unit}"
        if isinstance(value, float):
            return f"{value:.6g}{self.unit}"
        return f"{value}{self.unit}"


#: Knobs that change speed but not what survives a crash, with ranges for a small machine
#: (a few GB of memory, two cores) and the server's defaults as defaults.
DEFAULT_KNOBS: tuple[Knob, ...] = (
    Knob(Integer("shared_buffers", 16, 4096, log=True, default=128), "MB"),
    Knob(Integer("work_mem", 64, 262144, log=True, default=4096), "kB"),
    Knob(Integer("effective_io_concurrency", 1, 256, log=True, default=1)),
    Knob(Real("random_page_cost", 1.0, 8.0, default=4.0)),
    Knob(Integer("wal_buffers", 32, 65536, log=True, default=4096), "kB"),
    Knob(Integer("checkpoint_timeout", 30, 1800, log=True, default=300), "s"),
    Knob(Integer("max_wal_size", 32, 8192, log=True, default=1024), "MB"),
    Knob(Real("checkpoint_completion_target", 0.1, 1.0, default=0.9)),
    Knob(Integer("max_parallel_workers_per_gather", 0, 4, default=2)),
    Knob(Integer("bgwriter_delay", 10, 10000, log=True, default=200), "ms"),
    Knob(Integer("bgwriter_lru_maxpages", 0, 1000, default=100)),
    Knob(Integer("wal_writer_delay", 1, 10000, log=True, default=200), "ms"),
    Knob(Integer("commit_delay", 0, 10000, default=0)),  # microseconds
    Knob(Integer("commit_siblings", 1, 100, log=True, default=5)),
    Knob(Categorical("wal_compression", ["off", "pglz", "lz4", "zstd"], default="off")),
)

#: Knobs that buy speed with durability (a crash can lose committed transactions or tear
#: pages): add them on purpose, e.g. ``DEFAULT_KNOBS + DURABILITY_KNOBS``.
DURABILITY_KNOBS: tuple[Knob, ...] = (
    Knob(Categorical("synchronous_commit", ["on", "off"], default="on")),
    Knob(Categorical("full_page_writes", ["on", "off"], default="on")),
)


def _check_knobs(knobs: Sequence[Knob], fixed: Mapping[str, str]) -> tuple[list[Knob], Space]:
    """The knobs and their space (which checks names are unique and there is at least one)."""
    knobs = list(knobs)
    for knob in knobs:
        if not isinstance(knob, Knob):
            raise EvaluationError(f"knobs must be Knob records, but got {knob!r}")
    space = Space([k.parameter for k in knobs])
    both = sorted({k.name for k in knobs} & set(fixed))
    if both:
        raise EvaluationError(f"settings {both} are both searched (knobs) and fixed (settings=); keep one")
    return knobs, space


class PostgresTuner(Evaluator):
    """PostgreSQL under pgbench: a configuration of ``knobs`` in, throughput (or latency) and
    the statistics views out.

    ``objective`` is ``"tps"`` (maximise) or ``"latency_ms"`` (minimise); the other is
    reported too. ``settings`` are fixed for every evaluation (``{"synchronous_commit": "off"}``).
    ``run_as`` names the account the server runs as (default: ``postgres`` when we are root,
    else ourselves); ``bindir`` where the PostgreSQL programs are (default: ``PATH``);
    ``workdir`` where the temporary workspace goes (default: the system's temp directory,
    which must be short enough for a Unix socket path). ``timeout`` bounds one evaluation
    (default: warm-up + duration + 120 s). The template cluster is made on the first
    evaluation (or by :meth:`prepare`). One evaluation at a time per tuner (they share the
    workspace's socket); parallel workers each build their own tuner.
    """

    def __init__(self, knobs: Sequence[Knob] = DEFAULT_KNOBS, workload: Pgbench | None = None, *,
                 objective: str = "tps", settings: Mapping[str, Any] | None = None, run_as: str | None = None,
                 bindir: str | Path | None = None, workdir: str | Path | None = None,
                 timeout: float | None = None) -> None:
        if objective not in OBJECTIVES:
            raise EvaluationError(f"objective must be one of {list(OBJECTIVES)}, but got {objective!r}")
        super().__init__([objective])
        self.workload = workload if workload is not None else Pgbench()
        if not isinstance(self.workload, Pgbench):
            raise EvaluationError(f"workload must be a Pgbench record, but got {self.workload!r}")
        self.settings = {str(k): _fixed_setting(k, v) for k, v in (settings or {}).items()}
        self.knobs, self._space = _check_knobs(knobs, self.settings)
        busy = self.workload.warmup + self.workload.duration
        self.timeout = float(timeout) if timeout is not None else busy + SETUP_SECONDS
        if not math.isfinite(self.timeout) or self.timeout <= busy:
            raise EvaluationError(f"timeout must exceed the warm-up plus the duration ({busy} s), "
                                  f"but got {timeout!r}")
        self.binaries = Binaries.find(bindir)
        self.user = ServerUser.resolve(run_as)
        self._workdir = workdir
        self._workspace: Workspace | None = None
        self._template: Cluster | None = None
        self._version = 0
        self._finalizer: weakref.finalize | None = None

    # ---- what it searches and optimises --------------------------------------------------
    def space(self) -> Space:
        return self._space

    def objective(self) -> Objective:
        """The objective with its direction, for ``Optimizer(objectives=[...])``."""
        return Objective(self.objectives[0], OBJECTIVES[self.objectives[0]])

    def server_settings(self, config: Mapping[str, Any]) -> dict[str, str]:
        """The postgresql.conf lines of ``config``: the fixed settings, then the knobs."""
        missing = [k.name for k in self.knobs if k.name not in config]
        if missing:
            raise EvaluationError(f"configuration lacks knob(s) {missing}; it has {sorted(config)}")
        return {**self.settings, **{k.name: k.setting(config[k.name]) for k in self.knobs}}

    @property
    def server_version(self) -> int:
        """``server_version_num`` of the server (0 until the template exists)."""
        return self._version

    # ---- lifecycle ------------------------------------------------------------------------
    def prepare(self) -> None:
        """Make the template cluster once: initdb, base settings, pgbench tables, a checkpoint.

        Raises EvaluationError with the reason when that fails: nothing can be measured then.
        """
        if self._template is not None:
            return
        workspace = Workspace(self.user, self._workdir)
        self._finalizer = weakref.finalize(self, workspace.cleanup)
        self._workspace = workspace
        template = workspace.cluster("template", self.binaries)
        budget = 60.0 + TEMPLATE_SECONDS_PER_SCALE * self.workload.scale
        try:
            template.initdb(timeout=budget)
            template.configure(self._base_settings())
            template.start(timeout=budget)
            try:
                self._version = int(template.psql("SHOW server_version_num", budget, step="reading the version"))
                template.pgbench(self.workload.init_args(), budget, step="pgbench -i")
                template.psql("CHECKPOINT", budget, step="checkpoint")
            finally:
                template.stop()
        except (StepFailed, StepTimeout, ServerStartError, ValueError) as exc:
            self.close()
            raise EvaluationError(f"cannot make the PostgreSQL template cluster: {exc}") from None
        self._template = template
        logger.info("PostgreSQL %s template cluster (pgbench scale %d) in %s", self._version,
                    self.workload.scale, template.data_dir)

    def _base_settings(self) -> dict[str, str]:
        assert self._workspace is not None
        return {"listen_addresses": "", "unix_socket_directories": str(self._workspace.root),
                "track_io_timing": "on", "track_wal_io_timing": "on", "logging_collector": "off"}

    def close(self) -> None:
        """Stop any server still running and remove the workspace (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
        self._workspace = None
        self._template = None

    # ---- one evaluation -------------------------------------------------------------------
    def evaluate(self, config: Mapping[str, Any]) -> Result:
        settings = self.server_settings(config)
        self.prepare()
        assert self._workspace is not None and self._template is not None
        deadline = time.monotonic() + self.timeout
        trial = self._workspace.cluster("trial", self.binaries)
        try:
            trial.copy_from(self._template, timeout=deadline - time.monotonic())
            trial.configure(settings)
            try:
                trial.start(timeout=deadline - time.monotonic())
            except ServerStartError as exc:
                return Result.failure(f"the server did not start: {exc}", FailureKind.CRASH)
            report, metrics = self._measure(trial, deadline)
        except StepTimeout as exc:
            return Result.failure(f"{exc} (evaluation time limit {self.timeout:.0f} s)", FailureKind.TIMEOUT)
        except StepFailed as exc:
            reason = trial.failure_reason()
            return Result.failure(f"{exc}" + (f"\nserver log: {reason}" if reason else ""), FailureKind.CRASH)
        except ValueError as exc:
            return Result.failure(str(exc), FailureKind.PARSE)
        finally:
            trial.stop()
            trial.remove()
        values = {"tps": report.tps, "latency_ms": report.latency_ms, "Pgbench.failed": float(report.failed),
                  **metrics}
        if math.isfinite(report.connection_ms):
            values["Pgbench.connection_ms"] = report.connection_ms
        return Result(values=values)

    def _measure(self, trial: Cluster, deadline: float) -> tuple[PgbenchReport, dict[str, float]]:
        """Warm up, zero the counters, run the measured load, read the counters."""
        load = self.workload
        if load.warmup:
            trial.pgbench(load.run_args(load.warmup), deadline - time.monotonic(), step="pgbench warm-up")
        trial.psql(reset_sql(self._version), deadline - time.monotonic(), step="resetting the statistics")
        out = trial.pgbench(load.run_args(load.duration), deadline - time.monotonic(), step="pgbench")
        report = parse_report(out)
        trial.psql(WAIT_FOR_CLIENTS_SQL, deadline - time.monotonic(), step="waiting for pgbench's sessions to end")
        snapshot = trial.psql(snapshot_sql(self._version), deadline - time.monotonic(), step="reading the statistics")
        return report, metrics_from_snapshot(snapshot)

    def __repr__(self) -> str:
        return (f"PostgresTuner({len(self.knobs)} knobs, objective={self.objectives[0]!r}, "
                f"pgbench scale {self.workload.scale}, {self.workload.clients} clients, {self.workload.duration} s)")


def _fixed_setting(name: Any, value: Any) -> str:
    if not isinstance(name, str) or not _SETTING_NAME.match(name):
        raise EvaluationError(f"settings: {name!r} is not a PostgreSQL setting name")
    if isinstance(value, bool):
        return "on" if value else "off"
    if not isinstance(value, (str, int, float)):
        raise EvaluationError(f"settings: {name} must be a string or a number, but got {value!r}")
    return str(value)
