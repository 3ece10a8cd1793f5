"""The evaluation loop (bayestune.execution.run): serial, local process pool, budgets that are never
exceeded, asynchronous refills, lock-step batches, dying workers, batch suggestions, and a
fault-injection run of 200 evaluations."""

from __future__ import annotations

import math
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bayestune.evaluators import CallableEvaluator, CommandEvaluator
from bayestune.exceptions import BayestuneError, EvaluationError
from bayestune.execution import (
    CallableFactory,
    CommandFactory,
    ScenarioFactory,
    SerialBackend,
    portable,
    run,
)
from bayestune.execution.pool import ProcessPoolBackend
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import BlackBoxSpec, DesignSpec, Scenario
from bayestune.space import Categorical, Integer, Real, Space
from bayestune.storage import Journal
from bayestune.trial import TrialStatus

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and signals")

BLACKBOX = '''
import os
from pathlib import Path

CALLS = Path({calls!r})
MARKER = Path({marker!r})
KILL = {kill!r}


def run(config):
    """(x - 3)^2; x = 3 kills its worker process: never, once (marker file) or always."""
    with CALLS.open("a") as f:
        f.write(f"{{config['x']}}\\n")
    if config["x"] == 3 and (KILL == "always" or (KILL == "once" and not MARKER.exists())):
        MARKER.touch()
        os._exit(1)
    return (config["x"] - 3) ** 2
'''


def write_blackbox(tmp_path: Path, *, kill: str = "never") -> tuple[str, Path]:
    calls = tmp_path / "calls.txt"
    path = tmp_path / "bb.py"
    path.write_text(BLACKBOX.format(calls=str(calls), marker=str(tmp_path / "killed"), kill=kill))
    return f"{path}:run", calls


def calls_of(calls: Path) -> list[int]:
    return [int(line) for line in calls.read_text().split()] if calls.exists() else []


def small_space(n: int = 6) -> Space:
    return Space([Integer("x", 0, n - 1)])


def square(config):
    return (config["x"] - 3) ** 2


# ---- serial -----------------------------------------------------------------------------------
def test_serial_run_matches_optimize_and_journals_everything(tmp_path):
    with Journal(tmp_path / "a.db") as journal:
        opt = Optimizer(small_space(20), strategy="cot_random", seed=1, journal=journal)
        seen = []
        best = run(opt, square, 9, callback=seen.append)
        assert journal.n_finished() == 9 and len(seen) == 9 and not journal.pending()
        assert best.values["value"] == min(t.values["value"] for t in opt.trials)
    other = Optimizer(small_space(20), strategy="cot_random", seed=1)
    other.optimize(square, 9)
    assert [t.config for t in other.trials] == [t.config for t in opt.trials]  # same loop, same choices


def test_serial_run_stops_when_the_space_is_exhausted():
    opt = Optimizer(small_space(4), strategy="cot_random", seed=0)
    run(opt, square, 10)
    assert opt.n_evaluated == 4


def test_lock_step_batches_ask_n_at_a_time():
    class Recorder(CallableEvaluator):
        batches: list[int] = []

        def evaluate_batch(self, configs):
            self.batches.append(len(configs))
            return [self.evaluate(c) for c in configs]

    ev = Recorder(square, ["value"])
    opt = Optimizer(small_space(30), strategy="cot_random", seed=0)
    run(opt, ev, 10, batch=4)
    assert ev.batches == [4, 4, 2] and opt.n_evaluated == 10


def test_bad_arguments_are_rejected_with_the_rule():
    opt = Optimizer(small_space(), strategy="cot_random", seed=0)
    with pytest.raises(
        BayestuneError, match="unknown backend 'threads'; allowed: \\['serial', 'pool', 'dask', 'pipeline'\\]"
    ):
        run(opt, square, 3, backend="threads")
    with pytest.raises(BayestuneError, match="budget must be a positive integer, but got 0"):
        run(opt, square, 0)
    with pytest.raises(BayestuneError, match="serial backend runs one evaluation at a time, but got workers=4"):
        run(opt, square, 3, workers=4)
    with pytest.raises(BayestuneError, match="needs dask_client"):
        run(opt, square, 3, backend="dask")


