"""The flaky black-box benchmark (issue 41 item 1): its emulation of the rule before the fix drops
the successful runs of flaky contenders, the fixed code keeps them, and the patch is undone."""

from __future__ import annotations

from bayestune.measurement.racing import RacingEvaluator
from benchmarks.flaky_failures import run_one


def test_the_old_rule_drops_runs_and_the_fixed_code_keeps_them():
    real = RacingEvaluator.evaluate
    old = run_one("old_rule", 0)
    assert RacingEvaluator.evaluate is real
    fixed = run_one("fixed", 0)
    assert old["dropped_runs"] > 0 and fixed["dropped_runs"] == 0
    # (how many trials end up failed depends on the search's path, which differs between the arms)
    assert 0.0 <= fixed["regret"] and 0.0 <= old["regret"]
