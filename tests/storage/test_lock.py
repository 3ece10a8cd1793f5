"""The run lock of a journal, within one process and across a fork."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bayestune.exceptions import JournalError
from bayestune.storage import Journal
from bayestune.storage.lock import RunLock, lock_path, read_owner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")


def test_the_lock_records_its_owner_and_refuses_a_second_holder(tmp_path):
    path = tmp_path / "run.db"
    with RunLock.acquire(path) as lock:
        owner = read_owner(path)
        assert owner["pid"] == os.getpid() and owner["host"]
        with pytest.raises(JournalError, match=f"is in use by bayestune pid {os.getpid()} on host"):
            RunLock.acquire(path)
        assert lock.held
    assert read_owner(path) is None  # a clean release clears the record
    RunLock.acquire(path).release()  # and can be taken again


def test_a_lock_held_by_another_process_is_refused(tmp_path):
    path = tmp_path / "run.db"
    code = (
        f"from bayestune.storage.lock import RunLock; import sys, time; l = RunLock.acquire({str(path)!r}); "
        "print('held', flush=True); sys.stdin.read()"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(JournalError, match=f"pid {child.pid}"):
            RunLock.acquire(path)
    finally:
        child.stdin.close()
        child.wait(10)
    RunLock.acquire(path).release()  # released by the owner's exit


def test_a_dead_owners_record_is_a_stale_lock(tmp_path):
    path = tmp_path / "run.db"
    lock_path(path).write_text(json.dumps({"pid": 999999, "host": "elsewhere", "started_at": 0}))
    lock = RunLock.acquire(path)
    assert lock.stale_owner == {"pid": 999999, "host": "elsewhere", "started_at": 0}
    lock.release()


def test_closing_the_journal_releases_its_run_lock_and_checkpoints(tmp_path):
    path = tmp_path / "run.db"
    journal = Journal(path, run_lock=RunLock.acquire(path))
    journal.start({"x": 1})
    journal.close()
    RunLock.acquire(path).release()
    wal = tmp_path / "run.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # the .db alone holds the run


def test_backup_is_a_complete_copy_while_the_journal_is_open(tmp_path):
    from bayestune.trial import Result

    with Journal(tmp_path / "run.db") as journal:
        for x in range(3):
            journal.finish(journal.start({"x": x}), Result({"v": float(x)}))
        journal.backup(tmp_path / "copy.db")
        with pytest.raises(JournalError, match="exists"):
            journal.backup(tmp_path / "copy.db")
    with Journal.open(tmp_path / "copy.db") as copy:
        assert copy.n_finished() == 3


def test_a_hard_link_to_a_journal_in_use_is_refused(tmp_path):
    """Another name of the same file (a hard link) is not another journal: the run also locks the file."""
    from bayestune.run import open_run_journal

    path = tmp_path / "j.db"
    journal, _, _ = open_run_journal(path, resume=False, force=False)
    try:
        journal.record({"x": 1}, __import__("bayestune").Result(values={"value": 1.0}))
        os.link(path, tmp_path / "hard.db")
        with pytest.raises(JournalError, match="under another name \\(a hard link"):
            open_run_journal(tmp_path / "hard.db", resume=True, force=False)
    finally:
        journal.close()
    again, resumed, _ = open_run_journal(tmp_path / "hard.db", resume=True, force=False)  # free once closed
    assert resumed
    again.close()
