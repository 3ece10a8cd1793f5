"""``bayestune serve``: a HyperMapper client program works by changing only the command it launches.

The client below follows the logic of HyperMapper's own example client
(example_scenarios/clients/python/client-server_chakong_haimes.py), written anew: it starts the
optimizer as a subprocess, reads ``Request N``, the header and N rows, answers with a header of
inputs, outputs and the feasible flag and N rows, and stops at ``End of HyperMapper``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bayestune.peer_server import END_LINE, serve
from bayestune.scenario import scenario_from_dict

SRC = str(Path(__file__).parents[1] / "src")
SCENARIO = {  # HyperMapper's client-server_chakong_haimes_scenario.json, smaller
    "application_name": "client-server_chakong_haimes",
    "optimization_objectives": ["f1_value", "f2_value"],
    "hypermapper_mode": {"mode": "client-server"},
    "feasible_output": {
        "enable_feasible_predictor": True,
        "name": "Valid",
        "true_value": "True",
        "false_value": "False",
    },
    "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": 6},
    "optimization_iterations": 4,
    "input_parameters": {
        "x1": {"parameter_type": "real", "values": [-20, 20], "parameter_default": 0},
        "x2": {"parameter_type": "real", "values": [-20, 20], "parameter_default": 0},
    },
}


def chakong_haimes(x1: float, x2: float) -> tuple[float, float, bool]:
    f1 = 2 + (x1 - 2) ** 2 + (x2 - 1) ** 2
    f2 = 9 * x1 - (x2 - 1) ** 2
    return f1, f2, x1 * x1 + x2 * x2 <= 225 and x1 - 3 * x2 + 10 <= 0


def client(command: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """HyperMapper's example client logic; returns the requests it saw and every line the
    optimizer wrote to stdout (HyperMapper's client skips lines with "warning"; this one keeps
    them, so a test can check that nothing but the protocol arrives)."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        cwd=cwd,
        env=env,
    )
    requests, lines = [], []

    def line() -> str:
        lines.append(p.stdout.readline())
        return lines[-1]

    while p.poll() is None:
        request = line()
        if END_LINE in request:
            break
        if "warning" in request:
            continue
        requests.append(request.strip())
        n = int(request.split(" ")[1])
        assert line().strip() == "x1,x2"
        reply = "x1,x2,f1_value,f2_value,Valid\n"
        for _ in range(n):
            x1, x2 = (float(v.strip()) for v in line().split(","))
            f1, f2, valid = chakong_haimes(x1, x2)
            reply += f"{x1},{x2},{f1},{f2},{valid}\n"
        p.stdin.write(reply)
        p.stdin.flush()
    lines += p.stdout.readlines()
    p.wait(timeout=60)
    assert p.returncode == 0, p.stderr.read()
    assert p.stderr.read() == ""  # the clients never read stderr: everything goes to the log file
    return requests, lines


def _numbers(text: str, n: int) -> bool:
    try:
        return len([float(v) for v in text.split(",")]) == n
    except ValueError:
        return False


def protocol_lines(lines: list[str]) -> list[str]:
    """The lines that break the protocol: anything but ``Request N``, the header, N rows of two
    numbers, and the end line once, last."""
    bad, state, rows_left = [], "request", 0
    for raw in lines:
        text = raw.rstrip("\n")
        if state == "header":
            state = "rows"
            if text != "x1,x2":
                bad.append(text)
        elif state == "rows" and rows_left:
            rows_left -= 1
            if not _numbers(text, 2):
                bad.append(text)
        elif state != "end" and text.startswith("Request ") and text[8:].isdigit():
            state, rows_left = "header", int(text[8:])
        elif state != "end" and text == END_LINE:
            state = "end"
        else:
            bad.append(text)
    return bad + (["(no end line)"] if state != "end" else [])


