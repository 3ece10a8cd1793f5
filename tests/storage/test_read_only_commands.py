"""Read-only commands never write a journal (issue 41 item 9): on a crashed run's journal, whose
last commits are still in its ``-wal`` file, ``show``, ``backup``, ``report`` and ``export`` leave
the ``.db`` and the ``-wal`` file as they were and print no warning about a checkpoint."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.storage import Journal
from bayestune.trial import Result
from tests.export.conftest import config, write_journal


def _crashed(tmp_path: Path) -> Path:
    """A journal as a kill -9 leaves it: rows committed to the -wal file, never checkpointed."""
    live = tmp_path / "live.db"
    write_journal(live, [(config(4, 0.1), {"runtime": 1.0})])
    with Journal.open(live) as journal:
        journal.record(config(8, 0.2), Result({"runtime": 2.0}))
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{live}{suffix}", tmp_path / f"crashed.db{suffix}")
    assert (tmp_path / "crashed.db-wal").stat().st_size > 0
    return tmp_path / "crashed.db"


def _digest(path: Path) -> tuple[str, str]:
    return tuple(hashlib.sha256(Path(f"{path}{s}").read_bytes()).hexdigest() for s in ("", "-wal"))  # type: ignore[return-value]


@pytest.mark.parametrize(
    "args",
    [["show"], ["backup", "{dir}/copy.db"], ["report", "-o", "{dir}/r.html"], ["export", "--format", "json"]],
)
def test_read_only_commands_leave_a_crashed_journal_as_it_is(tmp_path, args):
    journal = _crashed(tmp_path)
    before = _digest(journal)
    command = [args[0], str(journal), *(a.format(dir=tmp_path) for a in args[1:])]
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 0, result.output
    assert "checkpoint" not in result.output.lower() and "warning" not in result.output.lower()
    assert _digest(journal) == before
