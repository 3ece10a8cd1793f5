"""A journal path that is not a file says what it is (issue 41 item 9): a FIFO (never opened: that
would block), a directory, a symbolic link into a missing directory (refused, nothing created)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bayestune.exceptions import JournalError
from bayestune.run import open_run_journal
from bayestune.storage import Journal

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX named pipes")


@pytest.mark.parametrize("resume", [True, False])
def test_a_fifo_is_named_for_reading_and_for_a_run(tmp_path, resume):
    os.mkfifo(tmp_path / "j.db")
    with pytest.raises(JournalError, match=r"is a named pipe \(FIFO\), not a journal file"):
        Journal.open(tmp_path / "j.db", read_only=resume)
    with pytest.raises(JournalError, match=r"is a named pipe \(FIFO\)"):
        open_run_journal(tmp_path / "j.db", resume=resume, force=False)


def test_a_directory_is_named(tmp_path):
    (tmp_path / "j.db").mkdir()
    with pytest.raises(JournalError, match="is a directory, not a journal file"):
        Journal.open(tmp_path / "j.db")
    with pytest.raises(JournalError, match="is a directory"):
        open_run_journal(tmp_path / "j.db", resume=True, force=False)


def test_a_link_into_a_missing_directory_is_refused_and_creates_nothing(tmp_path):
    (tmp_path / "j.db").symlink_to(tmp_path / "nowhere" / "sub" / "j.db")
    with pytest.raises(JournalError, match="symbolic link into a missing directory"):
        open_run_journal(tmp_path / "j.db", resume=False, force=False)
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(JournalError, match="symbolic link into a missing directory"):
        Journal.open(tmp_path / "j.db")


def test_a_link_to_a_new_file_in_an_existing_directory_is_created(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "j.db").symlink_to(tmp_path / "runs" / "real.db")
    with pytest.raises(JournalError, match="symbolic link to a missing file"):
        Journal.open(tmp_path / "j.db")
    journal, resumed, _ = open_run_journal(tmp_path / "j.db", resume=False, force=False)
    journal.close()
    assert not resumed and (tmp_path / "runs" / "real.db").is_file()


def test_show_on_a_fifo_answers_at_once(tmp_path):
    os.mkfifo(tmp_path / "j.db")
    done = subprocess.run(
        [sys.executable, "-m", "bayestune", "show", str(tmp_path / "j.db")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "named pipe" in done.stderr and "does not exist" not in done.stderr
