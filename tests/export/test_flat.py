"""JSON and CSV exports: every entry, values exact, keys first."""

from __future__ import annotations

import csv
import io
import json

from bayestune.export import read_table, render
from tests.export.conftest import config, write_journal


def test_json_and_csv_hold_exact_values(tmp_path, device_journals):
    table = read_table([str(p) for p in device_journals.values()], key_meta=["device"], top=2)
    doc = json.loads(render(table, "json"))
    assert doc["key_fields"] == ["device"] and doc["selection"] == "best"
    assert [(e["key"]["device"], e["rank"]) for e in doc["entries"]] == [
        ("A100", 1),
        ("A100", 2),
        ("MI250X", 1),
        ("MI250X", 2),
        ("V100", 1),
        ("V100", 2),
    ]
    assert doc["entries"][0]["config"]["rank"] == [2, 0, 1]
    rows = list(csv.reader(io.StringIO(render(table, "csv"))))
    assert rows[0] == ["device", "rank_", "trial", "größe", "_Pass", "default", "rank", "runtime"]
    assert rows[1][:4] == ["A100", "1", "4", "32"] and rows[1][6] == "(2, 0, 1)"
    assert float(rows[1][4]) == doc["entries"][0]["config"]["_Pass"] == 0.05


def test_json_float_is_exact(tmp_path):
    rows = [(config(4, 0.1 + 0.2), {"runtime": 1.0 / 3.0})]
    doc = json.loads(render(read_table([str(write_journal(tmp_path / "r.db", rows))]), "json"))
    assert doc["entries"][0]["config"]["_Pass"] == 0.1 + 0.2 and doc["entries"][0]["values"]["runtime"] == 1 / 3
