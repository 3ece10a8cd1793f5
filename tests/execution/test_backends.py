"""make_backend and the serial backend: which evaluator runs where, and the one failure-capture policy."""

from __future__ import annotations

import sys

import pytest

from bayestune.evaluators import CallableEvaluator
from bayestune.exceptions import BayestuneError
from bayestune.execution import SerialBackend, Task, make_backend
from bayestune.trial import FailureKind, TrialStatus


def test_serial_backend_calls_a_local_function_with_the_feasibility_flag():
    backend = make_backend("serial", lambda c: {"t": c["x"], "ok": c["x"] > 0}, ["t"], feasible_key="ok")
    assert isinstance(backend, SerialBackend) and backend.owns_evaluator
    backend.submit(Task({"x": 0}, 1))
    ((_, result),) = backend.wait()
    assert result.status is TrialStatus.INFEASIBLE
    backend.close()


def test_an_evaluator_given_is_used_as_is_and_left_open():
    evaluator = CallableEvaluator(lambda c: 1.0, ["t"])
    backend = make_backend("serial", evaluator, ["t"])
    assert backend.evaluator is evaluator and not backend.owns_evaluator


def test_exceptions_and_sys_exit_from_an_evaluator_become_failures_with_a_traceback():
    class Broken(CallableEvaluator):
        def evaluate(self, config):
            if config["x"]:
                sys.exit(2)
            raise RuntimeError("boom")

    backend = SerialBackend(Broken(lambda c: 0, ["t"]))
    for x in (0, 1):
        backend.submit(Task({"x": x}, x))
        ((_, result),) = backend.wait()
        assert result.kind == FailureKind.EXCEPTION
        assert ("RuntimeError: boom" if x == 0 else "SystemExit: 2") in result.error
        assert "Traceback" in result.error


def test_keyboard_interrupt_is_not_swallowed():
    def stop(config):
        raise KeyboardInterrupt

    backend = make_backend("serial", stop, ["t"])
    backend.submit(Task({"x": 1}, 1))
    with pytest.raises(KeyboardInterrupt):
        backend.wait()


def test_unknown_backend_lists_the_allowed_ones():
    with pytest.raises(BayestuneError, match=r"unknown backend 'gpu'.*'serial', 'pool', 'dask'"):
        make_backend("gpu", lambda c: 1.0, ["t"])
