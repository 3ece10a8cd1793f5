"""The PostgreSQL black box: per configuration a fresh copy of the template cluster, the knobs
written into it, the server started, pgbench run and the statistics views read (the package
docstring tells the whole story)."""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bayestune.evaluators.base import Evaluator
from bayestune.exceptions import EvaluationError
from bayestune.integrations.postgres.knobs import DEFAULT_KNOBS, Knob, check_knobs, fixed_setting
from bayestune.integrations.postgres.pgbench import Pgbench, PgbenchReport, parse_report
from bayestune.integrations.postgres.server import (
    Binaries,
    Cluster,
    ServerStartError,
    ServerUser,
    StepFailed,
    StepTimeout,
    Workspace,
)
from bayestune.integrations.postgres.stats import (
    WAIT_FOR_CLIENTS_SQL,
    metrics_from_snapshot,
    reset_sql,
    snapshot_sql,
)
from bayestune.objectives import Objective
from bayestune.space import Space
from bayestune.trial import FailureKind, Result

logger = logging.getLogger(__name__)

#: What an evaluation can answer as the objective, and which way is better.
OBJECTIVES = {"tps": "maximize", "latency_ms": "minimize"}
#: Seconds allowed beyond the warm-up and the measurement for copying, starting, reading and stopping.
SETUP_SECONDS = 120.0
#: Seconds allowed for making the template (initdb, pgbench -i at the workload's scale).
TEMPLATE_SECONDS_PER_SCALE = 10.0


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

    def __init__(
        self,
        knobs: Sequence[Knob] = DEFAULT_KNOBS,
        workload: Pgbench | None = None,
        *,
        objective: str = "tps",
        settings: Mapping[str, Any] | None = None,
        run_as: str | None = None,
        bindir: str | Path | None = None,
        workdir: str | Path | None = None,
        timeout: float | None = None,
    ) -> None:
        if objective not in OBJECTIVES:
            raise EvaluationError(f"objective must be one of {list(OBJECTIVES)}, but got {objective!r}")
        super().__init__([objective])
        self.workload = workload if workload is not None else Pgbench()
        if not isinstance(self.workload, Pgbench):
            raise EvaluationError(f"workload must be a Pgbench record, but got {self.workload!r}")
        self.settings = {str(k): fixed_setting(k, v) for k, v in (settings or {}).items()}
        self.knobs, self._space = check_knobs(knobs, self.settings)
        busy = self.workload.warmup + self.workload.duration
        self.timeout = float(timeout) if timeout is not None else busy + SETUP_SECONDS
        if not math.isfinite(self.timeout) or self.timeout <= busy:
            raise EvaluationError(f"timeout must exceed the warm-up plus the duration ({busy} s), but got {timeout!r}")
        self.binaries = Binaries.find(bindir)
        self.user = ServerUser.resolve(run_as)
        self._workdir = workdir
        self._workspace: Workspace | None = None
        self._template: Cluster | None = None
        self._version = 0
        self._finalizer: weakref.finalize | None = None
        self._script_file: Path | None = None

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
        if self.workload.script.strip():
            self._script_file = workspace.root / "workload.sql"
            self._script_file.write_text(self.workload.script, encoding="utf-8")
            self._script_file.chmod(0o644)
        self._template = template
        logger.info(
            "PostgreSQL %s template cluster (pgbench scale %d) in %s",
            self._version,
            self.workload.scale,
            template.data_dir,
        )

    def _base_settings(self) -> dict[str, str]:
        assert self._workspace is not None
        return {
            "listen_addresses": "",
            "unix_socket_directories": str(self._workspace.root),
            "track_io_timing": "on",
            "track_wal_io_timing": "on",
            "logging_collector": "off",
        }

    def close(self) -> None:
        """Stop any server still running and remove the workspace (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
        self._workspace = None
        self._template = None
        self._script_file = None

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
        values = {"tps": report.tps, "latency_ms": report.latency_ms, "Pgbench.failed": float(report.failed), **metrics}
        if math.isfinite(report.connection_ms):
            values["Pgbench.connection_ms"] = report.connection_ms
        return Result(values=values)

    def _measure(self, trial: Cluster, deadline: float) -> tuple[PgbenchReport, dict[str, float]]:
        """Warm up, zero the counters, run the measured load, read the counters."""
        load = self.workload
        script = str(self._script_file) if self._script_file is not None else None
        if load.warmup:
            trial.pgbench(load.run_args(load.warmup, script), deadline - time.monotonic(), step="pgbench warm-up")
        trial.psql(reset_sql(self._version), deadline - time.monotonic(), step="resetting the statistics")
        out = trial.pgbench(load.run_args(load.duration, script), deadline - time.monotonic(), step="pgbench")
        report = parse_report(out)
        trial.psql(WAIT_FOR_CLIENTS_SQL, deadline - time.monotonic(), step="waiting for pgbench's sessions to end")
        snapshot = trial.psql(snapshot_sql(self._version), deadline - time.monotonic(), step="reading the statistics")
        return report, metrics_from_snapshot(snapshot)

    def __repr__(self) -> str:
        return (
            f"PostgresTuner({len(self.knobs)} knobs, objective={self.objectives[0]!r}, "
            f"pgbench scale {self.workload.scale}, {self.workload.clients} clients, {self.workload.duration} s)"
        )
