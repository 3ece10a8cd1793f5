"""A run checks its journal before writing to it (issue 41 item 9): ``--resume`` on a journal with a
malformed page is refused with one line, and the file is left byte for byte as it was."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from bayestune.exceptions import JournalError
from bayestune.run import open_run_journal
from bayestune.storage import Journal
from bayestune.trial import Result


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        for i in range(200):
            journal.record({"x": i, "flags": "-O3 -funroll-loops " * 20}, Result({"runtime": float(i)}))
    conn = sqlite3.connect(path)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as f:  # a leaf page in the middle claims 65,535 cells
        offset = size * (pages // 2)
        f.seek(offset)
        page = bytearray(f.read(size))
        page[3:5] = b"\xff\xff"
        f.seek(offset)
        f.write(page)
    return path


def test_resume_refuses_a_journal_with_a_malformed_page_and_writes_nothing(tmp_path):
    path = _damaged(tmp_path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(JournalError, match=r"is damaged \(SQLite's quick_check: .*\); nothing was written"):
        open_run_journal(path, resume=True, force=False)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    journal, resumed, _ = open_run_journal(path, resume=False, force=True)  # --force still starts over
    journal.close()
    assert not resumed


def test_a_sound_journal_passes_the_check(tmp_path):
    with Journal(tmp_path / "j.db") as journal:
        journal.record({"x": 1}, Result({"runtime": 1.0}))
        journal.check_integrity()
