"""A command's output on disk stays bounded while it runs (only its end is ever read): 200 MB
of stdout must not take 200 MB of disk."""

from __future__ import annotations

import sys

import pytest

from bayestune.evaluators.command import CommandEvaluator

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="hole punching is Linux only")


def test_a_flood_of_stdout_is_bounded_on_disk_and_its_end_still_read(tmp_path):
    # The command reports, as its objective, the megabytes its own stdout file takes on disk.
    probe = (
        "head -c 200000000 /dev/zero; sleep 0.5; echo; "
        "echo \"disk_mb: $(( $(stat -L -c '%b*%B' /proc/$$/fd/1) / 1000000 ))\"; echo runtime: 1 #{x}"
    )
    ev = CommandEvaluator(probe, ["runtime"], workdir=tmp_path, timeout=60, max_output_mb=1)
    result = ev.evaluate({"x": 1})
    assert result.error is None, result.error
    assert result.values["runtime"] == 1.0 and result.values["disk_mb"] < 10, result.values


@pytest.mark.parametrize("end", ["\n", ""])
def test_one_line_longer_than_the_kept_output_is_named_not_nothing(end):
    ev = CommandEvaluator(f"head -c 3000000 /dev/zero | tr '\\0' 'a'; printf '{end}' #{{x}}", ["t"], max_output_mb=1)
    result = ev.evaluate({"x": 1})
    assert result.error is not None and "printed nothing" not in result.error
    if end:
        assert "printed 3,000,001 bytes on stdout ending in one line longer than the 1 MB kept" in result.error


def test_a_long_line_before_the_value_line_is_no_failure():
    ev = CommandEvaluator("head -c 3000000 /dev/zero | tr '\\0' 'a'; echo; echo t: {x}", ["t"], max_output_mb=1)
    assert ev.evaluate({"x": 4}).values == {"t": 4.0}