def test_a_hypermapper_client_completes_a_session_with_bayestune_serve(tmp_path):
    path = tmp_path / "client-server_chakong_haimes_scenario.json"
    path.write_text(json.dumps({**SCENARIO, "run_directory": "runs"}))
    requests, lines = client([sys.executable, "-m", "bayestune", "serve", str(path), "--seed", "1"], tmp_path)
    assert requests == [
        "Request 6",
        "Request 1",
        "Request 1",
        "Request 1",
        "Request 1",
    ]  # the design, then 4 iterations
    assert protocol_lines(lines) == [] and len(lines) == 5 + 5 + 10 + 1  # requests, headers, rows, the end
    runs = tmp_path / "runs"  # the peers write their files under run_directory
    rows = list(csv.DictReader((runs / "client-server_chakong_haimes_output_samples.csv").open()))
    assert len(rows) == 10 and list(rows[0]) == ["x1", "x2", "f1_value", "f2_value", "Valid", "Timestamp"]
    assert rows[0]["x1"] == rows[0]["x2"] == "0.0"  # the defaults open the design, as in the peers
    assert {r["Valid"] for r in rows} <= {"True", "False"}
    front = list(csv.DictReader((runs / "client-server_chakong_haimes_output_pareto.csv").open()))
    assert 1 <= len(front) <= sum(r["Valid"] == "True" for r in rows) and all(r["Valid"] == "True" for r in front)
    log = (runs / "hypermapper_logfile.log").read_text()  # HyperMapper's default log_file
    assert (
        "experimental" not in log
    )  # HyperMapper's epsilon is its own behaviour: no warning about an option it never set


def test_the_protocol_check_catches_a_stray_line():
    good = ["Request 1\n", "x1,x2\n", "0.5,1\n", END_LINE + "\n"]
    assert protocol_lines(good) == []
    assert protocol_lines(good[:2] + ["WARNING: x\n"] + good[2:]) == ["WARNING: x", "0.5,1"]
    assert protocol_lines(good[:-1]) == ["(no end line)"]


def test_serve_logs_to_the_files_log_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    named = scenario_from_dict({**SCENARIO, "log_file": "cs.log", "run_directory": "r"}, source="s.json")
    assert named.peer_samples.log_path == os.path.join("r", "cs.log")
    baco = scenario_from_dict({**SCENARIO, "bayestune_read_as": "baco"}, source="s.json")
    assert baco.peer_samples.log_path == "baco_logfile.log"


def test_batches_permutations_and_resume_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = {
        "application_name": "perm",
        "optimization_objectives": ["t"],
        "baco_mode": {"mode": "client-server"},
        "design_of_experiment": {"number_of_samples": 3},
        "optimization_iterations": 2,
        "input_parameters": {
            "p": {"parameter_type": "permutation", "values": [3]},
            "k": {"parameter_type": "categorical", "values": ["a", "b"]},
        },
    }
    scenario = scenario_from_dict(data, source=str(tmp_path / "s.json"))

    def answer(out: str) -> str:
        lines = out.strip().splitlines()
        reply = ["t,k,p"]  # any column order
        for row in lines[2:]:
            p, k = row.rsplit(",", 1)
            reply.append(f"{sum(i * v for i, v in enumerate(eval(p)))},{k},{p}")
        return "\n".join(reply) + "\n"

    out, replies = io.StringIO(), []

    class Reader:  # answers each request as the client would
        def readline(self, size=-1):
            if not replies:
                text = out.getvalue().split(END_LINE)[0]
                block = text[text.rindex("Request") :]
                replies.extend(answer(block).splitlines(keepends=True))
            return replies.pop(0)

    opt = serve(scenario, Reader(), out)
    assert opt.n_evaluated == 5 and out.getvalue().endswith(END_LINE + "\n")
    assert "Request 3\np,k\n(" in out.getvalue()
    first = Path("perm_output_samples.csv").read_text().splitlines()
    assert first[0] == "p,k,t,timestamp" and len(first) == 6  # BaCO's header: lower-case timestamp

    resumed = scenario_from_dict({**data, "resume_optimization": True}, source=str(tmp_path / "s.json"))
    out.seek(0), out.truncate()
    opt = serve(resumed, Reader(), out, write_samples=False)
    assert opt.n_evaluated == 5 and "Request" not in out.getvalue()  # the budget was spent by the resumed rows


