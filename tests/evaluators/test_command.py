"""Shell-command black boxes: template filling and quoting, output forms, crashes, timeouts
that kill whole process groups, and memory limits."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bayestune.evaluators import CommandEvaluator, parse_output
from bayestune.exceptions import EvaluationError
from bayestune.trial import TrialStatus

PY = shlex.quote(sys.executable)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc and RLIMIT_AS")


# ---- parse_output ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "stdout, values",
    [
        ('compiling...\n{"runtime": 1.5, "power": 3}\n', {"runtime": 1.5, "power": 3.0}),
        ("runtime: 2.5\n", {"runtime": 2.5}),
        ("runtime = 2.5e-3\n", {"runtime": 0.0025}),
        ("runtime: 3.2 ms\nnoise: text here\n", {"runtime": 3.2}),
        ("runtime: 4\nruntime: 4\n", {"runtime": 4.0}),  # the same value twice is no ambiguity
        ("warming up\n\n  7.25  \n\n", {"runtime": 7.25}),
        ("run 3 of 3: took\n12.5ms\n", {"runtime": 12.5}),
        ("3.2 ms\n", {"runtime": 3.2}),
        ("-4\n", {"runtime": -4.0}),
    ],
)
def test_parse_single_objective_forms(stdout, values):
    result = parse_output(stdout, ["runtime"])
    assert result.status is TrialStatus.OK, result.error
    assert dict(result.values) == values


def test_parse_multi_objective_key_value_lines_keep_extra_metrics():
    result = parse_output("log line\nlatency: 4\nenergy = 0.5\ncache_misses: 1200\n", ["latency", "energy"])
    assert dict(result.values) == {"latency": 4.0, "energy": 0.5, "cache_misses": 1200.0}


@pytest.mark.parametrize(
    "stdout",
    [
        '{"runtime": 1.0, "feasible": false}',
        '{"runtime": 1.0, "Valid": "False"}',
        "runtime: 1.0\nValid: False",
        "feasible = false",
    ],
)
def test_parse_feasibility_flag(stdout):
    assert parse_output(stdout, ["runtime"]).status is TrialStatus.INFEASIBLE


def test_parse_feasible_true_flag_still_needs_values():
    assert parse_output("runtime: 1.0\nValid: True", ["runtime"]).status is TrialStatus.OK
    assert parse_output("feasible: true", ["a", "b"]).kind == "parse"


@pytest.mark.parametrize("stdout", ['{"runtime": NaN}', "runtime: nan", "runtime = inf", "-inf"])
def test_parse_non_finite_is_nan_failure(stdout):
    result = parse_output(stdout, ["runtime"])
    assert result.status is TrialStatus.FAILED and result.kind == "nan"


@pytest.mark.parametrize(
    "stdout, why",
    [
        ("fast 8 b\n", "echoing its own arguments"),  # a black box printing its configuration
        ("took 3.2 ms\n", "echoing its own arguments"),  # say which number: 'runtime: 3.2 ms'
        ('{"runtime": true}\n', "true/false, not numbers"),
        (
            "runtime: 1\nruntime: 4\n",
            "'runtime' is given twice with different values ('1', then the line 'runtime: 4')",
        ),
        ("feasible: true\nruntime: 2\nfeasible: false\n", "'feasible' is given twice"),
    ],
)
def test_parse_refuses_what_it_would_have_to_guess(stdout, why):
    result = parse_output(stdout, ["runtime"])
    assert result.status is TrialStatus.FAILED and result.kind == "parse" and why in result.error


def test_parse_garbage_names_expectation_and_quotes_line():
    result = parse_output("all good\nSegmentation fault (core dumped)\n", ["runtime"])
    assert result.kind == "parse"
    assert "'Segmentation fault (core dumped)'" in result.error
    assert "JSON object" in result.error and "['runtime']" in result.error


def test_parse_quotes_long_lines_truncated():
    result = parse_output("x" * 5000, ["runtime"])
    assert result.kind == "parse" and len(result.error) < 600 and result.error.endswith("...'")


def test_parse_multi_objective_needs_every_objective():
    result = parse_output("latency: 4\n12.0\n", ["latency", "energy"])
    assert result.kind == "parse" and "energy" in result.error
    result = parse_output('{"latency": 4}', ["latency", "energy"])
    assert result.kind == "parse" and "energy" in result.error


def test_parse_non_numeric_objective_value_is_named():
    result = parse_output("a: 1\nb: broken", ["a", "b"])
    assert result.kind == "parse" and "['b']" in result.error


def test_parse_empty_output():
    result = parse_output("\n  \n", ["runtime"])
    assert result.kind == "parse" and "nothing" in result.error


def test_parse_json_missing_objective():
    result = parse_output('{"latency": 1}', ["runtime"])
    assert result.kind == "parse" and "runtime" in result.error


# ---- running commands ----------------------------------------------------------------------
def test_command_success_with_each_output_form():
    cases = {
        "echo '{{\"runtime\": '{x}'}}'": {"runtime": 3.0},  # literal braces doubled, {x} outside quotes
        "echo runtime: {x}": {"runtime": 3.0},
        "echo building; echo {x} s": {"runtime": 3.0},
    }
    for template, values in cases.items():
        result = CommandEvaluator(template, ["runtime"], parameter_names=["x"]).evaluate({"x": 3})
        assert result.status is TrialStatus.OK, (template, result)
        assert dict(result.values) == values


def test_permutation_and_format_spec_rendering():
    ev = CommandEvaluator("echo {order} {alpha:.2f} {n:04d}", ["y"], parameter_names=["order", "alpha", "n"])
    assert ev.render({"order": (1, 0, 2), "alpha": 0.5, "n": 7}) == "echo 1,0,2 0.50 0007"
    assert ev.render({"order": [2, 1, 0], "alpha": 1, "n": 1}) == "echo 2,1,0 1.00 0001"


def test_hostile_values_are_passed_literally(tmp_path):
    script = tmp_path / "record.py"
    script.write_text("import json, sys\nopen(sys.argv[1], 'a').write(json.dumps(sys.argv[2:]) + '\\n')\nprint(1.0)\n")
    log = tmp_path / "argv.jsonl"
    ev = CommandEvaluator(
        f"{PY} {shlex.quote(str(script))} {shlex.quote(str(log))} {{v}} {{w}}",
        ["y"],
        parameter_names=["v", "w"],
        workdir=tmp_path,
    )
    hostile = ["a; rm -rf /", "$(touch pwned1)", "`touch pwned2`", 'it\'s "quoted"', "x\ny", "*", "", "-rf"]
    for value in hostile:
        result = ev.evaluate({"v": value, "w": "b && touch pwned3"})
        assert result.status is TrialStatus.OK, result
    recorded = [json.loads(line) for line in log.read_text().splitlines()]
    assert recorded == [[value, "b && touch pwned3"] for value in hostile]
    assert not list(tmp_path.glob("pwned*"))


def test_unknown_placeholder_is_rejected_at_construction():
    with pytest.raises(EvaluationError) as info:
        CommandEvaluator("./bench --tile {tile} --unrol {unrol}", ["y"], parameter_names=["tile", "unroll"])
    message = str(info.value)
    assert "{unrol}" in message and "['tile', 'unroll']" in message


@pytest.mark.parametrize("template", ["echo {", "echo {}", "echo {0}", "echo {x.real}", "echo {x[0]}"])
def test_malformed_templates_are_rejected(template):
    with pytest.raises(EvaluationError, match="template"):
        CommandEvaluator(template, ["y"], parameter_names=["x"])


def test_missing_parameter_without_names_is_a_template_failure():
    result = CommandEvaluator("echo {x}", ["y"]).evaluate({"z": 1})
    assert result.kind == "template" and "'x'" in result.error


def test_construction_checks_timeout_workdir_and_memory_limit(tmp_path):
    with pytest.raises(EvaluationError, match="timeout"):
        CommandEvaluator("echo 1", ["y"], timeout=0)
    with pytest.raises(EvaluationError, match="does not exist"):
        CommandEvaluator("echo 1", ["y"], workdir=tmp_path / "nope")
    with pytest.raises(EvaluationError, match="memory_limit_mb"):
        CommandEvaluator("echo 1", ["y"], memory_limit_mb=-5)


def test_workdir_and_env(tmp_path):
    ev = CommandEvaluator('echo "$PWD"; echo "value: $BT_SCALE"', ["value"], workdir=tmp_path, env={"BT_SCALE": 4})
    assert ev.evaluate({}).values == {"value": 4.0}
    ev = CommandEvaluator(
        'pwd >&2; basename "$(pwd)" | grep -q {name} && echo 1', ["v"], parameter_names=["name"], workdir=tmp_path
    )
    assert ev.evaluate({"name": tmp_path.name}).status is TrialStatus.OK


def test_non_zero_exit_is_crash_with_code_and_stderr_tail():
    ev = CommandEvaluator(
        "echo runtime: 1; for i in $(seq 500); do echo noise $i >&2; done; echo 'fatal: tile too big' >&2; exit 3",
        ["runtime"],
    )
    result = ev.evaluate({})
    assert result.status is TrialStatus.FAILED and result.kind == "crash"
    assert "exited with code 3" in result.error
    assert result.error.rstrip().endswith("fatal: tile too big")
    assert "noise 1\n" not in result.error  # only the tail of stderr is kept


def test_killed_by_signal_is_crash_naming_the_signal():
    result = CommandEvaluator(f"{PY} -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'", ["y"]).evaluate({})
    assert result.kind == "crash" and "SIGSEGV" in result.error


def test_garbage_output_is_parse_failure_with_stderr():
    result = CommandEvaluator("echo 'warning: fell back to scalar code' >&2; echo done", ["runtime"]).evaluate({})
    assert result.kind == "parse" and "'done'" in result.error and "fell back" in result.error


def test_nan_output_is_nan_failure():
    assert CommandEvaluator("echo runtime: nan", ["runtime"]).evaluate({}).kind == "nan"


def _alive(pid: int) -> bool:
    """Running (not a zombie waiting for a reaper that may not exist in a container)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@linux_only
