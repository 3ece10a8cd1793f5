"""A journal on read-only storage (an archived run, a read-only mount) can be read by every
command, never reading past commits in its -wal file. Needs a read-only bind
mount (root with mount rights), else skipped."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.storage import Journal
from bayestune.trial import Result


@pytest.fixture
def read_only_dir(tmp_path):
    src, mnt = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    mnt.mkdir()
    if not sys.platform.startswith("linux") or shutil.which("mount") is None:
        pytest.skip("needs Linux bind mounts")
    done = subprocess.run(
        f"mount --bind {src} {mnt} && mount -o remount,ro,bind {mnt}", shell=True, capture_output=True
    )
    if done.returncode != 0:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        pytest.skip("no rights to make a read-only bind mount")
    yield src, mnt
    subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_cleanly_closed_journal_on_read_only_storage_is_readable(read_only_dir):
    src, mnt = read_only_dir
    with Journal(src / "run.db") as journal:
        journal.record({"x": 1}, Result({"y": 2.0}))
    for reader in (Journal.open(mnt / "run.db", read_only=True), Journal.open(mnt / "run.db")):
        with reader:
            assert [t.values["y"] for t in reader.trials()] == [2.0] and reader.read_only
    for args in (["show", str(mnt / "run.db")], ["export", str(mnt / "run.db"), "--format", "json"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0 and result.exception is None, result.output


def test_a_live_journal_seen_through_read_only_storage_shows_its_wal_commits(read_only_dir):
    src, mnt = read_only_dir
    writer = Journal(src / "run.db")
    try:
        writer.record({"x": 1}, Result({"y": 2.0}))
        with Journal.open(mnt / "run.db", read_only=True) as reader:  # never immutable past a -wal with commits
            assert len(reader.trials()) == 1
    finally:
        writer.close()