def test_a_client_that_hangs_up_is_a_clear_error():
    from bayestune.exceptions import BayestuneError

    scenario = scenario_from_dict(SCENARIO)
    with pytest.raises(BayestuneError, match="request 1: the client closed its end before sending its header"):
        serve(scenario, io.StringIO(""), io.StringIO(), write_samples=False)


def test_a_file_that_does_not_load_says_why_on_stderr(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**SCENARIO, "optimization_iterations": -1}))
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "bayestune", "serve", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and done.stdout == ""
    assert "optimization_iterations" in done.stderr and not (tmp_path / "hypermapper_logfile.log").exists()


class ChakongClient:
    """Answers each request as HyperMapper's chakong_haimes client does, the flag in ``words``."""

    def __init__(self, out: io.StringIO, words: tuple[str, str] = ("True", "False")) -> None:
        self.out, self.words, self.replies = out, words, []

    def readline(self, size: int = -1) -> str:
        if not self.replies:
            text = self.out.getvalue().split(END_LINE)[0]
            rows = text[text.rindex("Request") :].strip().splitlines()[2:]
            self.replies.append("x1,x2,f1_value,f2_value,Valid\n")
            for row in rows:
                x1, x2 = map(float, row.split(","))
                f1, f2, valid = chakong_haimes(x1, x2)
                self.replies.append(f"{x1},{x2},{f1},{f2},{self.words[0] if valid else self.words[1]}\n")
        return self.replies.pop(0)


def test_serve_writes_epoch_milliseconds_and_the_files_flag_words(tmp_path, monkeypatch):
    """Client-server mode: HyperMapper and BaCO stamp the rows with current_milli_time() (epoch),
    and HyperMapper writes its true_value/false_value (a one-key variant: 'ok'/'bad')."""
    import time

    monkeypatch.chdir(tmp_path)
    data = {**SCENARIO, "feasible_output": {**SCENARIO["feasible_output"], "true_value": "ok", "false_value": "bad"}}
    out = io.StringIO()
    before = time.time() * 1000
    serve(scenario_from_dict(data, source="s.json"), ChakongClient(out, ("ok", "bad")), out)
    rows = list(csv.DictReader(open("client-server_chakong_haimes_output_samples.csv")))
    assert len(rows) == 10 and {r["Valid"] for r in rows} <= {"ok", "bad"}
    assert all(before - 1000 <= float(r["Timestamp"]) <= time.time() * 1000 + 1000 for r in rows)
    out = io.StringIO()
    with pytest.raises(Exception, match="expected 'ok' or 'bad', as the scenario declares"):
        serve(scenario_from_dict(data, source="s.json"), ChakongClient(out), out)  # HyperMapper stops on 'True'


def test_baco_reads_any_other_flag_word_as_infeasible():
    data = {**SCENARIO, "bayestune_read_as": "baco"}
    data.pop("hypermapper_mode")
    out = io.StringIO()
    opt = serve(
        scenario_from_dict(data, source="s.json"), ChakongClient(out, ("True", "nope")), out, write_samples=False
    )
    assert opt.n_evaluated == 10 and any(not t.feasible for t in opt.trials)


