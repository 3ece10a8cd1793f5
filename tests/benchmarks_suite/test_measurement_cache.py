"""The per-configuration measurement cache of the live Halide problems (no Halide needed)."""


class _CountingBox:
    """A stand-in evaluator: answers by configuration and counts its calls."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = 0
        self.closed = False

    def evaluate(self, config):
        self.calls += 1
        return self.answers[config["x"]]

    def close(self):
        self.closed = True


def test_measurement_cache_measures_each_configuration_once_across_instances(tmp_path):
    from bayestune.trial import Result
    from benchmarks.halide_problems import MeasurementCache

    answers = {
        1: Result(values={"time": 2.5, "compile_s": 0.1}),
        2: Result.failure("bad schedule", "compile"),
        3: Result.failure("the Halide server stopped answering; restarted", "timeout"),
    }
    path = tmp_path / "c.jsonl"
    box = _CountingBox(answers)
    cache = MeasurementCache(box, path)
    assert cache.evaluate({"x": 1, "p": (1, 0)}).values == {"time": 2.5, "compile_s": 0.1}
    assert cache.evaluate({"p": [1, 0], "x": 1.0}).values["time"] == 2.5  # same key: not measured again
    failed = cache.evaluate({"x": 2})
    assert not failed.feasible and failed.kind == "compile"
    cache.evaluate({"x": 3})
    cache.evaluate({"x": 3})
    assert box.calls == 4  # x=1 once, x=2 once, x=3 twice (a lost server is not the schedule's fault)
    with path.open("a") as fh:
        fh.write('{"key": "torn')  # a killed run leaves a partial line
    again = MeasurementCache(_CountingBox(answers), path)
    assert again.evaluate({"x": 2}).kind == "compile" and again.evaluate({"x": 1, "p": (1, 0)}).feasible
    assert again.evaluator.calls == 0
    answers[4] = Result(values={"time": 1.0})
    again.evaluate({"x": 4})  # appended after the torn line, on a line of its own
    assert MeasurementCache(_CountingBox(answers), path).evaluate({"x": 4}).values == {"time": 1.0}
    again.close()
    assert again.evaluator.closed
