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
from dataclasses import replace
from typing import Any

from bayestune._version import __version__
from bayestune.exceptions import JournalError
from bayestune.storage.base import META_CREATED_AT, META_VERSION, decode_repeats
from bayestune.trial import Trial, TrialStatus

logger = logging.getLogger(__name__)

#: Version of the table layout written by this module (also stored as ``PRAGMA user_version``).
SCHEMA_VERSION = 3
#: ``PRAGMA application_id`` of bayestune journals ("BTun"), so tools like ``file`` can tell them apart.
APPLICATION_ID = 0x4254756E
#: The columns a new trial row is written with, and those a trial is read from.
INSERT_COLUMNS = (
    'config, config_key, status, "values", error, failure_kind, started_at, finished_at, batch, attempt, origin, '
    "repeats, timings, censored"
)
TRIAL_COLUMNS = "trial_id, " + INSERT_COLUMNS
#: What an older journal opened read-only (and so not migrated) reads in place of a later column.
LATER_COLUMNS = {"repeats": "'{}'", "timings": "'{}'", "censored": "0"}


def trial_columns(present: set[str]) -> str:
    """:data:`TRIAL_COLUMNS` for a trials table with the columns ``present``: a column an older
    schema lacks is read as its default (a read-only journal is never migrated)."""
    return ", ".join(
        name if name.strip('"') in present or name not in LATER_COLUMNS else f"{LATER_COLUMNS[name]} AS {name}"
        for name in (c.strip() for c in TRIAL_COLUMNS.split(","))
    )


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
    timings      TEXT    NOT NULL DEFAULT '{}',
    censored     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trials_config_key ON trials (config_key);
