"""In-process black boxes: loading ``module:function`` / ``file.py:function`` targets, and
turning every way a call can go wrong into a recorded failure."""

from __future__ import annotations

import math
import sys
import textwrap

import pytest

from bayestune.evaluators import CallableEvaluator, load_callable
from bayestune.exceptions import EvaluationError
from bayestune.trial import Result, TrialStatus


def test_success_number_sequence_mapping_and_result():
    assert CallableEvaluator(lambda c: c["x"] * 2, ["y"]).evaluate({"x": 3}) == Result(values={"y": 6.0})
    two = CallableEvaluator(lambda c: (1, 2.5), ["a", "b"]).evaluate({})
    assert two.status is TrialStatus.OK and two.values == {"a": 1.0, "b": 2.5}
    extra = CallableEvaluator(lambda c: {"y": 1.0, "power": 30.0}, ["y"]).evaluate({})
    assert extra.values == {"y": 1.0, "power": 30.0}
    infeasible = CallableEvaluator(lambda c: {"y": 1.0, "feasible": False}, ["y"]).evaluate({})
    assert infeasible.status is TrialStatus.INFEASIBLE


def test_evaluator_is_callable_and_a_context_manager():
    with CallableEvaluator(lambda c: 1.0, ["y"]) as ev:
        assert ev({"x": 1}).values == {"y": 1.0}


def test_config_is_passed_as_a_copy():
    def mutate(config):
        config["x"] = 99
        return 1.0

    config = {"x": 1}
    CallableEvaluator(mutate, ["y"]).evaluate(config)
    assert config == {"x": 1}


def test_exception_becomes_failure_with_type_message_and_traceback_tail():
    def boom(config):
        raise ValueError(f"tile {config['tile']} too large")

    result = CallableEvaluator(boom, ["y"]).evaluate({"tile": 64})
    assert result.status is TrialStatus.FAILED and result.kind == "exception"
    assert result.error.startswith("ValueError: tile 64 too large")
    assert "in boom" in result.error  # the black box's own frame is quoted
    assert "evaluators/python_callable.py" not in result.error  # ... not ours


def test_system_exit_is_a_failure_but_ctrl_c_propagates():
    assert CallableEvaluator(lambda c: sys.exit(3), ["y"]).evaluate({}).kind == "exception"

    def interrupted(config):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CallableEvaluator(interrupted, ["y"]).evaluate({})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_value_is_nan_failure(value):
    result = CallableEvaluator(lambda c: value, ["y"]).evaluate({})
    assert result.status is TrialStatus.FAILED and result.kind == "nan"


def test_wrong_arity_of_function_is_exception_failure():
    result = CallableEvaluator(lambda a, b: a + b, ["y"]).evaluate({"x": 1})
    assert result.kind == "exception" and "TypeError" in result.error


def test_wrong_number_of_returned_values_is_parse_failure():
    result = CallableEvaluator(lambda c: (1.0, 2.0, 3.0), ["a", "b"]).evaluate({})
    assert result.kind == "parse" and "3 values" in result.error and "['a', 'b']" in result.error


def test_missing_objective_is_parse_failure_naming_it():
    result = CallableEvaluator(lambda c: {"latency": 1.0}, ["runtime"]).evaluate({})
    assert result.kind == "parse" and "runtime" in result.error


def test_none_and_garbage_return_values_are_failures():
    assert CallableEvaluator(lambda c: None, ["y"]).evaluate({}).kind == "parse"
    assert CallableEvaluator(lambda c: "fast", ["y"]).evaluate({}).kind == "parse"
    assert CallableEvaluator(lambda c: {"y": "fast"}, ["y"]).evaluate({}).kind == "parse"


def test_constructor_rejects_non_callables_and_empty_objectives():
    with pytest.raises(EvaluationError):
        CallableEvaluator(42, ["y"])  # type: ignore[arg-type]
    with pytest.raises(EvaluationError):
        CallableEvaluator(lambda c: 1, [])


# ---- load_callable -----------------------------------------------------------------------
def test_load_module_function():
    fn = load_callable("math:hypot")
    assert fn(3, 4) == 5.0
    assert load_callable("os.path:join")("a", "b") == "a/b"


