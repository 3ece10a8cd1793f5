"""HyperMapper 2.0's ``optimizer.optimize(parameters_file, black_box_function)``, run by bayestune.

A script written for HyperMapper works with its import line changed::

    from hypermapper import optimizer                      # before
    from bayestune.peers import hypermapper as optimizer   # after

    optimizer.optimize("branin_scenario.json", branin_function)

The black box is called as HyperMapper calls it (``space.py``,
``run_configurations_with_black_box_function``): with one configuration as a dict of values, or,
when ``evaluations_per_optimization_iteration`` is above 1 (HyperMapper's batch mode), with up to
that many configurations as a dict of lists (a lone configuration still as a dict of values). It
returns the objective's value, or a dict of the objectives and the feasibility flag (lists in
batch mode). The sample CSV, ``resume_optimization``, the modes and the defaults are HyperMapper's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from bayestune.exceptions import EvaluationError
from bayestune.peers.drop_in import read_peer_file, run_peer
from bayestune.peers.outputs import make_result
from bayestune.scenario import Scenario
from bayestune.trial import Result

__all__ = ["optimize"]


class HyperMapperBlackBox:
    """A HyperMapper black-box function behind the drop-in's session: see the module docstring."""

    def __init__(self, scenario: Scenario, function: Callable[[Any], Any]) -> None:
        self.function = function
        self.names = scenario.space.names
        self.objectives = scenario.objective_names
        self.feasible = scenario.feasible_output
        self.outputs = [*self.objectives, *([self.feasible] if self.feasible else [])]
        self.flags = scenario.peer_samples.flags if scenario.peer_samples is not None else None
        self.batch = scenario.batch or 1  # batch mode: evaluations_per_optimization_iteration > 1

    def __call__(self, configs: Sequence[dict[str, Any]]) -> Iterator[list[tuple[dict[str, Any], Result]]]:
        for start in range(0, len(configs), self.batch):
            chunk = list(configs[start : start + self.batch])
            if len(chunk) == 1:  # "for compatibility", a lone configuration is a dict of values
                raw = self.function({n: chunk[0][n] for n in self.names})
            else:
                raw = self.function({n: [c[n] for c in chunk] for n in self.names})
            yield list(zip(chunk, self._results(raw, len(chunk))))

    def _results(self, raw: Any, n: int) -> list[Result]:
        if len(self.outputs) == 1 and not isinstance(raw, Mapping):
            raw = {self.outputs[0]: raw}
        if not isinstance(raw, Mapping):
            raise EvaluationError(f"the black box must return a dict of {self.outputs}, but returned {raw!r}")
        columns: dict[str, list[Any]] = {}
        for name in self.outputs:
            if name not in raw:
                raise EvaluationError(f"the black box returned {sorted(map(str, raw))} without the output {name!r}")
            value = raw[name]
            if isinstance(value, list):
                if len(value) != n:
                    raise EvaluationError(
                        f"requested evaluation of {n} configurations, but received {len(value)} values for {name!r}"
                    )
                columns[name] = value
            elif n > 1:
                raise EvaluationError(f"{n} configurations were requested, so {name!r} must be a list, not {value!r}")
            else:
                columns[name] = [value]
        return [
            make_result(
                {name: columns[name][k] for name in self.outputs},
                self.objectives,
                feasible=self.feasible,
                flags=self.flags,
            )
            for k in range(n)
        ]


def optimize(parameters_file: str, black_box_function: Callable[[Any], Any] | None = None) -> None:
    """Run HyperMapper 2.0's scenario file ``parameters_file`` with bayestune, calling
    ``black_box_function`` as HyperMapper does (see the module docstring)."""
    run = read_peer_file(parameters_file, "hypermapper")
    function = None if black_box_function is None else HyperMapperBlackBox(run.scenario, black_box_function)
    run_peer(run, function)
