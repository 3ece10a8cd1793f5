"""BaCO's ``run.optimize(settings_file, black_box_function)``, run by bayestune.

A script written for BaCO works with its import line changed::

    from baco import run                            # before (older examples: ``from baco import optimizer``)
    from bayestune.peers import baco as run         # after (``... import baco as optimizer``)

    run.optimize("branin4_scenario.json", branin4_function)

``settings_file`` is a JSON file name or, as BaCO takes it, a settings dict. The black box is
called as BaCO calls it (``param/space.py``, ``run_configurations_with_black_box_function``):
once per configuration, with a dict of values (a permutation as a tuple). It returns the
objective's value; or a tuple or list of the objectives, then the feasibility flag (with the
feasibility predictor), then a standard deviation (``GP_model`` ``botorch_fixed`` or
``botorch_heteroskedastic``); or a dict of exactly those outputs (the deviation named
``std_estimate``). The deviation is written to the sample CSV as BaCO writes it; bayestune's GP
fits its own noise. The sample CSV, ``resume_optimization``, the modes and the defaults are BaCO's.
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

#: BaCO's name of the standard deviation a black box returns for its noise-aware GP models.
STD_OUTPUT = "std_estimate"


class BacoBlackBox:
    """A BaCO black-box function behind the drop-in's session: see the module docstring."""

    def __init__(self, scenario: Scenario, function: Callable[[dict[str, Any]], Any]) -> None:
        self.function = function
        self.names = scenario.space.names
        self.objectives = scenario.objective_names
        self.feasible = scenario.feasible_output
        samples = scenario.peer_samples
        self.extras = [STD_OUTPUT] if samples is not None and STD_OUTPUT in samples.extra_columns else []
        self.outputs = [*self.objectives, *([self.feasible] if self.feasible else []), *self.extras]

    def __call__(self, configs: Sequence[dict[str, Any]]) -> Iterator[list[tuple[dict[str, Any], Result]]]:
        for config in configs:
            raw = self.function({n: config[n] for n in self.names})
            yield [(config, self._result(raw))]

    def _result(self, raw: Any) -> Result:
        if isinstance(raw, tuple):
            raw = list(raw)
        if not isinstance(raw, (list, Mapping)):
            raw = [raw]
        if isinstance(raw, Mapping):
            unknown = [str(m) for m in raw if m not in self.outputs]
            if unknown:
                raise EvaluationError(
                    f"the black box returned the metric {unknown[0]!r}, which is not in the json file"
                )
            missing = [m for m in self.outputs if m not in raw]
            if missing:
                raise EvaluationError(f"the black box should return the metric {missing[0]!r} but did not")
            outputs = dict(raw)
        else:
            if len(raw) != len(self.outputs):
                raise EvaluationError(
                    f"the black box should return {len(self.outputs)} metrics {self.outputs}, but returned {len(raw)}"
                )
            outputs = dict(zip(self.outputs, raw))
        return make_result(outputs, self.objectives, feasible=self.feasible, extras=self.extras, truthy_flag=True)


def optimize(settings_file: str | Mapping[str, Any], black_box_function: Callable[[Any], Any] | None = None) -> None:
    """Run BaCO's scenario ``settings_file`` (a JSON file name or a settings dict) with bayestune,
    calling ``black_box_function`` as BaCO does (see the module docstring)."""
    run = read_peer_file(settings_file, "baco")
    function = None if black_box_function is None else BacoBlackBox(run.scenario, black_box_function)
    run_peer(run, function)