def test_every_trial_carries_the_optimizers_time_beside_the_evaluators_phases():
    from bayestune.trial import Result

    def timed(config):
        return Result(values={"value": float(config["x"])}, timings={"compile": 0.25, "run": 0.5})

    opt = Optimizer(small_space(10), strategy="cot_random", seed=0)
    run(opt, timed, 4)
    assert all(set(t.timings) == {"compile", "run", "optimizer"} for t in opt.trials)
    assert all(t.timings["optimizer"] >= 0 and t.timings["compile"] == 0.25 for t in opt.trials)


def test_budget_none_runs_until_the_time_limit_or_the_space_is_exhausted():
    opt = Optimizer(small_space(5), strategy="cot_random", seed=0)
    run(opt, square, None, time_limit=600)
    assert opt.n_evaluated == 5 and opt.journal.get_meta("budget") is None
    with pytest.raises(BayestuneError, match="budget=None needs a time_limit"):
        run(Optimizer(small_space(), strategy="cot_random", seed=0), square, None)


# ---- portable evaluators ------------------------------------------------------------------------
def test_portable_factories_for_commands_targets_and_functions(tmp_path):
    cmd = CommandEvaluator("echo {x}", ["value"], timeout=3, memory_limit_mb=500)
    factory = portable(cmd)
    assert isinstance(factory, CommandFactory)
    rebuilt = factory.build()
    assert rebuilt.timeout == 3 and rebuilt.memory_limit_mb == 500
    assert rebuilt.evaluate({"x": 4}).values == {"value": 4.0}
    assert isinstance(portable(square, ["value"]), CallableFactory)
    with pytest.raises(EvaluationError, match="cannot be sent to worker processes: it cannot be pickled"):
        portable(lambda c: 1.0, ["value"])
    from bayestune.evaluators import load_callable

    target, _ = write_blackbox(tmp_path)
    loaded = CallableEvaluator(load_callable(target), ["value"])
    with pytest.raises(EvaluationError, match="private module name"):
        portable(loaded)


# ---- local process pool ------------------------------------------------------------------------
@posix_only
def test_pool_keeps_workers_busy_asynchronously_and_never_exceeds_the_budget(tmp_path):
    calls = tmp_path / "calls.txt"
    space = Space([Integer("x", 0, 40), Categorical("sleep", [0.05, 0.6])])
    target = tmp_path / "timed.py"
    target.write_text(
        textwrap.dedent(f"""
        import time
        def run(config):
            with open({str(calls)!r}, "a") as f:
                f.write(str(config["x"]) + "\\n")
            time.sleep(config["sleep"])
            return config["x"] + config["sleep"]
    """)
    )
    with Journal(tmp_path / "pool.db") as journal:
        opt = Optimizer(space, strategy="cot_random", seed=4, journal=journal, design=DesignSpec(size=3))
        run(opt, CallableFactory(f"{target}:run", ["value"]), 11, backend="pool", workers=3)
        trials = journal.trials()
    assert len(trials) == 11 and all(t.status is TrialStatus.OK for t in trials)
    assert len(calls_of(calls)) == 11  # no evaluation beyond the budget, none twice
    slow = [t for t in trials if t.config["sleep"] == 0.6]
    fast = [t for t in trials if t.config["sleep"] == 0.05]
    assert slow and fast
    # asynchronous: while one slow evaluation ran, other workers finished and were refilled
    overlapped = max(sum(s.started_at <= f.started_at and f.finished_at <= s.finished_at for f in fast) for s in slow)
    assert overlapped >= 2


@posix_only
def test_pool_worker_killed_once_is_resubmitted_and_counted_once(tmp_path):
    target, calls = write_blackbox(tmp_path, kill="once")
    backend = ProcessPoolBackend(CallableFactory(target, ["value"]), 2)
    with Journal(tmp_path / "k.db") as journal:
        opt = Optimizer(small_space(6), strategy="cot_random", seed=0, journal=journal)
        run(opt, None, 6, backend=backend)
        trials = journal.trials()
    assert backend.restarts == 1
    assert len(trials) == 6 and all(t.status is TrialStatus.OK for t in trials)
    assert sorted(t.config["x"] for t in trials) == list(range(6))
    assert Counter(calls_of(calls))[3] == 2  # evaluated twice, journaled once


