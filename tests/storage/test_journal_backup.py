"""``backup`` to a place it cannot write says which and why (never a traceback), and leaves no file."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from bayestune.cli import cli
from bayestune.exceptions import JournalError
from bayestune.storage import Journal
from bayestune.trial import Result


@pytest.fixture
def journal_path(tmp_path):
    with Journal(tmp_path / "run.db") as journal:
        journal.record({"x": 1}, Result({"y": 2.0}))
    return tmp_path / "run.db"


@pytest.mark.parametrize(
    "target, says",
    [("missing/dir/copy.db", "directory does not exist"), ("run.db", "exists"), ("dangling.db", "exists")],
)
def test_backup_to_an_impossible_target_is_refused_by_name(journal_path, target, says):
    (journal_path.parent / "dangling.db").symlink_to("nowhere")
    with Journal.open(journal_path) as journal, pytest.raises(JournalError, match=says):
        journal.backup(journal_path.parent / target)
    assert not (journal_path.parent / "missing").exists() and not (journal_path.parent / "nowhere").exists()


def test_the_backup_command_to_a_missing_directory_is_one_line(journal_path):
    result = CliRunner().invoke(cli, ["backup", str(journal_path), str(journal_path.parent / "no" / "copy.db")])
    assert result.exit_code == 2 and "directory does not exist" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
