"""Multi-objective problems through the main harness: budget rules, hypervolume, peers, report."""

import itertools
import json

import numpy as np
import pytest

from bayestune.space import Integer, Space
from bayestune.trial import Result
from benchmarks import metrics
from benchmarks import problems as bp
from benchmarks.budget import BudgetExhausted, CountedObjective, ProposalGuard
from benchmarks.contenders import STRATEGIES, make_contender
from benchmarks.harness import load_records, run_benchmarks
from benchmarks.multiobjective import main as mo_main
from benchmarks.problem import Problem, config_key
from benchmarks.results_report import write_report


def _toy(calls: list) -> Problem:
    space = Space([Integer("x", 0, 9), Integer("y", 0, 9)], ["x + y <= 12"])

    def evaluate(config):
        calls.append(dict(config))
        if config["x"] == 0:
            return Result.failure("x = 0 crashes", "crash")
        return {"f1": float(config["x"]), "f2": float(10 - config["x"] + config["y"])}

    return Problem("toy", "multiobjective", space, ["f1", "f2"], evaluate)


def test_budget_rules_hold_for_several_objectives():
    calls: list = []
    objective = CountedObjective(_toy(calls), budget=3)
    assert objective({"x": 2, "y": 1}).values == {"f1": 2.0, "f2": 9.0}
    objective({"x": 2, "y": 1})  # repeat: free, same answer
    assert objective({"x": 9, "y": 9}).kind == "invalid"  # outside the known constraints: free
    assert objective({"x": 0, "y": 3}).kind == "crash"  # a failure counts
    objective({"x": 5, "y": 0})
    with pytest.raises(BudgetExhausted):
        objective({"x": 6, "y": 0})
    tr = objective.finish()
    assert len(calls) == 3
    assert tr.values == [[2.0, 9.0], None, [5.0, 5.0]]
    assert [e.feasible for e in tr.evaluations] == [True, False, True]
    assert (tr.repeats, tr.rejected) == (1, 1)
    assert tr.to_record()["values"] == [[2.0, 9.0], None, [5.0, 5.0]]


def test_config_key_is_one_identity():
    assert config_key({"b": 4.0, "a": (1, 0)}) == config_key({"a": [np.int64(1), 0], "b": np.float64(4)})
    assert config_key({"a": 1}) != config_key({"a": 2})


def _brute_force_hv(points: np.ndarray, ref: np.ndarray) -> float:
    """Exact 2-D hypervolume by coordinate compression: every elementary cell below the reference
    point that some point dominates."""
    points = points[np.all(points < ref, axis=1)]
    xs = np.unique(np.concatenate([points[:, 0], [ref[0]]]))
    ys = np.unique(np.concatenate([points[:, 1], [ref[1]]]))
    total = 0.0
    for (x0, x1), (y0, y1) in itertools.product(zip(xs, xs[1:]), zip(ys, ys[1:])):
        if any(p[0] <= x0 and p[1] <= y0 for p in points):
            total += (x1 - x0) * (y1 - y0)
    return total


def test_hypervolume_ratio_matches_brute_force():
    front = np.array([[0.0, 4.0], [1.0, 2.0], [2.0, 1.0], [4.0, 0.0]])
    values = [[3.0, 3.0], None, [1.5, 2.5], [5.0, 5.0], [0.5, 4.0]]
    record = {"strategy": "s", "budget": 6, "values": values, "feasible": [v is not None for v in values]}
    curves, hv_front = metrics.hypervolume_ratio_curves([record], front)
    ideal, nadir = front.min(axis=0), front.max(axis=0)
    ref = np.full(2, 1.0 + metrics.REF_OFFSET)

    def scaled(Y):
        return (np.asarray(Y, float) - ideal) / (nadir - ideal)

    assert hv_front == pytest.approx(_brute_force_hv(scaled(front), ref))
    for k in range(1, 7):
        seen = np.array([v for v in values[:k] if v is not None])
        expected = _brute_force_hv(scaled(seen), ref) / hv_front if len(seen) else 0.0
        assert curves["s"][0, k - 1] == pytest.approx(expected), k


def test_multiobjective_problems_are_in_the_registry_but_not_in_all():
    assert bp.resolve_problems("multiobjective") == ["chakong_haimes", "zdt_mixed", "halide_blur_mo"]
    assert not set(bp.resolve_problems("all")) & {"chakong_haimes", "zdt_mixed", "halide_blur_mo"}
    zdt = bp.get_problem("zdt_mixed")
    assert zdt.multi_objective and zdt.objective_names == ["f1", "f2"] and zdt.pareto_front.shape[1] == 2
    with pytest.raises(ValueError, match="objectives"):
        _ = zdt.objective
    assert bp.timing_sensitive("halide_blur_mo") and not bp.timing_sensitive("zdt_mixed")


