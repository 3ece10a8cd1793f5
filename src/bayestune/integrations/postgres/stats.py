"""The server's statistics views as logged metrics with dotted names (Component.SubComponent.Metric).

BoGraph groups metrics by their name prefixes, so the names follow where the counter lives:
``Database.blks_hit`` (pg_stat_database), ``Checkpointer.num_requested`` and
``Bgwriter.buffers_clean`` (pg_stat_bgwriter before PostgreSQL 17, pg_stat_checkpointer and
pg_stat_bgwriter from 17 on: the checkpointer's counters get the PostgreSQL 17 names in both,
so runs on either version log the same names), ``Wal.wal_bytes`` (pg_stat_wal),
``Tables.<table>.heap_blks_hit`` (pg_stat_user_tables with pg_statio_user_tables) and
``Indexes.<index>.idx_blks_read`` (pg_stat_user_indexes with pg_statio_user_indexes).
Only numbers are kept: names, object ids (JSON strings) and timestamps are dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

#: PostgreSQL 17 moved the checkpointer's counters out of pg_stat_bgwriter.
CHECKPOINTER_VIEW_VERSION = 170000
#: pg_stat_wal exists from PostgreSQL 14.
WAL_VIEW_VERSION = 140000
#: pg_stat_io exists (and is reset on its own) from PostgreSQL 16.
IO_VIEW_VERSION = 160000

#: pg_stat_bgwriter's checkpoint columns before PostgreSQL 17 -> their names in pg_stat_checkpointer.
CHECKPOINTER_NAMES = {
    "checkpoints_timed": "num_timed",
    "checkpoints_req": "num_requested",
    "checkpoint_write_time": "write_time",
    "checkpoint_sync_time": "sync_time",
    "buffers_checkpoint": "buffers_written",
}

#: Waits until no other client is connected, so the backends of the benchmark have exited and
#: flushed their counters; pg_stat_clear_snapshot() lets the loop see pg_stat_activity change.
WAIT_FOR_CLIENTS_SQL = """DO $$
BEGIN
  FOR i IN 1..200 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid());
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$"""


def reset_sql(version: int) -> list[str]:
    """The statements that zero every counter read by :func:`snapshot_sql`."""
    shared = ["bgwriter", "wal"]
    if version >= IO_VIEW_VERSION:
        shared.append("io")
    if version >= CHECKPOINTER_VIEW_VERSION:
        shared.append("checkpointer")
    return ["SELECT pg_stat_reset()", *(f"SELECT pg_stat_reset_shared('{view}')" for view in shared)]


def snapshot_sql(version: int) -> str:
    """One query answering one JSON object with every statistics view this version has."""
    parts = [
        "'database', (SELECT row_to_json(d) FROM pg_stat_database d WHERE datname = current_database())",
        "'bgwriter', (SELECT row_to_json(b) FROM pg_stat_bgwriter b)",
        "'tables', (SELECT json_agg(json_build_object('name', s.relname, 'activity', row_to_json(s), "
        "'io', row_to_json(io))) FROM pg_stat_user_tables s JOIN pg_statio_user_tables io USING (relid))",
        "'indexes', (SELECT json_agg(json_build_object('name', s.indexrelname, 'activity', row_to_json(s), "
        "'io', row_to_json(io))) FROM pg_stat_user_indexes s JOIN pg_statio_user_indexes io USING (indexrelid))",
    ]
    if version >= WAL_VIEW_VERSION:
        parts.append("'wal', (SELECT row_to_json(w) FROM pg_stat_wal w)")
    if version >= CHECKPOINTER_VIEW_VERSION:
        parts.append("'checkpointer', (SELECT row_to_json(c) FROM pg_stat_checkpointer c)")
    return "SELECT json_build_object(" + ", ".join(parts) + ")"


def _numbers(row: Mapping[str, Any] | None) -> dict[str, float]:
    """The numeric columns of one view row (booleans, strings, NULLs and NaNs left out)."""
    out: dict[str, float] = {}
    for key, value in (row or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = float(value)
    return out


def metrics_from_snapshot(text: str) -> dict[str, float]:
    """Dotted metric names -> values, from the JSON answer of :func:`snapshot_sql`.

    Raises ValueError when ``text`` is not that JSON object.
    """
    try:
        snap = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the statistics query answered no JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(snap, dict):
        raise ValueError(f"the statistics query answered {type(snap).__name__}, not a JSON object")
    metrics: dict[str, float] = {}

    def put(prefix: str, values: Mapping[str, float]) -> None:
        metrics.update({f"{prefix}.{name}": value for name, value in values.items()})

    put("Database", _numbers(snap.get("database")))
    bgwriter = _numbers(snap.get("bgwriter"))
    checkpointer = {CHECKPOINTER_NAMES[k]: bgwriter.pop(k) for k in list(bgwriter) if k in CHECKPOINTER_NAMES}
    checkpointer.update(_numbers(snap.get("checkpointer")))
    put("Checkpointer", checkpointer)
    put("Bgwriter", bgwriter)
    put("Wal", _numbers(snap.get("wal")))
    for group, label in (("tables", "Tables"), ("indexes", "Indexes")):
        for entry in snap.get(group) or ():
            name = str(entry.get("name", "unnamed"))
            values = _numbers(entry.get("activity"))
            values.update(_numbers(entry.get("io")))
            put(f"{label}.{name}", values)
    return metrics
