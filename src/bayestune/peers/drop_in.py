"""What both Python drop-ins share: the scenario read as the named peer's file, its mode, and the
run the peer makes (the resumed rows first, the sample CSV rewritten as results arrive, one
black-box run per configuration: no racing, no confirmation).

The peers write their best point to stdout when the run ends (HyperMapper's ``print_best``,
BaCO's "Best point found"); the drop-ins do too, since the scripts written for them show it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bayestune.exceptions import BayestuneError
from bayestune.measurement.build import make_evaluator
from bayestune.optimizer import Optimizer
from bayestune.peer_server import END_LINE, Evaluate, PeerSession, best_point_lines, serve
from bayestune.scenario import Scenario, scenario_from_dict
from bayestune.scenario.hypermapper.keys import OVERRIDE_KEY
from bayestune.trial import Result

logger = logging.getLogger(__name__)

#: What a peer's black box is given and returns, turned into results (see each peer's module).
Convention = Callable[[Sequence[dict[str, Any]]], Iterable[Sequence[tuple[dict[str, Any], Result]]]]


@dataclass(frozen=True)
class PeerRun:
    """A peer's file read as that peer's: the scenario and the raw settings the conventions need."""

    scenario: Scenario
    settings: Mapping[str, Any]
    source: str

    @property
    def mode(self) -> str:
        for key in ("hypermapper_mode", "baco_mode"):
            value = self.settings.get(key)
            if isinstance(value, Mapping):
                return str(value.get("mode", "default"))
        return "default"


def read_peer_file(settings_file: str | Mapping[str, Any], peer: str) -> PeerRun:
    """The scenario of a peer's JSON file (or, as BaCO takes it, its settings dict), read with
    ``peer``'s defaults: the drop-in knows whose file it is, so no key or variable is needed."""
    if isinstance(settings_file, Mapping):
        data, source = dict(settings_file), "<settings dict>"
    elif isinstance(settings_file, (str, os.PathLike)):
        source = os.fspath(settings_file)
        if not source.endswith(".json"):
            raise BayestuneError(f"{source}: the scenario must be a .json file, as the peer requires")
        try:
            with open(source, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            raise BayestuneError(f"{source}: no such scenario file") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BayestuneError(f"{source}: not a readable JSON scenario: {exc}") from None
    else:
        raise BayestuneError(f"the scenario must be a .json file name or a dict, not {type(settings_file).__name__}")
    if not isinstance(data, dict):
        raise BayestuneError(f"{source}: a scenario must be a JSON object, but got {type(data).__name__}")
    read_as = data if OVERRIDE_KEY in data else {**data, OVERRIDE_KEY: peer}
    return PeerRun(scenario_from_dict(read_as, source=source), data, source)


def run_peer(run: PeerRun, convention: Convention | None, *, seed: int | None = None) -> Optimizer:
    """The run the peer makes in its mode: ``default`` calls the black box through ``convention``,
    ``client-server`` speaks the protocol on stdin/stdout, ``exhaustive`` looks the table up."""
    if run.mode == "client-server":
        return serve(run.scenario, sys.stdin, sys.stdout, seed=seed)
    evaluate: Evaluate
    if run.mode == "exhaustive":
        table = make_evaluator(run.scenario)

        def evaluate(configs: list[dict[str, Any]]) -> list[list[tuple[dict[str, Any], Result]]]:
            return [[(c, table.evaluate(c))] for c in configs]

    elif convention is None:
        raise BayestuneError(f"{run.source}: a black box function is required in default mode")
    else:
        evaluate = convention
    optimizer = PeerSession(run.scenario, evaluate, seed=seed).run()
    _print_best(run, optimizer)
    return optimizer


def _print_best(run: PeerRun, optimizer: Optimizer) -> None:
    """The peer's closing lines on stdout: the best point (HyperMapper's ``print_best``, "auto"
    prints it here; BaCO's "Best point found") and the end line both peers write."""
    sys.stdout.write(best_point_lines(run.scenario, optimizer, client_server=False) + END_LINE + "\n")
