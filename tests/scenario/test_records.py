"""The Scenario record: where its relative paths resolve."""

from __future__ import annotations

from pathlib import Path

from bayestune.scenario import load_scenario, save_scenario
from bayestune.scenario.records import BlackBoxSpec, Scenario
from bayestune.space import Integer, Space


def test_base_dir_is_the_files_directory_else_the_current_one(tmp_path, monkeypatch):
    s = Scenario("s", Space([Integer("n", 1, 4)]), blackbox=BlackBoxSpec("replay", "data/cache.json"))
    monkeypatch.chdir(tmp_path)
    assert s.base_dir == tmp_path.resolve()
    (tmp_path / "sub").mkdir()
    save_scenario(s, tmp_path / "sub" / "s.json")
    loaded = load_scenario(tmp_path / "sub" / "s.json")
    assert loaded.base_dir == (tmp_path / "sub").resolve()
    # the saved path was rebased, so it still names the same file from the new directory
    assert (loaded.base_dir / loaded.blackbox.target).resolve() == (Path(tmp_path) / "data" / "cache.json").resolve()