def test_timeout_kills_the_whole_process_group(tmp_path):
    pids = tmp_path / "pids"
    template = f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}; sleep 30"
    ev = CommandEvaluator(template, ["y"], timeout=1.0)
    start = time.monotonic()
    result = ev.evaluate({})
    elapsed = time.monotonic() - start
    assert result.status is TrialStatus.FAILED and result.kind == "timeout"
    assert re.search(r"timed out after \d+\.\d s \(timeout 1 s\)", result.error), result.error
    assert elapsed < 15.0  # well short of the 30 s the sleeps would take: they were killed, not awaited
    shell, grandchild = (int(p) for p in pids.read_text().split())
    deadline = time.monotonic() + 10.0
    while (_alive(shell) or _alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(shell) and not _alive(grandchild)


@linux_only
def test_background_jobs_do_not_outlive_a_finished_command(tmp_path):
    pidfile = tmp_path / "pid"
    result = CommandEvaluator(f"sleep 30 >/dev/null 2>&1 & echo $! > {pidfile}; echo 1.5", ["y"]).evaluate({})
    assert result.values == {"y": 1.5}
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 2.0
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


@linux_only
def test_memory_limit_turns_a_large_allocation_into_a_crash():
    allocate = f"{PY} -c 'b = bytearray(2 * 1024 ** 3); print(len(b))'"
    result = CommandEvaluator(allocate, ["y"], memory_limit_mb=300).evaluate({})
    assert result.status is TrialStatus.FAILED and result.kind == "crash"
    assert "MemoryError" in result.error
    small = CommandEvaluator(
        f"{PY} -c 'b = bytearray(10 * 1024 ** 2); print(len(b))'", ["y"], memory_limit_mb=300
    ).evaluate({})
    assert small.values == {"y": float(10 * 1024**2)}


def test_ctrl_c_kills_the_running_command(tmp_path, monkeypatch):
    import subprocess

    pidfile = tmp_path / "pid"
    real = subprocess.Popen.wait
    calls = []

    def interrupted(self, timeout=None):
        calls.append(timeout)
        if len(calls) == 1:  # the evaluation's wait, not the reaping afterwards
            deadline = time.monotonic() + 5
            while not pidfile.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            raise KeyboardInterrupt
        return real(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        CommandEvaluator(f"echo $$ > {pidfile}; sleep 30", ["y"]).evaluate({})
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 2.0
    while os.path.exists(f"/proc/{pid}") and _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_custom_feasible_output_name_is_read():
    from bayestune.evaluators.output import parse_output

    result = parse_output("runtime: 3.0\nis_ok: False\n", ["runtime"], feasible_key="is_ok")
    assert not result.feasible
    assert parse_output('{"runtime": 2.0, "is_ok": true}', ["runtime"], feasible_key="is_ok").feasible


# ---- never a wrong number, never a stuck or stray command ---------------------------
@pytest.mark.parametrize(
    "line",
    [
        "[GPU 0]",
        "12,345",
        "+- 0.3",
        "1.5 +- 0.3",
        "1.5 ± 0.3",
        "CI 1.4-1.6",
        "run 3 of 3: took 12.5ms",
        "\x00\x01\x7f 3",
        "\ufffd\ufffd 3",
        "min 1.0 max 2.0",
    ],
)
def test_an_ambiguous_last_line_is_a_parse_failure_quoting_it(line):
    """Before: '[GPU 0]' -> 0.0, '12,345' -> 345, '+- 0.3' -> 0.3, 'CI 1.4-1.6' -> -1.6, garbage -> a number."""
    result = parse_output(f"warming up\n{line}\n", ["runtime"])
    assert result.status is TrialStatus.FAILED and result.kind == "parse"
    assert repr(line) in result.error


@pytest.mark.parametrize(
    "options, stdout, values",
    [
        ({"output_regex": r"mean (\S+) ms"}, "run 3 of 3: mean 12.5 ms (sd 0.3)\nbye\n", {"runtime": 12.5}),
        (
            {"output_regex": r"t=(?P<runtime>\S+) p=(?P<power>\S+)"},
            "t=1 p=2\nt=3 p=4\n",
            {"runtime": 3.0, "power": 4.0},
        ),
        ({"output_json": "stats.mean"}, '{"stats": {"mean": 2.5, "n": [1, 2]}}\n', {"runtime": 2.5}),
        ({"output_json": {"runtime": "r.1"}}, 'log\n{"r": [9, 7.5]}\n', {"runtime": 7.5}),
    ],
)
def test_a_declared_regex_or_json_field_reads_the_value(tmp_path, options, stdout, values):
    (tmp_path / "out.txt").write_text(stdout)
    objectives = [k for k in values if k != "power"]
    ev = CommandEvaluator("cat out.txt #{x}", objectives, workdir=tmp_path, **options)
    result = ev.evaluate({"x": 1})
    assert result.status is TrialStatus.OK, result.error
    assert dict(result.values) == values


@pytest.mark.parametrize(
    "options, stdout, fragment",
    [
        ({"output_regex": r"mean (\S+) ms"}, "no mean here\n", "matches nothing"),
        ({"output_regex": r"mean (\S+) ms"}, "mean 1,5 ms\n", "not one number"),
        ({"output_json": "stats.mean"}, '{"stats": {}}\n', "no field 'stats.mean'"),
        ({"output_json": "stats.mean"}, "plain 3\n", "no JSON document"),
    ],
)
def test_a_declared_rule_that_does_not_fit_is_a_parse_failure(tmp_path, options, stdout, fragment):
    (tmp_path / "out.txt").write_text(stdout)
    result = CommandEvaluator("cat out.txt #{x}", ["runtime"], workdir=tmp_path, **options).evaluate({"x": 1})
    assert result.kind == "parse" and fragment in result.error


def test_bad_output_rules_are_refused_up_front():
    with pytest.raises(EvaluationError, match="not a regular expression"):
        CommandEvaluator("echo {x}", ["t"], output_regex="(")
    with pytest.raises(EvaluationError, match="no group for objective"):
        CommandEvaluator("echo {x}", ["t", "p"], output_regex="(?P<t>.*)")
    with pytest.raises(EvaluationError, match="output_regex or output_json"):
        CommandEvaluator("echo {x}", ["t"], output_regex="(.*)", output_json="a")


@pytest.mark.parametrize("template", ['echo "{c}"', "echo '{c}'", 'echo "x {c} y"', "echo 'a'\"b{c}\""])
def test_placeholders_inside_quotes_are_refused(template):
    """Before: '{c}' in quotes let the categorical value "x' ; touch pwned ; '" run a command."""
    with pytest.raises(EvaluationError, match="inside .* quotes"):
        CommandEvaluator(template, ["t"])


def test_placeholders_outside_quotes_stay_allowed(tmp_path):
    ev = CommandEvaluator("echo \"tile:\" {c} 'x' >/dev/null; echo {n}", ["t"], workdir=tmp_path)
    assert ev.evaluate({"c": "x' ; touch pwned ; '", "n": 2}).values["t"] == 2.0
    assert not (tmp_path / "pwned").exists()


def test_a_background_job_holding_stdout_does_not_hold_the_result(tmp_path):
    """Before: 'sleep 600 & echo 1.5' became a timeout failure (or hung without a timeout)."""
    ev = CommandEvaluator("sleep 30 & echo {x}", ["t"], timeout=10, workdir=tmp_path)
    start = time.monotonic()
    result = ev.evaluate({"x": 1.5})
    assert result.status is TrialStatus.OK, result.error
    assert result.values["t"] == 1.5 and time.monotonic() - start < 5
    ev_no_timeout = CommandEvaluator("sleep 30 & echo $! > bg.pid; echo {x}", ["t"], workdir=tmp_path)
    assert ev_no_timeout.evaluate({"x": 2}).values["t"] == 2.0
    assert not _alive_soon(int((tmp_path / "bg.pid").read_text()))  # and the background job was killed


def _alive_soon(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if stat == "Z":
                return False
        except (ProcessLookupError, FileNotFoundError):
            return False
        time.sleep(0.05)
    return True


@linux_only
def test_a_timeout_sends_sigterm_first_so_the_command_can_clean_up(tmp_path):
    """Before: SIGKILL at once; a trap on TERM never ran."""
    ev = CommandEvaluator(
        "trap 'echo cleaned > done.txt; exit 1' TERM; sleep 30 & wait; echo {x}", ["t"], timeout=0.5, workdir=tmp_path
    )
    result = ev.evaluate({"x": 1})
    assert result.kind == "timeout" and "SIGTERM" in result.error
    assert (tmp_path / "done.txt").read_text().strip() == "cleaned"


@linux_only
def test_a_command_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    ev = CommandEvaluator("trap '' TERM; sleep 30; echo {x}", ["t"], timeout=0.3, workdir=tmp_path)
    start = time.monotonic()
    result = ev.evaluate({"x": 1})
    assert result.kind == "timeout" and "SIGKILL" in result.error
    assert time.monotonic() - start < 10


def test_stdout_is_capped_and_its_end_kept(tmp_path):
    """Before: 100 MB of output were held in memory (500 MB RSS)."""
    ev = CommandEvaluator(
        "head -c 3000000 /dev/zero | tr '\\0' 'x'; echo; echo {x}", ["t"], workdir=tmp_path, max_output_mb=1
    )
    result = ev.evaluate({"x": 4})
    assert result.values["t"] == 4.0
    with pytest.raises(EvaluationError, match="max_output_mb"):
        CommandEvaluator("echo {x}", ["t"], max_output_mb=0)


@pytest.mark.parametrize("limit", [1e30, 0.001, float("nan"), True])
def test_memory_limits_outside_a_sane_range_are_refused(limit):
    with pytest.raises(EvaluationError, match="memory_limit_mb"):
        CommandEvaluator("echo {x}", ["t"], memory_limit_mb=limit)


@linux_only
@pytest.mark.parametrize("launch", ["sleep", "setsid sleep"])
def test_the_command_dies_with_the_process_that_started_it(tmp_path, launch):
    """Before: after kill -9 of the optimizer (or a pool worker) the command kept running."""
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2] / 'src')!r})\n"
        "from bayestune.evaluators import CommandEvaluator\n"
        f"CommandEvaluator('echo $$ > sh.pid; {launch} 60 & echo $! > child.pid; wait; echo {{x}}', ['t'], "
        f"workdir={str(tmp_path)!r}).evaluate({{'x': 1}})\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 20
    while not (tmp_path / "child.pid").exists() or not (tmp_path / "child.pid").read_text().strip():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    child = int((tmp_path / "child.pid").read_text())
    shell = int((tmp_path / "sh.pid").read_text())
    assert _alive_soon(child, 0.3)
    parent.kill()
    parent.wait(10)
    assert not _alive_soon(child), "the black box outlived the process that started it"
    assert not _alive_soon(shell)


