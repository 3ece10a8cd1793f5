"""The run lock under hostile file systems: every name of one journal shares one lock, a link
planted as the lock file is never followed, a lock file of any bytes never breaks a run, and a
refused journal leaves no lock file behind."""

from __future__ import annotations

import os
import sys

import pytest

from bayestune.exceptions import JournalError
from bayestune.run import open_run_journal
from bayestune.storage import Journal
from bayestune.storage.lock import RunLock, lock_path, read_owner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")


def test_a_symlinked_journal_path_shares_the_lock_of_its_target(tmp_path):
    (tmp_path / "alias.db").symlink_to("j.db")
    os.symlink(tmp_path, tmp_path / "dir")
    with RunLock.acquire(tmp_path / "j.db"):
        for other in (tmp_path / "alias.db", tmp_path / "dir" / "j.db", tmp_path / "dir" / "alias.db"):
            with pytest.raises(JournalError, match="is in use by"):
                RunLock.acquire(other)


def test_resume_through_a_symlink_beside_a_live_run_is_refused(tmp_path):
    journal, _, _ = open_run_journal(tmp_path / "j.db", resume=False, force=False)
    try:
        journal.start({"x": 1})
        (tmp_path / "alias.db").symlink_to("j.db")
        with pytest.raises(JournalError, match="is in use by"):
            open_run_journal(tmp_path / "alias.db", resume=True, force=False)
    finally:
        journal.close()


@pytest.mark.parametrize("kind", ["symlink", "dangling", "fifo"])
def test_a_planted_lock_file_is_refused_and_its_target_untouched(tmp_path, kind):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = lock_path(tmp_path / "j.db")
    if kind == "symlink":
        link.symlink_to(victim)
    elif kind == "dangling":
        link.symlink_to(tmp_path / "nothing")
    else:
        os.mkfifo(link)
    with pytest.raises(JournalError, match="lock file .* symbolic link or not a regular file"):
        RunLock.acquire(tmp_path / "j.db")
    assert victim.read_text() == "precious" and not (tmp_path / "nothing").exists()
    assert read_owner(tmp_path / "j.db") is None


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"{not json", b"[1, 2]", b"\x00" * 100, b"{}"])
def test_a_stale_lock_file_of_any_bytes_is_taken_over(tmp_path, content):
    lock_path(tmp_path / "j.db").write_bytes(content)
    lock = RunLock.acquire(tmp_path / "j.db")
    assert read_owner(tmp_path / "j.db")["pid"] == os.getpid()
    lock.release()


def test_a_refused_journal_target_leaves_no_lock_file(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("not a journal")
    with pytest.raises(JournalError, match="not a bayestune journal"):
        open_run_journal(target, resume=True, force=False)
    assert not lock_path(target).exists() and target.read_text() == "not a journal"


def test_a_released_lock_leaves_no_file_and_can_be_taken_again(tmp_path):
    with Journal(tmp_path / "j.db", run_lock=RunLock.acquire(tmp_path / "j.db")):
        assert lock_path(tmp_path / "j.db").exists()
    assert not lock_path(tmp_path / "j.db").exists()
    RunLock.acquire(tmp_path / "j.db").release()
