"""The build/measure pipeline with real worker processes: builds overlap, each device measures one
configuration at a time, a failed build never reaches a device, and on the CPU device no build
runs beside a measurement."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.execution import ScenarioFactory, run
from bayestune.execution.pipeline import PipelineBackend
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import BlackBoxSpec, DesignSpec, Scenario
from bayestune.space import Integer, Space
from bayestune.trial import FailureKind, TrialStatus

BLACK_BOX = """
import json, os, time
LOG = {log!r}

def _note(kind, x, start, device=""):
    with open(os.path.join(LOG, f"{{kind}}-{{x}}-{{time.time_ns()}}.json"), "w") as f:
        json.dump({{"kind": kind, "x": x, "start": start, "end": time.time(), "device": device}}, f)

def build(config, artefact):
    start = time.time()
    time.sleep(0.25)
    if config["x"] == 3:
        raise RuntimeError("does not compile")
    with open(artefact, "w") as f:
        f.write(str(config["x"]))
    _note("build", config["x"], start)

def measure(config):
    start = time.time()
    with open(config["artefact"]) as f:
        x = int(f.read())
    time.sleep(0.1)
    _note("run", x, start, config["device"] + "|" + os.environ.get("BAYESTUNE_DEVICE", ""))
    return {{"t": (x - 5) ** 2 + 1.0}}
"""


def _scenario(tmp_path: Path) -> tuple[Scenario, Path]:
    log = tmp_path / "log"
    log.mkdir()
    (tmp_path / "bb.py").write_text(textwrap.dedent(BLACK_BOX.format(log=str(log))))
    spec = BlackBoxSpec(kind="python", target="bb.py:measure", build="bb.py:build", build_kind="python")
    space = Space([Integer("x", 0, 9)])
    scenario = Scenario(
        "pipe",
        space,
        objectives=(Objective("t"),),
        blackbox=spec,
        source=str(tmp_path / "scenario.json"),
        design=DesignSpec(size=6),
    )
    return scenario, log


def _events(log: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in log.iterdir()]


def _overlap(a: dict, b: dict) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def _run(scenario: Scenario, budget: int, **options) -> Optimizer:
    opt = Optimizer(scenario.space, objectives=["t"], strategy="random", seed=1, design=scenario.design)
    run(opt, ScenarioFactory(scenario), budget, backend="pipeline", stop_after_failures=None, **options)
    return opt


def test_builds_overlap_measurements_never_do_and_a_failed_build_never_reaches_a_device(tmp_path: Path) -> None:
    scenario, log = _scenario(tmp_path)
    opt = _run(scenario, 8, build_workers=3, devices=["gpu0"])
    events = _events(log)
    builds = [e for e in events if e["kind"] == "build"]
    runs = [e for e in events if e["kind"] == "run"]
    assert any(_overlap(a, b) for i, a in enumerate(builds) for b in builds[i + 1 :])
    assert not any(_overlap(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :])
    assert {e["device"] for e in runs} == {"gpu0|gpu0"}  # {device} and BAYESTUNE_DEVICE
    assert opt.n_evaluated == 8
    for trial in opt.trials:
        if trial.config["x"] == 3:
            assert trial.status is TrialStatus.FAILED and trial.failure_kind == FailureKind.COMPILE
            assert "does not compile" in trial.error
        else:
            assert trial.status is TrialStatus.OK and "compile" in trial.timings
    assert 3 not in {e["x"] for e in runs}


def test_on_the_cpu_device_no_build_runs_beside_a_measurement(tmp_path: Path) -> None:
    scenario, log = _scenario(tmp_path)
    _run(scenario, 8, build_workers=3, devices=["cpu"])
    events = _events(log)
    builds = [e for e in events if e["kind"] == "build"]
    runs = [e for e in events if e["kind"] == "run"]
    assert runs and not any(_overlap(b, r) for b in builds for r in runs)


@pytest.mark.slow
def test_two_devices_measure_at_once_but_each_one_at_a_time(tmp_path: Path) -> None:
    scenario, log = _scenario(tmp_path)
    _run(scenario, 10, build_workers=4, devices=["0", "1"])
    runs = [e for e in _events(log) if e["kind"] == "run"]
    assert {e["device"] for e in runs} <= {"0|0", "1|1"}
    for device in ("0|0", "1|1"):
        mine = [e for e in runs if e["device"] == device]
        assert not any(_overlap(a, b) for i, a in enumerate(mine) for b in mine[i + 1 :])


def test_bad_pipeline_settings_are_one_line_errors(tmp_path: Path) -> None:
    scenario, _ = _scenario(tmp_path)
    factory = ScenarioFactory(scenario)
    with pytest.raises(BayestuneError, match=r"devices: \['0'\] listed more than once"):
        PipelineBackend(factory, devices=["0", "1", "0"])
    with pytest.raises(BayestuneError, match="build_workers must be a positive integer"):
        PipelineBackend(factory, build_workers=0)
    with pytest.raises(BayestuneError, match="non-empty list of device names"):
        PipelineBackend(factory, devices=[])