#: Ways a command starts a process outside its own process group: a new session, and a
#: daemon (a new session, double-forked, so it is an orphan from the start).
ESCAPES = ["setsid sleep 30 & echo $! > gc.pid", "(setsid sleep 30 & echo $! > gc.pid)"]
needs_subreaper = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreaper is Linux only")


@needs_subreaper
@pytest.mark.parametrize("launch", ESCAPES)
def test_a_timeout_stops_descendants_that_left_the_process_group(tmp_path, launch):
    """Before: a setsid grandchild escaped the group kill and kept running after the timeout."""
    ev = CommandEvaluator(f"{launch}; sleep 30; echo {{x}}", ["t"], timeout=0.5, workdir=tmp_path)
    result = ev.evaluate({"x": 1})
    assert result.kind == "timeout", result.error
    grandchild = int((tmp_path / "gc.pid").read_text())
    assert not _alive_soon(grandchild), "the setsid grandchild outlived the timeout"


@needs_subreaper
@pytest.mark.parametrize("launch", ESCAPES)
def test_a_finished_command_leaves_no_descendant_outside_its_group(tmp_path, launch):
    result = CommandEvaluator(f"{launch}; sleep 0.2; echo {{x}}", ["t"], workdir=tmp_path).evaluate({"x": 2})
    assert result.values == {"t": 2.0}
    assert not _alive_soon(int((tmp_path / "gc.pid").read_text()))


