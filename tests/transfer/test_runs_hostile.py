"""A --prior-run folder with damaged files: each is skipped, named, and the good runs still load;
the run's own journal is never read as a prior run (issue 41, round four, items 4 and 5)."""

from __future__ import annotations

import gzip
import logging

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.optimizer import Optimizer
from bayestune.storage.journal import Journal
from bayestune.transfer.runs import load_prior_runs
from tests.transfer.conftest import target


def _good_journal(space, path):
    opt = Optimizer(space, objectives=["t"], seed=0, journal=Journal(path))
    opt.optimize(target, 5)
    opt.journal.close()


def test_damaged_files_in_a_folder_are_skipped_with_their_reason(space, tmp_path, caplog):
    folder = tmp_path / "runs"
    folder.mkdir()
    _good_journal(space, folder / "good.db")
    (folder / "latin1.csv").write_bytes("x,y,t\n\xe9,\xff,1\n".encode("latin-1"))
    (folder / "wide.csv").write_text("x" * 200_000 + ",t\n1,2\n")
    (folder / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (folder / "digits.json").write_text('{"cache": {"a": {"time": ' + "9" * 5000 + "}}}")
    full = gzip.compress(b'{"tune_params_keys": ["x"], "cache": {}}' * 50)
    (folder / "cut.json.gz").write_bytes(full[: len(full) // 2])
    with caplog.at_level(logging.WARNING, logger="bayestune"):
        runs = load_prior_runs([str(folder)], space, "t")
    assert len(runs) == 1
    warned = " ".join(r.getMessage() for r in caplog.records)
    for name in ("latin1.csv", "wide.csv", "deep.json", "digits.json", "cut.json.gz"):
        assert name in warned


def test_the_runs_own_journal_is_never_a_prior_run(space, tmp_path):
    _good_journal(space, tmp_path / "own.db")
    _good_journal(space, tmp_path / "other.db")
    runs = load_prior_runs([str(tmp_path)], space, "t", exclude=[tmp_path / "own.db"])
    assert [r.name for r in runs] == [str(tmp_path / "other.db")] or len(runs) == 1
    with pytest.raises(BayestuneError, match="is this run's own journal"):
        load_prior_runs([str(tmp_path / "own.db")], space, "t", exclude=[tmp_path / "own.db"])
