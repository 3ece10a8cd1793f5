"""The SQLite journal's file layout: its tables, schema versions and migration, and how a
trial row is written and read back. Kept apart from :mod:`bayestune.storage.journal`, which
owns the connection, the transactions and the crash-safety rules around them.

Layout (schema version 2)::

    bayestune_schema(version, created_at)        -- marker: "this file is a bayestune journal"
    meta(key PRIMARY KEY, value)                 -- run metadata, JSON values
    trials(trial_id, config, config_key, status, "values", error, failure_kind,
           started_at, finished_at, batch, attempt, origin, repeats, timings)
    remeasurements(id, trial_id, round, "values", error, measured_at)

``repeats`` (JSON ``name -> [samples]``) keeps every repeated measurement behind a value and
``timings`` (JSON ``phase -> seconds``) where its time went; ``remeasurements`` holds the
interleaved rounds that re-measure the best trials before a winner is declared. A version 1
journal is migrated in place when opened (the two columns and the table are added; nothing
is rewritten), so old runs stay readable and resumable.

``config`` is the configuration as JSON (permutation tuples become JSON lists and come back
as lists unless a ``space`` is passed to the reading methods); ``config_key`` is a canonical
JSON form of the same configuration (sorted keys, integral floats written as integers),
indexed so the repeats of one configuration can be found with one index lookup.
``values`` is a JSON object ``name -> number`` holding objectives and extra metrics alike;
non-finite numbers are stored as ``null`` (JSON has no NaN) and read back as NaN.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bayestune._version import __version__
from bayestune.exceptions import JournalError
from bayestune.storage.base import META_CREATED_AT, META_VERSION, decode_repeats
from bayestune.trial import Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Version of the table layout written by this module (also stored as ``PRAGMA user_version``).
SCHEMA_VERSION = 2
#: ``PRAGMA application_id`` of bayestune journals ("BTun"), so tools like ``file`` can tell them apart.
APPLICATION_ID = 0x4254756E
#: The columns a new trial row is written with, and those a trial is read from.
INSERT_COLUMNS = (
    'config, config_key, status, "values", error, failure_kind, started_at, finished_at, batch, attempt, origin, '
    'repeats, timings'
)
TRIAL_COLUMNS = "trial_id, " + INSERT_COLUMNS

#: The tables and indexes of a new journal (the re-measurement table is :data:`REMEASUREMENTS_TABLE`).
TABLES = """
CREATE TABLE bayestune_schema (
    version    INTEGER NOT NULL,
    created_at REAL    NOT NULL
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE trials (
    trial_id     INTEGER PRIMARY KEY,
    config       TEXT    NOT NULL,
    config_key   TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    "values"     TEXT    NOT NULL DEFAULT '{}',
    error        TEXT,
    failure_kind TEXT,
    started_at   REAL,
    finished_at  REAL,
    batch        INTEGER,
    attempt      INTEGER NOT NULL DEFAULT 1,
    origin       TEXT    NOT NULL DEFAULT 'suggested',
    repeats      TEXT    NOT NULL DEFAULT '{}',
    timings      TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX trials_config_key ON trials (config_key);
CREATE INDEX trials_status ON trials (status);
"""

#: What turns a version 1 journal into version 2 (the columns' defaults fill the old rows).
MIGRATE_1_TO_2 = (
    "ALTER TABLE trials ADD COLUMN repeats TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE trials ADD COLUMN timings TEXT NOT NULL DEFAULT '{}'",
)
REMEASUREMENTS_TABLE = """
CREATE TABLE remeasurements (
    id          INTEGER PRIMARY KEY,
    trial_id    INTEGER NOT NULL REFERENCES trials (trial_id),
    round       INTEGER NOT NULL,
    "values"    TEXT    NOT NULL DEFAULT '{}',
    error       TEXT,
    measured_at REAL
)"""


def values_json(values: Mapping[str, float]) -> str:
    """JSON object of ``values`` with NaN as null (JSON has no NaN)."""
    return json.dumps({k: (None if math.isnan(v) else v) for k, v in values.items()}, allow_nan=False)


def decode_values(text: str | None) -> dict[str, float]:
    """``values`` read back, null as NaN."""
    raw = json.loads(text) if text else {}
    return {k: (math.nan if v is None else float(v)) for k, v in raw.items()}


def check_version(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a journal of a newer or invalid schema; migrate a version 1 journal in place."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"journal {path!r} has schema version {version}, written by a newer bayestune; "
            f"this version reads schema <= {SCHEMA_VERSION}: upgrade bayestune"
        )
    if version < 1:
        raise JournalError(f"journal {path!r} has an invalid schema version {version}")
    if version == 1:
        migrate_from_1(conn, path)

def migrate_from_1(conn: sqlite3.Connection, path: str) -> None:
    """Add what version 2 keeps (repeats, timings, re-measurement rounds) to a version 1 journal."""
    for statement in MIGRATE_1_TO_2:
        conn.execute(statement)
    conn.execute(REMEASUREMENTS_TABLE)
    conn.execute("UPDATE bayestune_schema SET version = ?", (SCHEMA_VERSION,))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    logger.info("journal %s: migrated from schema 1 to %d", path, SCHEMA_VERSION)

def create_schema(conn: sqlite3.Connection, path: str) -> None:
    """The tables, version marks and creation metadata of a new journal."""
    now = time.time()
    for statement in TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(REMEASUREMENTS_TABLE)
    conn.execute("INSERT INTO bayestune_schema (version, created_at) VALUES (?, ?)", (SCHEMA_VERSION, now))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for key, value in ((META_CREATED_AT, now), (META_VERSION, __version__)):
        conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))
    logger.info("created journal %s (schema %d)", path, SCHEMA_VERSION)


def damage(row: Sequence[Any], exc: Exception) -> str:
    """What is wrong with a trial row that could not be read (for the error naming it)."""
    status, values, config = row[3], row[4], row[1]
    if status not in {s.value for s in TrialStatus}:
        return f"status {status!r} is not one of {[s.value for s in TrialStatus]}"
    for column, text in (("config", config), ("values", values), ("repeats", row[12]), ("timings", row[13])):
        try:
            json.loads(text) if text else None
        except (ValueError, TypeError):
            return f"column {column!r} is not valid JSON: {str(text)[:80]!r}"
    return f"{type(exc).__name__}: {exc}"


def row_to_trial(row: Sequence[Any]) -> Trial:
    """A row of :data:`TRIAL_COLUMNS` as a :class:`~bayestune.trial.Trial`."""
    (trial_id, config, _key, status, values, error, failure_kind,
     started_at, finished_at, batch, attempt, origin, repeats, timings) = row
    return Trial(
        trial_id=int(trial_id),
        config=json.loads(config),
        status=TrialStatus(status),
        values=decode_values(values),
        error=error,
        failure_kind=failure_kind,
        started_at=started_at,
        finished_at=finished_at,
        batch=batch,
        attempt=int(attempt),
        origin=origin,
        repeats=decode_repeats(repeats),
        timings={k: float(v) for k, v in json.loads(timings or "{}").items()},
    )