def test_strategies_say_which_problems_they_take():
    assert STRATEGIES["parego"].multi_objective and STRATEGIES["random"].multi_objective
    assert not STRATEGIES["bo"].multi_objective
    assert not STRATEGIES["optuna_nsga2"].single_objective
    with pytest.raises(RuntimeError, match="one objective"):
        make_contender("bo", bp.get_problem("zdt_mixed"), 0)


def test_harness_skips_pairs_that_do_not_fit_and_reports_hypervolume(tmp_path):
    out = tmp_path / "mo.jsonl"
    messages: list[str] = []
    records = run_benchmarks(["zdt_mixed", "taco_like"], ["random", "bo"], [12], [0], out, log=messages.append)
    assert {(r["problem"], r["strategy"]) for r in records} == {
        ("zdt_mixed", "random"),
        ("taco_like", "random"),
        ("taco_like", "bo"),
    }
    assert any("skipping bo on zdt_mixed" in m for m in messages)
    mo = next(r for r in records if r["problem"] == "zdt_mixed")
    assert mo["objectives"] == ["f1", "f2"] and mo["n_evaluations"] == 12
    assert all(v is None or len(v) == 2 for v in mo["values"])
    report = write_report([str(out)], tmp_path / "R.md")
    text = report.read_text()
    assert "## Best / optimum at each budget" in text and "## Multi-objective benchmark" in text
    assert "### zdt_mixed" in text and "| random |" in text


