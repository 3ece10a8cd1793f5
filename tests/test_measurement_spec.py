"""A scenario's measurement section as records, read and written back."""

from __future__ import annotations

import pytest

from bayestune.exceptions import EvaluationError
from bayestune.measurement_spec import CorrectnessCheck, MeasurementPolicy, MeasurementSpec


def test_a_section_reads_and_writes_back() -> None:
    section = {
        "warmup": 1,
        "repeats": 3,
        "max_repeats": 10,
        "precision": 0.02,
        "statistic": "min",
        "early_abort": True,
        "remeasure_top": 3,
        "remeasure_rounds": 7,
        "check": {"expected": {"checksum": 42.0}, "rtol": 0.0, "atol": 0.5},
    }
    spec = MeasurementSpec.from_dict(section)
    assert spec.policy == MeasurementPolicy(
        warmup=1, repeats=3, max_repeats=10, precision=0.02, statistic="min", early_abort=True
    )
    assert spec.check == CorrectnessCheck(expected={"checksum": 42.0}, rtol=0.0, atol=0.5)
    assert (spec.remeasure_top, spec.remeasure_rounds) == (3, 7)
    assert MeasurementSpec.from_dict(spec.to_dict()) == spec
    assert MeasurementSpec.from_dict({}).to_dict() == {}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"repeat": 3}, r"measurement: unknown key\(s\) \['repeat'\]; allowed: \['warmup', 'repeats'"),
        ({"check": {"expect": {}}}, r"measurement.check: unknown key\(s\) \['expect'\]"),
        ({"check": {"rtol": 0.1}}, "needs .expected. outputs"),
        ({"check": {"function": "nocolon"}}, 'check function must be "module:function"'),
        ({"remeasure_top": -1}, "remeasure_top must be an integer >= 0"),
        ({"remeasure_rounds": 0}, "remeasure_rounds must be an integer >= 1"),
        ({"check": 3}, "measurement check must be an object"),
        ({"race": "yes"}, "measurement race must be true or false, but got 'yes'"),
        ({"race": True, "repeats": 3}, "race: true chooses the repeats itself"),
        ({"race": True, "early_abort": True}, "race: true chooses the repeats itself"),
    ],
)
def test_bad_sections_are_named(section: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        MeasurementSpec.from_dict(section)


@pytest.mark.parametrize(
    ("section", "races"),
    [
        ({}, True),
        ({"warmup": 2, "statistic": "min", "remeasure_top": 3}, True),
        ({"race": True}, True),
        ({"race": False}, False),
        ({"repeats": 3}, False),
        ({"repeats": 1, "max_repeats": 4, "precision": 0.05}, False),
        ({"early_abort": True}, False),
    ],
)
def test_racing_is_on_unless_another_repeat_rule_is_given(section: dict, races: bool) -> None:
    spec = MeasurementSpec.from_dict(section)
    assert spec.races is races
    assert MeasurementSpec.from_dict(spec.to_dict()) == spec