@linux_only
def test_without_a_subreaper_the_process_group_is_still_stopped(tmp_path, monkeypatch):
    """The fallback of platforms without PR_SET_CHILD_SUBREAPER: the shell leads the group."""
    from bayestune.evaluators import processes

    monkeypatch.setattr(processes, "subreaper_available", lambda: False)
    ev = CommandEvaluator("sleep 30 & echo $! > bg.pid; sleep 30; echo {x}", ["t"], timeout=0.5, workdir=tmp_path)
    result = ev.evaluate({"x": 1})
    assert result.kind == "timeout" and "SIGTERM" in result.error
    assert not _alive_soon(int((tmp_path / "bg.pid").read_text()))
    assert CommandEvaluator("echo {x}", ["t"], memory_limit_mb=300).evaluate({"x": 3}).values == {"t": 3.0}


@pytest.mark.parametrize(
    "stdout, feasible", [("feasible: false\n", False), ("Valid: True\nruntime: 2\n", True), ("feasible: no\n", False)]
)
def test_a_feasibility_flag_reads_as_true_or_false(stdout, feasible):
    assert parse_output(stdout, ["runtime"]).feasible is feasible


def test_a_feasibility_flag_that_is_neither_is_a_parse_failure():
    """Found by fuzzing: 'feasible: runtime' was read as infeasible."""
    result = parse_output("feasible: runtime\n", ["runtime"])
    assert result.kind == "parse" and "neither true nor false" in result.error