def test_print_best_true_writes_the_best_point_before_the_end_line():
    """HyperMapper's optimizer.py: print_best "auto" is false in client-server mode, true prints
    "Best point found:", the names and the values before "End of HyperMapper" (one objective)."""
    data = {**SCENARIO, "optimization_objectives": ["f1_value"], "print_best": True}
    data["feasible_output"] = {"enable_feasible_predictor": False}

    class Client(ChakongClient):
        def readline(self, size: int = -1) -> str:
            return ",".join(super().readline().split(",")[:3]).rstrip("\n") + "\n"

    out = io.StringIO()
    serve(scenario_from_dict(data, source="s.json"), Client(out), out, write_samples=False)
    tail = out.getvalue().splitlines()[-5:]
    assert tail[0] == "Best point found:" and tail[1] == "x1,x2,f1_value" and tail[-1] == END_LINE
    out = io.StringIO()
    serve(scenario_from_dict({**data, "print_best": "auto"}, source="s.json"), Client(out), out, write_samples=False)
    assert "Best point found" not in out.getvalue()


def test_hypermapper_restarts_pibos_iteration_count_after_a_resume(tmp_path, monkeypatch):
    """bo.py's main loop counts iteration_number from 1 after a resume; BaCO continues it."""
    from bayestune.peer_server import PeerSession

    monkeypatch.chdir(tmp_path)
    data = {**SCENARIO, "optimization_objectives": ["f1_value"], "resume_optimization": True}
    data["input_parameters"] = {**data["input_parameters"]}
    data["input_parameters"]["x1"] = {**data["input_parameters"]["x1"], "prior": "gaussian"}
    rows = ["x1,x2,f1_value,Valid,Timestamp"] + [f"{i},{i},{i},True,{i}" for i in range(9)]
    Path("client-server_chakong_haimes_output_samples.csv").write_text("\n".join(rows) + "\n")
    hm = PeerSession(scenario_from_dict(data, source="s.json"), lambda c: [])
    assert hm.scenario.strategy_options["prior"]["design"] == 9  # 9 resumed rows, a design of 6
    baco = PeerSession(
        scenario_from_dict({**data, "bayestune_read_as": "baco", "acquisition_function": "EI_PIBO"}), lambda c: []
    )
    assert baco.scenario.strategy_options["prior"]["design"] == 6


class _Scripted:
    """A client that answers each request by a rule applied to the requested rows."""

    def __init__(self, out: io.StringIO, rows) -> None:
        self.out, self.rows, self.lines = out, rows, []

    def readline(self, size: int = -1) -> str:
        if not self.lines:
            text = self.out.getvalue()
            block = text[text.rindex("Request") :].strip().splitlines()[2:]
            self.lines = ["x1,x2,f1_value,f2_value,Valid\n", *self.rows(block)]
        return self.lines.pop(0)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (lambda block: ["7.25,-3.5,1,2,True\n"] + [f"{r},1,2,True\n" for r in block[1:]], "which was not requested"),
        (lambda block: [f"{r},fast,2,True\n" for r in block], "a row marked valid with objective 'f1_value' is 'fast'"),
        (lambda block: [f"{r},,2,True\n" for r in block], "a row marked valid with objective 'f1_value' is empty"),
    ],
    ids=["unrequested", "unreadable", "empty"],
)
def test_serve_takes_only_answers_to_what_it_asked_and_readable_valid_rows(rows, message):
    from bayestune.exceptions import BayestuneError

    out = io.StringIO()
    with pytest.raises(BayestuneError, match=message):
        serve(scenario_from_dict(SCENARIO), _Scripted(out, rows), out, write_samples=False)


def test_serve_splits_a_line_of_many_commas_in_linear_time_and_refuses_an_endless_line(monkeypatch):
    import time

    from bayestune import peer_server
    from bayestune.exceptions import BayestuneError

    started = time.perf_counter()
    cells = peer_server._cells("," * 200_000 + "(1, 2)")
    assert len(cells) == 200_001 and cells[-1] == "(1, 2)" and time.perf_counter() - started < 5
    monkeypatch.setattr(peer_server, "MAX_LINE_CHARS", 1000)
    out = io.StringIO()
    with pytest.raises(BayestuneError, match="longer than 1,000 characters"):
        serve(scenario_from_dict(SCENARIO), io.StringIO("x" * 5000), out, write_samples=False)
