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
    "feasible_output": {"enable_feasible_predictor": True, "name": "Valid", "true_value": "True",
                        "false_value": "False"},
    "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": 6},
    "optimization_iterations": 4,
    "input_parameters": {"x1": {"parameter_type": "real", "values": [-20, 20], "parameter_default": 0},
                         "x2": {"parameter_type": "real", "values": [-20, 20], "parameter_default": 0}},
}


def chakong_haimes(x1: float, x2: float) -> tuple[float, float, bool]:
    f1 = 2 + (x1 - 2) ** 2 + (x2 - 1) ** 2
    f2 = 9 * x1 - (x2 - 1) ** 2
    return f1, f2, x1 * x1 + x2 * x2 <= 225 and x1 - 3 * x2 + 10 <= 0


def client(command: list[str], cwd: Path) -> list[str]:
    """HyperMapper's example client logic; returns the requests it saw."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         encoding="utf-8", cwd=cwd, env=env)
    requests = []
    while p.poll() is None:
        request = p.stdout.readline()
        if END_LINE in request:
            break
        if "warning" in request:
            continue
        requests.append(request.strip())
        n = int(request.split(" ")[1])
        assert p.stdout.readline().strip() == "x1,x2"
        reply = "x1,x2,f1_value,f2_value,Valid\n"
        for _ in range(n):
            x1, x2 = (float(v.strip()) for v in p.stdout.readline().split(","))
            f1, f2, valid = chakong_haimes(x1, x2)
            reply += f"{x1},{x2},{f1},{f2},{valid}\n"
        p.stdin.write(reply)
        p.stdin.flush()
    p.wait(timeout=60)
    assert p.returncode == 0, p.stderr.read()
    return requests


def test_a_hypermapper_client_completes_a_session_with_bayestune_serve(tmp_path):
    path = tmp_path / "client-server_chakong_haimes_scenario.json"
    path.write_text(json.dumps(SCENARIO))
    requests = client([sys.executable, "-m", "bayestune", "serve", str(path), "--seed", "1"], tmp_path)
    assert requests == ["Request 6", "Request 1", "Request 1", "Request 1", "Request 1"]  # the design, then 4 iterations
    rows = list(csv.DictReader((tmp_path / "client-server_chakong_haimes_output_samples.csv").open()))
    assert len(rows) == 10 and list(rows[0]) == ["x1", "x2", "f1_value", "f2_value", "Valid", "Timestamp"]
    assert rows[0]["x1"] == rows[0]["x2"] == "0.0"  # the defaults open the design, as in the peers
    assert {r["Valid"] for r in rows} <= {"True", "False"}


def test_batches_permutations_and_resume_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = {"application_name": "perm", "optimization_objectives": ["t"], "baco_mode": {"mode": "client-server"},
            "design_of_experiment": {"number_of_samples": 3}, "optimization_iterations": 2,
            "input_parameters": {"p": {"parameter_type": "permutation", "values": [3]},
                                 "k": {"parameter_type": "categorical", "values": ["a", "b"]}}}
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
        def readline(self):
            if not replies:
                text = out.getvalue().split(END_LINE)[0]
                block = text[text.rindex("Request"):]
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
