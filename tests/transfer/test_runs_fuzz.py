"""Fuzzing ``--prior-run`` folders (issue 41, item 4's "done"): whatever files sit beside a good
run (random bytes, a good file cut short or with bytes flipped, under any prior-run extension),
loading the folder gives the good run and skips the others, or a BayestuneError; never another
exception."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayestune.exceptions import BayestuneError
from bayestune.optimizer import Optimizer
from bayestune.storage.journal import Journal
from bayestune.transfer.runs import load_prior_runs
from tests.transfer.conftest import VALUES, all_configs, grid_space, target

SPACE = grid_space()
_GOOD: dict[str, bytes] = {}


def _good_files() -> dict[str, bytes]:
    """A journal, a CSV and a Kernel Tuner cache of a small run, as bytes (built once)."""
    if _GOOD:
        return _GOOD
    with tempfile.TemporaryDirectory() as tmp:
        opt = Optimizer(SPACE, objectives=["t"], seed=0, journal=Journal(Path(tmp) / "good.db"))
        opt.optimize(target, 5)
        opt.journal.close()
        _GOOD[".db"] = (Path(tmp) / "good.db").read_bytes()
    configs = all_configs(SPACE)[:8]
    _GOOD[".csv"] = ("bx,by,c,t\n" + "".join(f"{c['bx']},{c['by']},{c['c']},{target(c)}\n" for c in configs)).encode()
    cache = {
        "tune_params_keys": ["bx", "by", "c"],
        "tune_params": {"bx": VALUES, "by": VALUES, "c": ["a", "b"]},
        "cache": {f"{c['bx']},{c['by']},{c['c']}": {**c, "time": target(c)} for c in configs},
    }
    _GOOD[".json"] = json.dumps(cache).encode()
    _GOOD[".json.gz"] = gzip.compress(_GOOD[".json"])
    return _GOOD


@st.composite
def damaged_file(draw) -> tuple[str, bytes]:
    suffix = draw(st.sampled_from([".db", ".csv", ".json", ".json.gz"]))
    good = _good_files()[draw(st.sampled_from([".db", ".csv", ".json", ".json.gz"]))]
    how = draw(st.sampled_from(["random", "cut", "flip"]))
    if how == "random":
        return suffix, draw(st.binary(max_size=2000))
    if how == "cut":
        return suffix, good[: draw(st.integers(0, max(len(good) - 1, 0)))]
    data = bytearray(good)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    return suffix, bytes(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damaged_file(), min_size=1, max_size=4))
def test_a_folder_of_damaged_files_beside_a_good_run_loads_the_good_run(files):
    folder = Path(tempfile.mkdtemp(prefix="bt-prior-fuzz-"))
    try:
        (folder / "good.db").write_bytes(_good_files()[".db"])
        for i, (suffix, data) in enumerate(files):
            (folder / f"bad{i}{suffix}").write_bytes(data)
        try:
            runs = load_prior_runs([str(folder)], SPACE, "t")
        except BayestuneError:
            return  # a clear refusal is allowed; any other exception fails the test
        assert runs, "the good journal was not loaded"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