@posix_only
def test_pool_worker_killed_twice_records_worker_lost_and_spares_the_others(tmp_path):
    target, calls = write_blackbox(tmp_path, kill="always")
    with Journal(tmp_path / "k.db") as journal:
        opt = Optimizer(small_space(6), strategy="cot_random", seed=0, journal=journal)
        run(opt, CallableFactory(target, ["value"]), 6, backend="pool", workers=3)
        trials = journal.trials()
    assert len(trials) == 6
    lost = [t for t in trials if t.failure_kind == "worker_lost"]
    assert [t.config["x"] for t in lost] == [3]
    assert "the worker died on each of 2 attempt(s)" in lost[0].error
    assert all(t.status is TrialStatus.OK for t in trials if t.config["x"] != 3)  # one pool per slot
    assert Counter(calls_of(calls))[3] == 2


@posix_only
def test_pool_setup_error_in_the_worker_stops_the_run(tmp_path):
    target, _ = write_blackbox(tmp_path)
    opt = Optimizer(small_space(), strategy="cot_random", seed=0)
    with pytest.raises(EvaluationError, match="could not build the evaluator.*has no attribute 'nope'"):
        run(opt, CallableFactory(target.replace(":run", ":nope"), ["value"]), 4, backend="pool", workers=2)
    assert opt.n_evaluated == 0 and opt.n_pending > 0  # still pending: a resumed run re-runs them


@posix_only
def test_scenario_factory_builds_the_command_in_each_worker(tmp_path):
    scenario = Scenario(
        "cmd",
        small_space(10),
        blackbox=BlackBoxSpec("command", "echo $(( ({x} - 3) * ({x} - 3) ))", timeout=5),
        source=str(tmp_path / "s.json"),
        strategy="cot_random",
        seed=0,
    )
    opt = Optimizer.from_scenario(scenario)
    best = run(opt, ScenarioFactory(scenario), 10, backend="pool", workers=2)
    assert opt.n_evaluated == 10 and best.values["value"] == 0.0


# ---- batch suggestions --------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["random", "cot_random", "bo"])
def test_ask_n_returns_distinct_configurations_in_the_design_and_after(strategy):
    space = Space([Integer("x", 0, 9), Categorical("c", ["a", "b"])])
    opt = Optimizer(
        space,
        strategy=strategy,
        seed=0,
        design=DesignSpec(size=5),
        strategy_options={"n_samples": 300, "n_starts": 3} if strategy == "bo" else None,
    )
    seen = set()
    for n in (5, 4, 6):  # the design, then the strategy, then nearly all that is left
        batch = opt.ask(n)
        keys = {(c["x"], c["c"]) for c in batch}
        assert len(batch) == n and len(keys) == n and not keys & seen
        seen |= keys
        for c in batch:
            opt.tell(c, (c["x"] - 4) ** 2 + (c["c"] == "b"))
    assert len(opt.ask(10)) == 20 - 15  # only what is left


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bo_batches_are_spread_not_clustered(seed):
    """Kriging believer: each batch point is planned knowing the earlier ones, so a batch does not
    collapse onto one acquisition maximum (points would be ~1e-3 apart then)."""
    space = Space([Real("x", 0, 1), Real("y", 0, 1)])
    opt = Optimizer(
        space, strategy="bo", seed=seed, design=DesignSpec(size=8), strategy_options={"n_samples": 500, "n_starts": 4}
    )
    for c in opt.ask(8):
        opt.tell(c, (c["x"] - 0.3) ** 2 + (c["y"] - 0.7) ** 2)
    batch = np.array([[c["x"], c["y"]] for c in opt.ask(4)])
    dist = np.sqrt(((batch[:, None] - batch[None]) ** 2).sum(-1))[np.triu_indices(4, 1)]
    assert dist.min() > 0.01, batch


# ---- fault injection ------------------------------------------------------------------------
FAULTY_COMMAND = r"""
k=$(( ({x} * 31 + {y} * 17) % 10 ))
case $k in
  0) echo "segfault in pass 3" >&2; kill -SEGV $$ ;;
  1) exit 3 ;;
  2) sleep 5 ;;
  3) echo "### garbage ###" ;;
  4) echo "runtime: nan" ;;
  *) echo "runtime: $(( {x} + {y} ))" ;;
esac
"""


