"""Fuzzing ``bayestune serve``'s answers (issue 41, item 7's "done"): whatever a client answers
(headers shuffled or wrong, cells unreadable, rows short, long, duplicated or never requested),
the session ends or stops with a BayestuneError naming the answer; never another exception, and
no answer to a configuration that was not requested is recorded."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bayestune.exceptions import BayestuneError
from bayestune.peer_server import serve
from bayestune.scenario import scenario_from_dict
from tests.test_peer_server import SCENARIO

SMALL = {
    **SCENARIO,
    "design_of_experiment": {"doe_type": "random sampling", "number_of_samples": 3},
    "optimization_iterations": 1,
}
HEADER = ["x1", "x2", "f1_value", "f2_value", "Valid"]
HOSTILE_CELLS = ["", "fast", "nan", "inf", "-inf", "1e999", "1_000", "true", "\x00", '"1,2"', "0x10", " 3 ", "-"]


class FuzzClient:
    """Answers each request with a header and rows drawn from ``data``; remembers what was asked."""

    def __init__(self, out: io.StringIO, data) -> None:
        self.out, self.data, self.lines, self.asked = out, data, [], set()

    def readline(self, size: int = -1) -> str:
        if not self.lines:
            block = self.out.getvalue()
            requested = block[block.rindex("Request") :].strip().splitlines()[2:]
            self.asked.update(tuple(float(v) for v in r.split(",")) for r in requested)
            self.lines = [self._header(), *(self._row(r) for r in requested), *self._extra(requested)]
        return self.lines.pop(0) if self.lines else ""

    def _header(self) -> str:
        kind = self.data.draw(st.sampled_from(["right"] * 9 + ["shuffled", "short", "junk"]))
        cells = list(HEADER)
        if kind == "shuffled":
            cells = self.data.draw(st.permutations(HEADER))
        elif kind == "short":
            cells = cells[: self.data.draw(st.integers(0, len(cells) - 1))]
        elif kind == "junk":
            cells = self.data.draw(st.lists(st.text(max_size=6), max_size=6))
        return ",".join(cells) + "\n"

    def _row(self, requested: str) -> str:
        x1, x2 = (float(v) for v in requested.split(","))
        cells = [repr(x1), repr(x2), repr(x1 * x1 + 1), repr(x2 - 3), "True"]
        for _ in range(self.data.draw(st.sampled_from([0] * 8 + [1, 2]))):
            i = self.data.draw(st.integers(0, len(cells) - 1))
            cells[i] = self.data.draw(st.sampled_from(HOSTILE_CELLS) | st.text(max_size=5))
        if self.data.draw(st.integers(0, 9)) == 9:
            cells = cells[: self.data.draw(st.integers(0, len(cells)))] or [""]
        return ",".join(cells) + self.data.draw(st.sampled_from(["\n", "\n", "\r\n", ",\n"]))

    def _extra(self, requested: list[str]) -> list[str]:
        if self.data.draw(st.integers(0, 5)) < 5:
            return []
        return [self.data.draw(st.sampled_from(["7.25,-3.5,1,2,True\n", *(r + ",1,2,True\n" for r in requested)]))]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_answer_ends_the_session_or_a_clear_error(data):
    out = io.StringIO()
    client = FuzzClient(out, data)
    try:
        optimizer = serve(scenario_from_dict(SMALL), client, out, write_samples=False)
    except BayestuneError as exc:
        event("refused")
        assert "\n" not in str(exc).strip() and "Traceback" not in str(exc)  # one line
        return
    event("completed")
    for trial in optimizer.trials:
        assert (trial.config["x1"], trial.config["x2"]) in client.asked
