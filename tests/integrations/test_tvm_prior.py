"""Where TVM prior runs are looked for (no TVM needed: files only)."""

from __future__ import annotations

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.integrations.tvm.prior import JOURNAL_FILE, RECORDS_FILE, _sources


def test_a_work_directory_is_read_from_its_journal_when_it_has_one(tmp_path):
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / JOURNAL_FILE).write_bytes(b"")
    (tmp_path / "bo" / RECORDS_FILE).write_text("")
    (tmp_path / "evo").mkdir()
    (tmp_path / "evo" / RECORDS_FILE).write_text("")
    assert _sources(tmp_path / "bo") == [tmp_path / "bo" / JOURNAL_FILE]
    assert _sources(tmp_path / "evo") == [tmp_path / "evo" / RECORDS_FILE]
    assert _sources(tmp_path) == [tmp_path / "bo" / JOURNAL_FILE, tmp_path / "evo" / RECORDS_FILE]
    assert _sources(str(tmp_path / "e*")) == [tmp_path / "evo" / RECORDS_FILE]


def test_a_folder_or_pattern_without_runs_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(BayestuneError, match="no MetaSchedule database"):
        _sources(tmp_path)
    with pytest.raises(BayestuneError, match="matches nothing"):
        _sources(str(tmp_path / "runs-*"))
    with pytest.raises(BayestuneError, match="no such file or folder"):
        _sources(tmp_path / "missing")
