"""Benchmark commands write to the scratch folder unless told to update the committed results."""

import argparse

from benchmarks.outputs import RESULTS, SCRATCH, add_output_option, output_path


def _parser():
    parser = argparse.ArgumentParser()
    add_output_option(parser, "measurement", "confirmation.jsonl")
    add_output_option(parser, "measurement", "confirmation.md", flag="--table")
    return parser


def test_the_default_is_the_scratch_copy_of_the_topic_file():
    args = _parser().parse_args([])
    assert output_path(args, "measurement", "confirmation.jsonl") == SCRATCH / "measurement" / "confirmation.jsonl"
    assert (
        output_path(args, "measurement", "confirmation.md", dest="table") == SCRATCH / "measurement" / "confirmation.md"
    )


def test_update_results_names_the_committed_file_and_out_any_file(tmp_path):
    args = _parser().parse_args(["--update-results"])
    assert output_path(args, "measurement", "confirmation.jsonl") == RESULTS / "measurement" / "confirmation.jsonl"
    args = _parser().parse_args(["--out", str(tmp_path / "x.jsonl")])
    assert output_path(args, "measurement", "confirmation.jsonl") == tmp_path / "x.jsonl"


def test_the_main_commands_default_to_scratch(tmp_path, monkeypatch):
    from benchmarks import __main__ as cli

    seen = {}
    monkeypatch.setattr(
        "benchmarks.results_report.write_report", lambda results, out, **kw: seen.update(out=out, **kw) or out
    )
    assert cli.main(["report", str(tmp_path / "none.jsonl")]) == 0
    assert seen["out"] == SCRATCH / "search-quality" / "report.md"
    assert seen["plots"] == str(SCRATCH / "search-quality" / "plots")
    assert cli.main(["report", str(tmp_path / "none.jsonl"), "--plots", ""]) == 0
    assert seen["plots"] is None