@posix_only
def test_fault_injection_200_evaluations_all_journaled_and_the_optimizer_lives(tmp_path):
    space = Space([Integer("x", 0, 99), Integer("y", 0, 99)])
    evaluator = CommandEvaluator(FAULTY_COMMAND, ["runtime"], parameter_names=["x", "y"], timeout=0.3)
    t0 = time.monotonic()
    with Journal(tmp_path / "faults.db") as journal:
        opt = Optimizer(space, objectives=["runtime"], strategy="cot_random", seed=7, journal=journal)
        run(opt, evaluator, 200, backend="pool", workers=4)
        trials = journal.trials()
        assert journal.n_finished() == 200 and not journal.pending()
        assert len(opt.ask(3)) == 3  # still alive: it answers new batches
    assert len(trials) == 200 and opt.n_evaluated == 200
    kinds = Counter(t.failure_kind or t.status.value for t in trials)
    assert {"crash", "timeout", "parse", "nan", "ok"} <= set(kinds), kinds
    assert kinds["ok"] + kinds["crash"] + kinds["timeout"] + kinds["parse"] + kinds["nan"] == 200
    crash = next(t for t in trials if t.failure_kind == "crash" and "SIGSEGV" in t.error)
    assert "segfault in pass 3" in crash.error
    assert time.monotonic() - t0 < 40
    # a model-based strategy learns from all of it (the 3 asked above were lost in flight)
    with Journal(tmp_path / "faults.db") as journal:
        bo = Optimizer(
            space,
            objectives=["runtime"],
            strategy="bo",
            seed=1,
            journal=journal,
            resume=True,
            strategy_options={"n_samples": 300, "n_starts": 3, "max_training_points": 60},
        )
        assert bo.n_evaluated == 200 and bo.n_failed == 200 - kinds["ok"]
        (config,) = bo.ask(1)
        assert 0 <= config["x"] <= 99


@posix_only
def test_fault_injection_python_black_box_in_a_pool(tmp_path):
    """Crashes that take the worker down, exceptions, NaN, junk return values and successes."""
    source = tmp_path / "faulty.py"
    source.write_text(
        textwrap.dedent("""
        import math, os
        def run(config):
            k = (config["x"] * 7 + config["y"] * 3) % 6
            if k == 0:
                os._exit(9)
            if k == 1:
                raise RuntimeError("compiler bug")
            if k == 2:
                return math.nan
            if k == 3:
                return "fast"
            return config["x"] + config["y"]
    """)
    )
    space = Space([Integer("x", 0, 30), Integer("y", 0, 30)])
    opt = Optimizer(space, strategy="cot_random", seed=3)
    run(opt, CallableFactory(f"{source}:run", ["value"]), 40, backend="pool", workers=2)
    kinds = Counter(t.failure_kind or t.status.value for t in opt.trials)
    assert opt.n_evaluated == 40
    assert {"worker_lost", "exception", "nan", "parse", "ok"} <= set(kinds), kinds
    assert math.isfinite(opt.best.values["value"])


def test_serial_backend_batches_a_batch_capable_evaluator():
    class Batchy(CallableEvaluator):
        def evaluate_batch(self, configs):
            return [self.evaluate(c) for c in configs][:-1]  # one short: a broken evaluator

    backend = SerialBackend(Batchy(square, ["value"]), slots=3)
    opt = Optimizer(small_space(10), strategy="cot_random", seed=0)
    with pytest.raises(EvaluationError, match="answered 2 results for a batch of 3"):
        run(opt, None, 6, backend=backend, batch=3)


# ---- a run whose every evaluation fails stops early -------------------------
def _failing_after(n_ok: int):
    calls = []

    def evaluate(config):
        calls.append(config)
        if len(calls) <= n_ok:
            return float(config["x"])
        raise RuntimeError("linker: cannot find -lfoo")

    return evaluate, calls


def test_a_run_of_failures_with_no_success_stops_early_naming_the_error():
    from bayestune.execution import AllFailedError

    opt = Optimizer(Space([Integer("x", 0, 1000)]), strategy="random", seed=0)
    evaluate, calls = _failing_after(0)
    with pytest.raises(
        AllFailedError,
        match=r"(?s)first 4 evaluations .* all failed.*4 of 4 failures, kind exception.*cannot find -lfoo",
    ):
        run(opt, evaluate, 50, stop_after_failures=4)
    assert len(calls) == 4 and opt.n_evaluated == 4


def test_failures_after_a_success_never_stop_the_run():
    opt = Optimizer(Space([Integer("x", 0, 1000)]), strategy="random", seed=0)
    evaluate, calls = _failing_after(1)
    run(opt, evaluate, 12, stop_after_failures=4)
    assert opt.n_evaluated == 12
