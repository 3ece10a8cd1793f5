"""The harness (records, resume, fair budget rules) and the report, end to end on cheap problems."""

import importlib.util
import json

import pytest

from bayestune.trial import Result
from benchmarks import problems as bp
from benchmarks.__main__ import main
from benchmarks.budget import BudgetExhausted, CountedObjective, run_measured
from benchmarks.contenders import STRATEGIES, BayestuneContender, register_strategy, resolve_strategies
from benchmarks.harness import load_records, parse_seeds, run_benchmarks
from benchmarks.result_set import Results
from benchmarks.results_report import write_report


def test_bayestune_strategies_are_registered():
    for name in ("bo", "random", "cot_random", "genetic", "annealing", "local"):
        assert STRATEGIES[name].family == "bayestune"
    with pytest.raises(ValueError, match="unknown strategy"):
        resolve_strategies("bo,nope")


def test_counted_objective_applies_the_fair_rules():
    problem = bp.get_problem("sparse_chain")
    ok = bp.STATED_OPTIMA["sparse_chain"][1]
    other = dict(ok, p10=32)
    bad = {f"p{i}": 1 for i in range(1, 11)}
    f = CountedObjective(problem, budget=2)
    assert f(bad).kind == "invalid"  # outside the known-feasible set: free
    assert f(ok).feasible
    assert f(ok).feasible  # repeat: free
    assert f(other).feasible
    with pytest.raises(BudgetExhausted):
        f(dict(ok, p10=64))
    tr = f.finish()
    assert len(tr.evaluations) == 2 and tr.rejected == 1 and tr.repeats == 1
    assert tr.evaluations[0].value == pytest.approx(2.83)


def test_a_peer_is_just_another_registry_entry():
    class FixedOrderPeer:
        """Proposes configurations from a list, ignoring constraints (as some peers do)."""

        def run(self, problem, budget, seed):
            space = problem.space
            configs = space.to_configs(space.sample(budget + 5, __import__("numpy").random.default_rng(seed)))
            infeasible = {f"p{i}": 64 for i in range(1, 11)}

            def drive(objective):
                objective(infeasible)
                for c in configs:
                    objective(c)
                    objective(c)

            return run_measured(problem, budget, drive)

    register_strategy("test_peer", lambda problem, seed: FixedOrderPeer(), description="test")
    try:
        tr = (
            STRATEGIES["test_peer"].factory(bp.get_problem("sparse_chain"), 0).run(bp.get_problem("sparse_chain"), 7, 0)
        )
        assert len(tr.evaluations) == 7 and tr.rejected == 1 and tr.repeats >= 6
    finally:
        del STRATEGIES["test_peer"]


def test_failures_count_towards_the_budget():
    tr = BayestuneContender("random").run(bp.get_problem("taco_like"), 30, 1)
    assert len(tr.evaluations) == 30
    fails = [e for e in tr.evaluations if not e.feasible]
    assert fails and all(e.value is None and e.kind in ("compile", "runtime") for e in fails)
    assert tr.strategy_s >= 0 and tr.eval_s >= 0 and tr.memory_method


def test_run_resume_and_report(tmp_path):
    out = tmp_path / "r.jsonl"
    logs = []
    new = run_benchmarks(
        ["sparse_chain", "branin_mixed"],
        ["random", "local"],
        [5, 12],
        [0, 1],
        out,
        command="python -m benchmarks run ...",
        log=logs.append,
    )
    assert len(new) == 8 and not any(r["error"] for r in new)
    records = load_records(out)
    assert len(records) == 8
    r = records[0]
    for key in (
        "values",
        "feasible",
        "failure_kinds",
        "ask_s",
        "eval_s",
        "configs",
        "strategy_s",
        "peak_rss_mb",
        "optimum",
        "budgets",
        "command",
        "versions",
    ):
        assert key in r
    assert r["n_evaluations"] == 12 and r["budgets"] == [5, 12]
    # resume: nothing left to do; a torn last line is ignored
    with open(out, "a") as fh:
        fh.write('{"problem": "spar')
    assert (
        run_benchmarks(["sparse_chain", "branin_mixed"], ["random", "local"], [5, 12], [0, 1], out, log=logs.append)
        == []
    )
    assert any("resuming" in m for m in logs)
    # a larger budget re-runs; the report then uses the longer run
    again = run_benchmarks(["sparse_chain"], ["random"], [5, 15], [0], out, log=logs.append)
    assert len(again) == 1 and again[0]["n_evaluations"] == 15
    res = Results(load_records(out))
    assert len(res.values("sparse_chain", "random")[0]) == 15
    assert res.budgets == [5, 12, 15] and res.strategies == ["local", "random"]
    plots = tmp_path / "plots" if importlib.util.find_spec("matplotlib") else None
    path = write_report(
        [str(out)],
        tmp_path / "R.md",
        plots=str(plots) if plots else None,
        reference="local",
        command="python -m benchmarks report ...",
    )
    text = path.read_text()
    for heading in (
        "## Commands",
        "## Best / optimum",
        "## Evaluations `local` needs",
        "## Mean deviation factor",
        "## Win fractions",
        "## Time and memory",
    ):
        assert heading in text
    assert "python -m benchmarks run ..." in text and "sparse_chain" in text
    if plots:
        assert (plots / "sparse_chain.png").stat().st_size > 1000