CREATE INDEX trials_status ON trials (status);
"""

#: What turns a version 1 journal into version 2 (the columns' defaults fill the old rows).
MIGRATE_1_TO_2 = (
    "ALTER TABLE trials ADD COLUMN repeats TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE trials ADD COLUMN timings TEXT NOT NULL DEFAULT '{}'",
)
#: What turns a version 2 journal into version 3: ``censored`` marks a value that is a bound
#: (measuring stopped early: the configuration is at least this bad), 0 on every older row.
MIGRATE_2_TO_3 = ("ALTER TABLE trials ADD COLUMN censored INTEGER NOT NULL DEFAULT 0",)
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
    out: dict[str, float] = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, type(None))):
            raise ValueError(f"column 'values' holds {k}: {v!r}, not a number")  # a journal writes numbers only
        out[k] = math.nan if v is None else float(v)
    return out


def check_version(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a journal of a newer or invalid schema; migrate an older journal in place."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"journal {path!r} has schema version {version}, written by a newer bayestune; "
            f"this version reads schema <= {SCHEMA_VERSION}: upgrade bayestune"
        )
    if version < 1:
        raise JournalError(f"journal {path!r} has an invalid schema version {version}")
    if version < SCHEMA_VERSION:
        migrate(conn, path, version)


def migrate(conn: sqlite3.Connection, path: str, version: int) -> None:
    """Add what later versions keep to an older journal: repeats, timings and re-measurement
    rounds (version 2), the censored mark (version 3)."""
    if version == 1:
        for statement in MIGRATE_1_TO_2:
            conn.execute(statement)
        conn.execute(REMEASUREMENTS_TABLE)
    for statement in MIGRATE_2_TO_3:
        conn.execute(statement)
    conn.execute("UPDATE bayestune_schema SET version = ?", (SCHEMA_VERSION,))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    logger.info("journal %s: migrated from schema %d to %d", path, version, SCHEMA_VERSION)


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
        except (ValueError, TypeError, RecursionError):
            return f"column {column!r} is not valid JSON: {str(text)[:80]!r}"
    return f"{type(exc).__name__}: {exc}"


def _typed(column: str, value: Any, kinds: tuple[type, ...], what: str) -> Any:
    """``value`` if it is one of ``kinds`` (never a bool for a number), else ValueError naming the column."""
    if isinstance(value, kinds) and not isinstance(value, bool):
        return value
    raise ValueError(f"column {column!r} holds {value!r:.60}, not {what}")


def row_to_trial(row: Sequence[Any]) -> Trial:
    """A row of :data:`TRIAL_COLUMNS` as a :class:`~bayestune.trial.Trial`; ValueError (or
    TypeError) naming the column when a cell is not what a journal writes there, so that damage
    is reported here, not as a crash where the value is used."""
    (
        trial_id,
        config,
        _key,
        status,
        values,
        error,
        failure_kind,
        started_at,
        finished_at,
        batch,
        attempt,
        origin,
        repeats,
        timings,
        censored,
    ) = row
    config = json.loads(config)
    if not isinstance(config, dict):
        raise ValueError(f"column 'config' holds {config!r:.60}, not a JSON object")
    number, text = (int, float), (str, type(None))
    return Trial(
        trial_id=int(trial_id),
        config=config,
        status=TrialStatus(status),
        values=decode_values(values),
        error=_typed("error", error, text, "text"),
        failure_kind=_typed("failure_kind", failure_kind, text, "text"),
        started_at=_typed("started_at", started_at, (*number, type(None)), "a time"),
        finished_at=_typed("finished_at", finished_at, (*number, type(None)), "a time"),
        batch=_typed("batch", batch, (int, type(None)), "a batch number"),
        attempt=_typed("attempt", attempt, (int,), "an attempt number"),
        origin=_typed("origin", origin, (str,), "text"),
        repeats=decode_repeats(repeats),
        timings={k: float(v) for k, v in json.loads(timings or "{}").items()},
        censored=bool(_typed("censored", censored, (int,), "0 or 1")),
    )


#: What a journal writes under the run's metadata keys: a damaged value is refused when read.
META_SHAPES: dict[str, tuple[Any, str]] = {
    "objectives": (
        lambda v: (
            isinstance(v, list)
            and bool(v)
            and all(
                isinstance(o, dict) and isinstance(o.get("name"), str) and isinstance(o.get("minimize", True), bool)
                for o in v
            )
        ),
        "a list of {name, minimize}",
    ),
    "strategy": (lambda v: isinstance(v, str), "a strategy name"),
    "strategy_options": (lambda v: v is None or isinstance(v, dict), "an object of options"),
    "seed": (
        lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
        "a seed (an integer >= 0)",
    ),
    "budget": (lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)), "an integer"),
    "design": (
        lambda v: (
            v is None
            or (
                isinstance(v, dict)
                and set(v) <= {"method", "size", "include_default"}
                and isinstance(v.get("method", ""), str)
                and type(v.get("size", 0)) is int
                and type(v.get("include_default", True)) is bool
            )
        ),
        "an object of method, size and include_default",
    ),
    "space": (lambda v: v is None or isinstance(v, dict), "an object"),
    "scenario": (lambda v: v is None or isinstance(v, dict), "an object"),
    "output_constraints": (lambda v: v is None or isinstance(v, list), "a list"),
    META_CREATED_AT: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a time"),
    META_VERSION: (lambda v: isinstance(v, str), "a version"),
}


def decode_meta(path: str, key: str, text: Any) -> Any:
    """The metadata value stored as ``text`` under ``key``; JournalError naming both if damaged."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        raise JournalError(
            f"journal {path!r}: metadata {key!r} is damaged (not JSON: {str(text)[:60]!r}); "
            "repair or delete that row of the meta table"
        ) from None
    check, what = META_SHAPES.get(key, (lambda v: True, ""))
    if not check(value):
        raise JournalError(
            f"journal {path!r}: metadata {key!r} is damaged ({json.dumps(value)[:60]} is not "
            f"{what}); repair or delete that row of the meta table"
        )
    return value


def objectives_finite(trial: Trial, objectives: Sequence[str] | None) -> Trial:
    """``trial``, or when it is a success missing an objective or holding a non-finite one, that
    trial read as a failure of kind ``nan`` (as :func:`~bayestune.storage.base.result_fields`
    would have written it): models fit only finite values, and nothing measured is dropped."""
    if trial.status is not TrialStatus.OK or not objectives:
        return trial
    bad = [o for o in objectives if not math.isfinite(trial.values.get(o, math.nan))]
    if not bad:
        return trial
    logger.warning("trial %d is marked ok but holds no finite %s; read as a failure", trial.trial_id, bad)
    return replace(
        trial,
        status=TrialStatus.FAILED,
        failure_kind="nan",
        error=f"the journal holds no finite value for objective(s) {bad}",
    )