def test_multiobjective_command_runs_and_reports_through_the_harness(tmp_path, capsys):
    out = tmp_path / "mo.jsonl"
    assert (
        mo_main(
            [
                "run",
                "--problems",
                "zdt_mixed",
                "--strategies",
                "random",
                "--seeds",
                "2",
                "--budget",
                "12",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    records = load_records(out)
    assert [(r["strategy"], r["seed"], r["budget"]) for r in records] == [("random", 0, 12), ("random", 1, 12)]
    assert mo_main(["report", str(out), "--out", str(tmp_path / "mo.md"), "--plots", ""]) == 0
    text = (tmp_path / "mo.md").read_text()
    assert "# Multi-objective benchmark" in text and "HV ratio @12" in text


def test_proposal_guard_caps_proposals_and_time():
    guard = ProposalGuard(2)
    assert guard.allow() and guard.allow() and not guard.allow()
    assert guard.reason == "stopped after 2 proposals"
    timed = ProposalGuard(10, max_seconds=0.0)
    assert not timed.allow() and "0 s" in timed.reason


def test_unavailable_peer_is_skipped_with_its_reason(tmp_path):
    why = STRATEGIES["optuna_nsga2"].available()
    if why is None:
        pytest.skip("optuna is installed here: the skip path is not exercised")
    messages: list[str] = []
    assert run_benchmarks(["zdt_mixed"], ["optuna_nsga2"], [10], [0], tmp_path / "x.jsonl", log=messages.append) == []
    assert any("optuna" in m and "skipping strategy" in m for m in messages)


@pytest.mark.parametrize("name", ["optuna_tpe", "optuna_nsga2", "hypermapper"])
def test_multiobjective_peer_adapter_counts_the_budget(name):
    why = STRATEGIES[name].available()
    if why:
        pytest.skip(f"{name} is unavailable: {why}")
    problem = bp.get_problem("zdt_mixed")
    trajectory = make_contender(name, problem, 0).run(problem, 12, 0)
    assert len(trajectory.evaluations) == 12
    assert all(e.value is None or len(e.value) == 2 for e in trajectory.evaluations)
    json.dumps(trajectory.to_record())


def test_published_multiobjective_tables_are_reproduced(tmp_path):
    published = bp.REPO / "benchmarks" / "results" / "multiobjective.md"
    records = bp.REPO / "benchmarks" / "results" / "multiobjective.jsonl"
    if not records.exists() or not published.exists():
        pytest.skip("no published multi-objective results in this checkout")
    assert mo_main(["report", str(records), "--out", str(tmp_path / "mo.md"), "--plots", ""]) == 0

    def tables(path):
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]

    assert tables(tmp_path / "mo.md") == tables(published)


class _FakeTrial:
    """The part of ``optuna.trial.Trial`` the multi-objective contender uses, drawing at random."""

    def __init__(self, rng):
        self.rng, self.user_attrs = rng, {}

    def suggest_float(self, name, low, high, log=False):
        return float(self.rng.uniform(low, high))

    def suggest_int(self, name, low, high, log=False):
        return int(self.rng.integers(low, high + 1))

    def suggest_categorical(self, name, choices):
        return choices[int(self.rng.integers(len(choices)))]

    def set_user_attr(self, key, value):
        self.user_attrs[key] = value


def _fake_optuna(monkeypatch, told: list):
    import sys
    import types

    class Study:
        def __init__(self, directions, sampler):
            self.directions, self.rng = directions, np.random.default_rng(sampler["seed"])

        def ask(self):
            return _FakeTrial(self.rng)

        def tell(self, trial, values=None, state=None):
            told.append((trial.user_attrs.get("violation"), values, state))

    optuna = types.ModuleType("optuna")
    optuna.logging = types.SimpleNamespace(WARNING=30, set_verbosity=lambda level: None)
    optuna.samplers = types.SimpleNamespace(TPESampler=lambda **kw: kw, NSGAIISampler=lambda **kw: kw)
    optuna.create_study = lambda directions, sampler: Study(directions, sampler)
    trial_module = types.ModuleType("optuna.trial")
    trial_module.TrialState = types.SimpleNamespace(FAIL="FAIL")
    optuna.trial = trial_module
    monkeypatch.setitem(sys.modules, "optuna", optuna)
    monkeypatch.setitem(sys.modules, "optuna.trial", trial_module)


@pytest.mark.parametrize("sampler", ["tpe", "nsga2"])
def test_optuna_multiobjective_contender_tells_what_the_rules_decided(monkeypatch, sampler):
    from benchmarks.peers.optuna_peer import OptunaMultiObjectiveContender

    told: list = []
    _fake_optuna(monkeypatch, told)
    problem = bp.get_problem("chakong_haimes")  # ~30 % of the box is feasible: many free rejections
    trajectory = OptunaMultiObjectiveContender(sampler).run(problem, 12, 0)
    assert len(trajectory.evaluations) == 12 and trajectory.rejected > 0
    ok = [t for t in told if t[0] == 0.0]
    assert len(ok) == sum(e.feasible for e in trajectory.evaluations)
    assert [list(t[1]) for t in ok] == [e.value for e in trajectory.evaluations if e.feasible]
    rejected = [t for t in told if t[0] == 1.0]
    assert rejected and all(len(t[1]) == 2 for t in rejected)  # placeholders: the worst values seen
    assert all(t[2] == "FAIL" for t in told if t[0] is None)  # rejected before any feasible value


def test_hypermapper_contender_with_several_objectives(monkeypatch):
    """Against a stand-in for ``hypermapper.optimizer.optimize``: it reads the scenario and calls
    the black box with random configurations, as HyperMapper's random design does."""
    import sys
    import types

    from benchmarks.peers.hypermapper_peer import HyperMapperContender

    answers: list = []

    def optimize(path, black_box):
        with open(path) as fh:
            scenario = json.load(fh)
        assert scenario["optimization_objectives"] == ["f1", "f2"]
        rng = np.random.default_rng(0)
        while True:
            x = {}
            for name, p in scenario["input_parameters"].items():
                values = p["values"]
                if p["parameter_type"] == "real":
                    x[name] = float(rng.uniform(*values))
                elif p["parameter_type"] == "integer":
                    x[name] = int(rng.integers(values[0], values[1] + 1))
                else:
                    x[name] = values[int(rng.integers(len(values)))]
            answers.append(black_box(x))

    hm = types.ModuleType("hypermapper")
    hm.optimizer = types.SimpleNamespace(optimize=optimize)
    hm.models = types.SimpleNamespace(OneHotEncoder=types.SimpleNamespace(_bayestune_shim=True))
    monkeypatch.setitem(sys.modules, "hypermapper", hm)
    monkeypatch.setitem(sys.modules, "hypermapper.models", hm.models)
    problem = bp.get_problem("zdt_mixed")
    trajectory = HyperMapperContender().run(problem, 12, 0)
    assert len(trajectory.evaluations) == 12
    assert all(set(a) == {"f1", "f2", "Valid"} for a in answers)
    assert sum(a["Valid"] for a in answers) == sum(e.feasible for e in trajectory.evaluations)


def test_seed_limits_run_a_slow_strategy_on_fewer_seeds(tmp_path):
    records = run_benchmarks(
        ["zdt_mixed"],
        ["random", "cot_random"],
        [5],
        [0, 1, 2],
        tmp_path / "r.jsonl",
        seed_limits={"cot_random": 1},
        log=lambda m: None,
    )
    assert sorted((r["strategy"], r["seed"]) for r in records) == [
        ("cot_random", 0),
        ("random", 0),
        ("random", 1),
        ("random", 2),
    ]


def test_halide_problems_share_one_black_box_per_pipeline(monkeypatch, tmp_path):
    from benchmarks import halide_problems as hp
    from benchmarks.multiobjective_problems import build_multiobjective_problem

    monkeypatch.setattr(hp, "HALIDE_AVAILABLE", True)  # nothing is measured: no server starts
    monkeypatch.setattr(hp, "_BLACK_BOXES", {})
    monkeypatch.setenv("BAYESTUNE_HALIDE_CACHE", str(tmp_path))
    single = hp.build_halide_problem("halide_blur")
    several = build_multiobjective_problem("halide_blur_mo")
    assert single.evaluate.__self__ is several.evaluate.__self__
    assert several.objective_names == ["time", "compile_s"] and several.timing_sensitive
    assert several.metadata["measurement_cache"] == str(tmp_path / "halide_blur.cache.jsonl")
