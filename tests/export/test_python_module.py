"""The generated Python module imports without bayestune, holds exact values, and its lookup
agrees with :func:`bayestune.export.lookup`."""

from __future__ import annotations

import importlib.util
import math

from bayestune.export import lookup, read_table, render
from bayestune.export.python_module import literal
from tests.export.conftest import config, write_journal


def import_file(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_literals_round_trip():
    for value in (0.1, 1 / 3, 1e-300, -0.0, 'it\'s "q"\n', (1, 0, 2), (7,), True, None):
        assert eval(literal(value)) == value  # noqa: S307 - our own literal
    assert eval(literal({"a": [1, 2]})) == {"a": (1, 2)}  # noqa: S307
    assert math.isnan(eval(literal(float("nan")), {}))  # noqa: S307


def test_module_imports_with_exact_values(tmp_path):
    rows = [(config(4, 0.1, 'o"ff?', (2, 0, 1)), {"runtime": 1.0 / 3.0}), (config(8, 0.7), {"runtime": 2.0})]
    table = read_table([str(write_journal(tmp_path / "r.db", rows))], top=2)
    path = tmp_path / "tuned_best.py"
    path.write_text(render(table, "python"))
    module = import_file(path)
    assert module.BEST == {"größe": 4, "_Pass": 0.1, "default": 'o"ff?', "rank": (2, 0, 1)}
    assert module.ENTRIES[0]["values"]["runtime"] == 1.0 / 3.0 and len(module.ENTRIES) == 2
    assert module.OBJECTIVES == (("runtime", "minimize"),) and module.KEY_FIELDS == ()


def test_module_lookup_agrees_with_the_library(tmp_path, device_journals):
    table = read_table([str(p) for p in device_journals.values()], key_meta=["device", "n"])
    path = tmp_path / "tuned_table.py"
    path.write_text(render(table, "python"))
    module = import_file(path)
    for device, n in [("A100", 1000), ("MI250X", 2000), ("H100", 2900), ("H100", 1100), ("A100", 2600), ("X", -9)]:
        assert module.lookup(device=device, n=n) == dict(lookup(table, {"device": device, "n": n}).config)
    try:
        module.lookup(device="A100")
    except KeyError as exc:
        assert "'n'" in str(exc)
    else:
        raise AssertionError("a lookup without every key field must fail")
