"""The tuned table: best / top-k / Pareto selection, keys, and the nearest-key rule."""

from __future__ import annotations

import math

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.export import lookup, nearest_key, read_table
from bayestune.export.table import parse_key
from bayestune.objectives import Objective
from tests.export.conftest import config, write_journal


def test_one_run_exports_its_best_and_top_k_distinct(tmp_path):
    rows = [
        (config(8, 0.5), {"runtime": 3.0}),
        (config(4, 0.25), {"runtime": 1.0}),
        (config(4, 0.25), {"runtime": 1.5}),
        (config(16, 0.125), {"runtime": 2.0}),
        (config(2, 0.0), None),
    ]
    path = write_journal(tmp_path / "r.db", rows)
    best = read_table([str(path)])
    assert [(e.rank, e.trial_id, e.values["runtime"]) for e in best.entries] == [(1, 2, 1.0)]
    assert best.entries[0].config == config(4, 0.25)
    top = read_table([str(path)], top=5)
    assert [e.trial_id for e in top.entries] == [2, 4, 1]  # the repeat of trial 2 and the failure are left out


def test_a_multi_objective_run_exports_its_pareto_set(tmp_path):
    objectives = (Objective("runtime"), Objective("energy"))
    rows = [
        (config(1, 0.0), {"runtime": 1.0, "energy": 9.0}),
        (config(2, 0.0), {"runtime": 2.0, "energy": 2.0}),
        (config(3, 0.0), {"runtime": 3.0, "energy": 3.0}),
        (config(4, 0.0), {"runtime": 9.0, "energy": 1.0}),
    ]
    table = read_table([str(write_journal(tmp_path / "mo.db", rows, objectives=objectives))])
    assert table.pareto and [e.trial_id for e in table.entries] == [1, 2, 4]
    assert [e.rank for e in table.entries] == [1, 2, 3]


def test_keys_from_options_and_from_metadata_agree(device_journals):
    paths = [str(p) for p in device_journals.values()]
    by_option = read_table(paths, keys=["device=A100,n=1000", "device=MI250X,n=2000", "device=V100,n=3000"])
    by_meta = read_table(paths, key_meta=["device", "n"])
    assert by_option.entries == by_meta.entries
    assert [e.key["device"] for e in by_meta.entries] == ["A100", "MI250X", "V100"]
    assert [e.config["größe"] for e in by_meta.entries] == [32, 8, 16]


def test_nearest_key_matches_exactly_then_falls_back(device_journals):
    table = read_table([str(p) for p in device_journals.values()], key_meta=["device", "n"])
    assert nearest_key(table, {"device": "MI250X", "n": 2000})["device"] == "MI250X"
    # unseen device: the numeric key decides (2900 is nearest to V100's 3000)
    assert nearest_key(table, {"device": "H100", "n": 2900})["device"] == "V100"
    # the text key outweighs a numeric distance below one span
    assert nearest_key(table, {"device": "A100", "n": 2600})["device"] == "A100"
    assert lookup(table, {"device": "H100", "n": 1100}).config["größe"] == 32
    with pytest.raises(BayestuneError, match=r"key field\(s\) \['n'\]"):
        nearest_key(table, {"device": "A100"})
    assert nearest_key(table, {"device": "A100", "n": "2000"})["device"] == "A100"  # text read as a number
    with pytest.raises(BayestuneError, match="'n' is numeric"):
        nearest_key(table, {"device": "A100", "n": "big"})


@pytest.mark.parametrize(
    "keys, message",
    [
        (["device=A100"], "1 --key value"),
        (["device=A100", "device=A100", "device=A100"], "same key"),
        (["device=A100", "gpu=B", "device=C"], "keyed by"),
        (["device=A100", "device=2", "device=C"], "mixes numbers and text"),
        (["device", "device=B", "device=C"], "FIELD=VALUE"),
    ],
)
def test_bad_keys_are_named(device_journals, keys, message):
    with pytest.raises(BayestuneError, match=message):
        read_table([str(p) for p in device_journals.values()], keys=keys)


def test_missing_metadata_key_and_unkeyed_journals_are_refused(device_journals):
    paths = [str(p) for p in device_journals.values()]
    with pytest.raises(BayestuneError, match="no metadata 'gpu'"):
        read_table(paths, key_meta=["gpu"])
    with pytest.raises(BayestuneError, match="no keys"):
        read_table(paths)


def test_a_run_without_a_feasible_trial_is_refused(tmp_path):
    path = write_journal(tmp_path / "bad.db", [(config(2, 0.0), None), (config(3, 0.0), {"runtime": 1.0})])
    with pytest.raises(BayestuneError, match="no feasible"):
        read_table([str(write_journal(tmp_path / "none.db", [(config(2, 0.0), None)]))])
    assert read_table([str(path)]).entries[0].trial_id == 2


def test_parse_key_reads_numbers():
    assert parse_key("device=A100, n=4096,scale=0.5") == {"device": "A100", "n": 4096, "scale": 0.5}
    assert parse_key("tag=nan")["tag"] == "nan" and not isinstance(parse_key("tag=inf")["tag"], float)
    assert math.isclose(parse_key("x=1e3")["x"], 1000.0)


def test_the_confirmed_winner_is_exported_first(tmp_path):
    """The search's best sample was lucky; the confirmation re-measured trial 2 as the winner."""
    from bayestune.export.table import best_trials
    from bayestune.run import META_CONFIRMATION, load_run

    rows = [
        (config(8, 0.1), {"runtime": 1.0}),
        (config(16, 0.2), {"runtime": 1.1}),
        (config(32, 0.3), {"runtime": 3.0}),
    ]
    meta = {
        META_CONFIRMATION: {
            "objective": "runtime",
            "winner": {"trial_id": 2, "value": 1.05, "low": 1.0, "high": 1.1, "rounds": 6},
        }
    }
    confirmed = best_trials(load_run(write_journal(tmp_path / "c.db", rows, meta=meta)), top=2)
    assert [t.trial_id for t in confirmed] == [2, 1]
    plain = best_trials(load_run(write_journal(tmp_path / "p.db", rows)), top=2)
    assert [t.trial_id for t in plain] == [1, 2]
