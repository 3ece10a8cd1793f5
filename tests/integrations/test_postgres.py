"""PostgreSQL under pgbench as a black box: knobs, reports, statistics, and a few real evaluations."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys

import pytest

from bayestune.exceptions import EvaluationError
from bayestune.integrations.postgres import DEFAULT_KNOBS, Knob, PostgresTuner, missing_programs, server
from bayestune.integrations.postgres.pgbench import Pgbench, parse_report
from bayestune.integrations.postgres.stats import metrics_from_snapshot, reset_sql, snapshot_sql
from bayestune.optimizer import Optimizer
from bayestune.space import Categorical, Integer, Real
from bayestune.trial import FailureKind, TrialStatus

REPORT = """pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 10
number of transactions actually processed: 11288
number of failed transactions: 0 (0.000%)
latency average = 1.770 ms
initial connection time = 8.287 ms
tps = 2259.397124 (without initial connection time)
"""


def _can_run_server() -> str | None:
    """Why live tests cannot run here, or None when they can."""
    missing = missing_programs()
    if missing:
        return f"PostgreSQL programs {missing} are not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(server.DEFAULT_SERVER_USER)
        except KeyError:
            return "running as root and there is no 'postgres' account to run the server as"
    return None


SKIP_LIVE = _can_run_server()
live = pytest.mark.skipif(SKIP_LIVE is not None, reason=SKIP_LIVE or "")


# ---- knobs -------------------------------------------------------------------------------
def test_knob_settings_are_written_with_their_units():
    assert Knob(Integer("shared_buffers", 16, 4096, log=True), "MB").setting(256) == "256MB"
    assert Knob(Real("random_page_cost", 1.0, 8.0)).setting(1.25) == "1.25"
    assert Knob(Categorical("wal_compression", ["off", "lz4"])).setting("lz4") == "lz4"
    assert Knob(Categorical("synchronous_commit", [True, False])).setting(False) == "off"


def test_knob_rejects_bad_names_and_units():
    with pytest.raises(EvaluationError, match="setting name"):
        Knob(Integer("SharedBuffers", 1, 2))
    with pytest.raises(EvaluationError, match="unit must be one of"):
        Knob(Integer("shared_buffers", 16, 64), "megabytes")


def test_default_knobs_start_at_the_server_defaults():
    defaults = {k.name: k.setting(k.parameter.default) for k in DEFAULT_KNOBS}
    assert defaults["shared_buffers"] == "128MB" and defaults["max_wal_size"] == "1024MB"
    assert defaults["checkpoint_timeout"] == "300s" and defaults["commit_delay"] == "0"


def test_tuner_refuses_a_setting_both_searched_and_fixed():
    with pytest.raises(EvaluationError, match=r"\['shared_buffers'\] are both searched"):
        PostgresTuner(settings={"shared_buffers": "1GB"})


def test_tuner_refuses_an_unknown_objective_and_a_timeout_below_the_run():
    with pytest.raises(EvaluationError, match="objective must be one of"):
        PostgresTuner(objective="throughput")
    with pytest.raises(EvaluationError, match="timeout must exceed"):
        PostgresTuner(workload=Pgbench(duration=10, warmup=5), timeout=12)


# ---- pgbench -------------------------------------------------------------------------------
def test_pgbench_workload_checks_its_fields():
    with pytest.raises(EvaluationError, match="threads <= clients"):
        Pgbench(clients=2, threads=4)
    with pytest.raises(EvaluationError, match="Pgbench.duration must be an integer >= 1"):
        Pgbench(duration=0)
    with pytest.raises(EvaluationError, match="builtin must be one of"):
        Pgbench(builtin="tpc-c")
    assert Pgbench(clients=8, threads=2, duration=7).run_args(7)[-6:] == ["-c", "8", "-j", "2", "-T", "7"]


REPORT_QUERY = "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"


def test_a_script_runs_besides_the_builtin_with_its_weights_or_alone():
    mixed = Pgbench(script=REPORT_QUERY, builtin_weight=9, script_weight=1)
    assert mixed.run_args(5, "/w/workload.sql")[:5] == ["-n", "-b", "tpcb-like@9", "-f", "/w/workload.sql@1"]
    alone = Pgbench(builtin="", script=REPORT_QUERY)
    assert alone.run_args(5, "/w/workload.sql")[:3] == ["-n", "-f", "/w/workload.sql@1"]
    assert Pgbench().run_args(5)[:3] == ["-n", "-b", "tpcb-like"]  # no script: as before, no weight
    with pytest.raises(EvaluationError, match="needs the file it was written to"):
        mixed.run_args(5)
    with pytest.raises(EvaluationError, match=r"or '' with a script"):
        Pgbench(builtin="")
    with pytest.raises(EvaluationError, match="Pgbench.script_weight must be an integer >= 1"):
        Pgbench(script=REPORT_QUERY, script_weight=0)
    with pytest.raises(EvaluationError, match="text of a pgbench script"):
        Pgbench(script=["SELECT 1"])


def test_pgbench_report_is_read():
    report = parse_report(REPORT)
    assert (report.tps, report.latency_ms, report.connection_ms, report.failed) == (2259.397124, 1.77, 8.287, 0)
    with pytest.raises(ValueError, match="no tps"):
        parse_report("pgbench: error: connection to server failed")


# ---- statistics views --------------------------------------------------------------------
PG15_SNAPSHOT = """{"database": {"datid": "5", "datname": "postgres", "xact_commit": 100, "blks_hit": 2000,
  "checksum_failures": null, "session_time": 12.5, "stats_reset": "2026-11-24T19:40:19+00:00"},
 "bgwriter": {"checkpoints_timed": 0, "checkpoints_req": 3, "buffers_checkpoint": 400, "buffers_clean": 7},
 "wal": {"wal_records": 900, "wal_bytes": 123456},
 "tables": [{"name": "pgbench_accounts", "activity": {"relid": "16390", "n_tup_upd": 100, "last_vacuum": null},
             "io": {"heap_blks_read": 5, "heap_blks_hit": 300}}],
 "indexes": [{"name": "pgbench_accounts_pkey", "activity": {"idx_scan": 100}, "io": {"idx_blks_hit": 250}}]}"""

PG17_SNAPSHOT = """{"database": {"xact_commit": 100}, "bgwriter": {"buffers_clean": 7},
 "checkpointer": {"num_timed": 0, "num_requested": 3, "buffers_written": 400}, "tables": null, "indexes": null}"""


def test_statistics_become_dotted_numeric_metrics():
    metrics = metrics_from_snapshot(PG15_SNAPSHOT)
    assert metrics["Database.xact_commit"] == 100 and metrics["Database.session_time"] == 12.5
    assert metrics["Checkpointer.num_requested"] == 3 and metrics["Checkpointer.buffers_written"] == 400
    assert metrics["Bgwriter.buffers_clean"] == 7 and "Bgwriter.checkpoints_req" not in metrics
    assert metrics["Wal.wal_bytes"] == 123456
    assert metrics["Tables.pgbench_accounts.n_tup_upd"] == 100
    assert metrics["Tables.pgbench_accounts.heap_blks_hit"] == 300
    assert metrics["Indexes.pgbench_accounts_pkey.idx_blks_hit"] == 250
    assert not any(
        name.endswith(("datid", "datname", "relid", "stats_reset", "checksum_failures", "last_vacuum"))
        for name in metrics
    )


def test_checkpointer_counters_have_the_same_names_before_and_after_postgresql_17():
    old = {k for k in metrics_from_snapshot(PG15_SNAPSHOT) if k.startswith("Checkpointer.")}
    new = {k for k in metrics_from_snapshot(PG17_SNAPSHOT) if k.startswith("Checkpointer.")}
    assert new <= old and "Checkpointer.num_requested" in new


def test_statistics_sql_follows_the_server_version():
    assert "pg_stat_checkpointer" not in snapshot_sql(150000) and "pg_stat_wal" in snapshot_sql(150000)
    assert "pg_stat_checkpointer" in snapshot_sql(170000)
    assert "SELECT pg_stat_reset_shared('checkpointer')" in reset_sql(170000)
    assert "SELECT pg_stat_reset_shared('checkpointer')" not in reset_sql(150000)
    with pytest.raises(ValueError, match="no JSON"):
        metrics_from_snapshot("ERROR: relation does not exist")


# ---- processes and accounts --------------------------------------------------------------
def test_a_program_past_its_time_is_killed_with_its_group(tmp_path):
    marker = tmp_path / "child.pid"
    script = f"import os, subprocess, time; p = subprocess.Popen(['sleep', '30']); open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(30)"
    with pytest.raises(server.StepTimeout, match="sleeper did not finish within"):
        server.run_program([sys.executable, "-c", script], server.ServerUser("me"), step="sleeper", timeout=1.0)
    child = int(marker.read_text())
    # The grandchild was in the killed group: it is gone (or a zombie of the reaped parent's init).
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(child)], capture_output=True, text=True).stdout.strip()
    assert state == "" or state.startswith("Z")  # ps adds flags such as N (niced) after the state letter


def test_a_failing_program_is_reported_with_its_output():
    with pytest.raises(server.StepFailed, match="probe exited with status 3: oops"):
        server.run_program(
            [sys.executable, "-c", "print('oops'); raise SystemExit(3)"],
            server.ServerUser("me"),
            step="probe",
            timeout=30,
        )


def test_programs_start_outside_a_working_directory_the_server_account_cannot_enter(tmp_path, monkeypatch):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.chdir(private)
    out = server.run_program(
        [sys.executable, "-c", "import os; print(os.getcwd())"], server.ServerUser("me"), step="probe", timeout=30
    )
    assert out.strip() == "/"


@pytest.mark.skipif(os.geteuid() != 0, reason="choosing the server's account is checked as root")
def test_root_never_runs_the_server_as_root():
    with pytest.raises(EvaluationError, match="refuse to run as root"):
        server.ServerUser.resolve("root")
    with pytest.raises(EvaluationError, match="no account 'no-such-user-xyz'"):
        server.ServerUser.resolve("no-such-user-xyz")


# ---- a real server -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tuner():
    t = PostgresTuner(workload=Pgbench(scale=1, clients=2, threads=1, duration=1))
    try:
        yield t
    finally:
        t.close()


@live
def test_a_real_evaluation_answers_tps_and_the_statistics_views(tuner):
    result = tuner(tuner.space().default_config())
    assert result.status is TrialStatus.OK, result.error
    assert result.values["tps"] > 0 and result.values["latency_ms"] > 0
    assert result.values["Database.xact_commit"] >= result.values["tps"] * 0.5  # counters were read after the run
    assert result.values["Tables.pgbench_accounts.n_tup_upd"] > 0
    assert "Checkpointer.num_requested" in result.values and "Wal.wal_bytes" in result.values
    root = tuner._workspace.root
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["template", "template.log"]


@live
def test_a_knob_value_the_server_refuses_is_a_failure_with_the_log_reason(tuner):
    result = tuner({**tuner.space().default_config(), "max_wal_size": 20})  # below 2 WAL segments
    assert result.status is TrialStatus.FAILED and result.kind == FailureKind.CRASH
    assert "max_wal_size" in result.error and "wal_segment_size" in result.error
    assert not (tuner._workspace.root / "trial").exists()


@live
def test_ctrl_c_during_the_run_still_stops_the_server(tuner, monkeypatch):
    seen = {}

    def interrupted(self, args, timeout, *, step):
        seen["pid_file"] = self.data_dir / "postmaster.pid"
        assert seen["pid_file"].exists()  # the server is up when the interrupt arrives
        raise KeyboardInterrupt

    monkeypatch.setattr(server.Cluster, "pgbench", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tuner(tuner.space().default_config())
    assert not seen["pid_file"].exists() and not (tuner._workspace.root / "trial").exists()


@live
def test_the_optimizer_maximises_tps(tuner):
    opt = Optimizer(tuner.space(), objectives=[tuner.objective()], strategy="random", seed=0)
    best = opt.optimize(tuner, budget=2)
    assert tuner.objective().direction == "maximize"
    assert best is not None and best.values["tps"] == max(t.values["tps"] for t in opt.trials)


@live
def test_a_workload_script_runs_on_the_real_server_with_a_warm_up():
    t = PostgresTuner(
        workload=Pgbench(scale=1, clients=2, threads=1, duration=1, warmup=1, builtin="", script=REPORT_QUERY)
    )
    try:
        result = t(t.space().default_config())
        assert result.status is TrialStatus.OK, result.error
        # only the script ran: reads, and the statistics zeroed after the warm-up saw no updates
        assert result.values["tps"] > 0 and result.values["Tables.pgbench_accounts.idx_scan"] > 0
        assert result.values["Tables.pgbench_accounts.n_tup_upd"] == 0
        assert (t._workspace.root / "workload.sql").read_text() == REPORT_QUERY
    finally:
        t.close()


@live
def test_close_removes_the_workspace(tuner):
    tuner.prepare()
    root = tuner._workspace.root
    tuner.close()
    tuner.close()  # idempotent
    assert not root.exists()