def _write(path, source):
    path.write_text(textwrap.dedent(source))
    return path


def test_load_file_function_relative_to_base_dir(tmp_path):
    sub = tmp_path / "bench"
    sub.mkdir()
    _write(sub / "helper.py", "SCALE = 10\n")
    _write(
        sub / "blackbox.py",
        """
        from dataclasses import dataclass
        import helper  # a sibling module: the file's directory is importable while it loads

        @dataclass
        class Cost:
            scale: float

        def run(config):
            return Cost(helper.SCALE).scale * config["x"]
        """,
    )
    before = set(sys.modules)
    fn = load_callable("bench/blackbox.py:run", base_dir=tmp_path)
    assert CallableEvaluator(fn, ["y"]).evaluate({"x": 2}).values == {"y": 20.0}
    added = set(sys.modules) - before
    assert "blackbox" not in sys.modules and "bench" not in sys.modules
    assert all(name.startswith("_bayestune_blackbox_") for name in added - {"helper"})
    assert str(sub) not in sys.path
    # the same file twice: the same module object, not a second import
    assert load_callable("bench/blackbox.py:run", base_dir=tmp_path) is fn


def test_module_name_of_a_file_next_to_the_scenario(tmp_path):
    _write(tmp_path / "my_bench_mod_xyz.py", "def run(config):\n    return 1.5\n")
    assert load_callable("my_bench_mod_xyz:run", base_dir=tmp_path)({}) == 1.5


def test_dotted_attribute():
    assert load_callable("collections:OrderedDict.fromkeys")(["a"]) == {"a": None}


@pytest.mark.parametrize(
    "target, fragment",
    [
        ("no_such_module_abc:run", "cannot import module 'no_such_module_abc'"),
        ("math:no_such_function", "has no attribute 'no_such_function'"),
        ("math:pi", "is not callable"),
        ("math", "must look like"),
        (":run", "needs both"),
        ("missing/file.py:run", "does not exist"),
    ],
)
def test_errors_name_the_target(target, fragment, tmp_path):
    with pytest.raises(EvaluationError) as info:
        load_callable(target, base_dir=tmp_path)
    assert fragment in str(info.value)
    assert repr(target) in str(info.value) or target in str(info.value)


def test_error_in_imported_file_is_evaluation_error(tmp_path):
    _write(tmp_path / "broken.py", "import no_such_dependency_qq\n")
    with pytest.raises(EvaluationError, match="no_such_dependency_qq"):
        load_callable("broken.py:run", base_dir=tmp_path)
    _write(tmp_path / "syntax.py", "def run(:\n")
    with pytest.raises(EvaluationError, match="SyntaxError"):
        load_callable("syntax.py:run", base_dir=tmp_path)


def test_missing_dependency_of_an_installed_module_is_not_masked(tmp_path):
    # the module exists but one of its imports does not: report that import, don't fall back
    _write(tmp_path / "needs_dep_mod_q.py", "import no_such_dependency_zz\ndef run(c):\n    return 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(EvaluationError, match="no_such_dependency_zz"):
            load_callable("needs_dep_mod_q:run")
    finally:
        sys.path.remove(str(tmp_path))


def test_custom_feasible_output_name_is_read_from_callables():
    from bayestune.evaluators.python_callable import CallableEvaluator

    ev = CallableEvaluator(lambda cfg: {"t": 1.0, "fits": False}, ["t"], feasible_key="fits")
    assert not ev.evaluate({"a": 1}).feasible


def test_threads_loading_one_file_black_box_at_once_all_get_it_whole(tmp_path):
    """A Dask worker's threads each build their evaluator: none may see the module half-run."""
    import threading

    from bayestune.evaluators.python_callable import load_callable

    (tmp_path / "slow_box.py").write_text("import time\ntime.sleep(0.3)\n\ndef run(config):\n    return 1.0\n")
    got, errors = [], []

    def load():
        try:
            got.append(load_callable("slow_box.py:run", tmp_path))
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(got) == 6 and len({id(f) for f in got}) == 1