def test_strategy_errors_are_recorded_not_raised(tmp_path):
    register_strategy("test_broken", lambda problem, seed: (_ for _ in ()).throw(RuntimeError("boom")))
    try:
        new = run_benchmarks(["sparse_chain"], ["test_broken"], [3], [0], tmp_path / "e.jsonl", log=lambda m: None)
        assert "boom" in new[0]["error"]
    finally:
        del STRATEGIES["test_broken"]


def test_cli_run_and_report(tmp_path, capsys):
    out = tmp_path / "c.jsonl"
    assert (
        main(
            [
                "run",
                "--problems",
                "forrester_2d",
                "--strategies",
                "random",
                "--budgets",
                "4,8",
                "--seeds",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in lines] == [0, 1]
    assert lines[0]["command"].startswith("python -m benchmarks run --problems forrester_2d")
    assert main(["report", str(out), "--out", str(tmp_path / "R.md"), "--plots", ""]) == 0
    assert "forrester_2d" in (tmp_path / "R.md").read_text()
    assert main(["list"]) == 0
    assert "synthetic: branin_mixed" in capsys.readouterr().out


def test_parse_seeds():
    assert parse_seeds("3") == [0, 1, 2]
    assert parse_seeds("2-4") == [2, 3, 4]
    assert parse_seeds("1,5") == [1, 5]


def test_result_for_failures_keeps_kind():
    problem = bp.get_problem("taco_like")
    f = CountedObjective(problem, budget=1)
    cfg = dict(bp.STATED_OPTIMA["taco_like"][1], order=(1, 2, 3, 4, 0))
    assert isinstance(f(cfg), Result)
    assert f.trajectory.evaluations[0].kind == "runtime"


def test_variant_names_carry_strategy_options_and_design():
    from benchmarks.contenders import make_contender, parse_variant

    assert parse_variant("bo:experimental.epsilon=0.1+trust_region.every=3+design=maximin+design_size=20") == (
        "bo",
        {"experimental": {"epsilon": 0.1}, "trust_region": {"every": 3}},
        {"method": "maximin", "size": 20},
    )
    assert parse_variant("bo:local_every=3") == ("bo", {"local_every": 3}, {})  # old names still load
    assert resolve_strategies("bo:model=rf,random") == ["bo:model=rf", "random"]
    contender = make_contender("bo:model=rf+design_default=false", bp.get_problem("sparse_chain"), 0)
    assert contender.options == {"model": "rf"} and contender.design.include_default is False
    with pytest.raises(ValueError, match="unknown option"):
        resolve_strategies("bo:kernel=rbf")
    with pytest.raises(ValueError, match="key=value"):
        resolve_strategies("bo:epsilon")
    with pytest.raises(ValueError, match="not a bayestune strategy"):
        resolve_strategies("nope:x=1")


def test_report_mdf_points_option(tmp_path):
    """``report --mdf-points`` sets the budgets the MDF averages over; the default (40, 60, ... up to
    the largest budget, else the largest budget) is unchanged."""
    from benchmarks.results_report import table_mdf

    out = tmp_path / "m.jsonl"
    assert (
        main(
            [
                "run",
                "--problems",
                "forrester_2d,sparse_chain",
                "--strategies",
                "random,local",
                "--budgets",
                "4,8",
                "--seeds",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    default, chosen = tmp_path / "D.md", tmp_path / "C.md"
    assert main(["report", str(out), "--out", str(default), "--plots", ""]) == 0
    assert main(["report", str(out), "--out", str(chosen), "--plots", "", "--mdf-points", "4,8"]) == 0
    assert "Per run MAE = mean over budgets 8 of" in default.read_text()
    text = chosen.read_text()
    assert "Per run MAE = mean over budgets 4, 8 of" in text and "--mdf-points 4,8" in text
    lines, _ = table_mdf(Results(load_records(out)), [4, 8])
    section = text.split("## Mean deviation factor", 1)[1]
    assert all(line in section for line in lines)


def test_report_with_a_variant_as_reference_tabulates_it_against_the_others(tmp_path):
    """``report --reference bo:x=y``: the variant is the reference of the main tables (wins, MDF),
    not only of the issue-17 section."""
    out = tmp_path / "v.jsonl"
    assert (
        main(
            [
                "run",
                "--problems",
                "forrester_2d",
                "--strategies",
                "random,genetic:mutation_rate=0.5",
                "--budgets",
                "4,8",
                "--seeds",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = tmp_path / "R.md"
    assert (
        main(["report", str(out), "--out", str(report), "--plots", "", "--reference", "genetic:mutation_rate=0.5"]) == 0
    )
    wins = report.read_text().split("## Win fractions", 1)[1].split("\n## ", 1)[0]
    assert "| random | 2 |" in wins
