"""``Journal.open(path, read_only=True)``: a viewer beside a live run reads new rows and can write nothing."""

from __future__ import annotations

import pytest

from bayestune.exceptions import JournalError
from bayestune.run import load_run
from bayestune.storage import Journal
from bayestune.trial import Result


def test_a_reader_sees_the_writer_and_cannot_write(tmp_path):
    path = tmp_path / "run.db"
    with Journal(path) as writer:
        writer.record({"x": 1}, Result({"y": 1.0}))
        with Journal.open(path, read_only=True) as reader:
            assert len(reader.trials()) == 1
            writer.record({"x": 2}, Result({"y": 0.5}))
            assert [t.config["x"] for t in reader.trials()] == [1, 2]
            with pytest.raises(JournalError):
                reader.set_meta("k", 1)
            with pytest.raises(JournalError):
                reader.start({"x": 3})
    assert len(load_run(str(path), read_only=True).trials) == 2


def test_read_only_open_names_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(JournalError, match="does not exist"):
        Journal.open(tmp_path / "nope.db", read_only=True)
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (a)").connection.close()
    with pytest.raises(JournalError, match="not a bayestune journal"):
        Journal.open(other, read_only=True)
