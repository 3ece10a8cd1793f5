"""What a HyperMapper 2.0 / BaCO file says about the black box's answers: the ``*_mode`` object
(who calls the black box, or the exhaustive table that answers) and ``feasible_output`` (the
validity flag's column and its values)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from bayestune.scenario.hypermapper.keys import KeyHandling, unknown_key_message
from bayestune.scenario.hypermapper.peers import Peer
from bayestune.scenario.hypermapper.schemas import FEASIBLE_KEYS, MODE_KEYS
from bayestune.scenario.records import BlackBoxSpec
from bayestune.space.inference import is_number
from bayestune.space.spec import SpecContext, show
from bayestune.storage.csv_io import FlagWords


def black_box(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> BlackBoxSpec | None:
    """The ``*_mode`` object: ``exhaustive`` makes its ``exhaustive_search_file`` the black box,
    a table looked up by parameter values, as HyperMapper's ``bo.py`` uses it (its path taken
    from the working directory, as the peer takes it); the other modes need none here."""
    for key in ("baco_mode", "hypermapper_mode"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            ctx.fail((key,), f'expected an object such as {{"mode": "default"}}, but got {show(value)}')
        for sub in value:
            if sub not in MODE_KEYS:
                ctx.fail((key, str(sub)), unknown_key_message(str(sub), MODE_KEYS, f"in {key}"))
        mode = value.get("mode", "default")
        if mode not in ("default", "client-server", "exhaustive"):
            ctx.fail((key, "mode"), f"must be one of ['default', 'client-server', 'exhaustive'], but got {show(mode)}")
        if mode != "exhaustive":
            handled.append(
                KeyHandling(
                    key,
                    "mapped",
                    "mode 'client-server': run `bayestune serve FILE`, which speaks the peer's protocol on stdin/stdout"
                    if mode == "client-server"
                    else "mode 'default': bayestune calls the black box itself",
                )
            )
            continue
        table = value.get("exhaustive_search_file")
        if not isinstance(table, str) or not table.strip():
            ctx.fail(
                (key, "exhaustive_search_file"),
                f"mode 'exhaustive' needs the CSV table of every configuration's outputs, but got {show(table)}",
            )
        path = os.path.abspath(os.path.expanduser(table))
        handled.append(
            KeyHandling(
                key,
                "mapped",
                f"mode 'exhaustive': the usual search, answered by the table "
                f"{path} looked up by parameter values (black box kind 'table')",
            )
        )
        return BlackBoxSpec("table", path)
    return None


def feasible_output(
    data: Mapping[str, Any], ctx: SpecContext, peer: Peer, handled: list[KeyHandling]
) -> tuple[str | None, FlagWords | None]:
    """The validity flag's column (None unless the predictor is enabled) and the peer's words for it."""
    fo = data.get("feasible_output")
    if fo is None:
        return None, None
    if not isinstance(fo, Mapping):
        ctx.fail(("feasible_output",), f"expected an object, but got {show(fo)}")
    for sub in fo:
        if sub not in FEASIBLE_KEYS:
            ctx.fail(("feasible_output", str(sub)), unknown_key_message(str(sub), FEASIBLE_KEYS, "in feasible_output"))
    enabled = fo.get("enable_feasible_predictor", False)
    if not isinstance(enabled, bool):
        ctx.fail(("feasible_output", "enable_feasible_predictor"), f"expected true or false, but got {show(enabled)}")
    true_value, false_value = str(fo.get("true_value", "true")), str(fo.get("false_value", "false"))
    if true_value == false_value:
        ctx.fail(("feasible_output", "false_value"), f"must differ from true_value, but both are {show(true_value)}")
    strict = peer.key == "hypermapper"
    flags = FlagWords(true_value, false_value, strict=strict, write_declared=strict)
    handled.append(
        KeyHandling(
            "feasible_output.true_value",
            "mapped",
            f"the peer's words: {true_value!r} is feasible, "
            + (f"{false_value!r} infeasible, another word an error" if strict else "anything else infeasible")
            + " (`bayestune serve`, the Python drop-in, resume); its sample CSV writes "
            + (f"{true_value!r}/{false_value!r}" if strict else "True/False")
            + "; bayestune's own evaluators read true/1/yes as feasible",
        )
    )
    threshold = fo.get("feasibility_threshold")
    if threshold is not None:
        if not (is_number(threshold) and 0 <= threshold <= 1):
            ctx.fail(
                ("feasible_output", "feasibility_threshold"), f"`0 <= value <= 1` must hold, but got {show(threshold)}"
            )
        handled.append(
            KeyHandling(
                "feasible_output.feasibility_threshold",
                "mapped",
                "strategy option feasibility.threshold: candidates whose P(feasible) is at most "
                "a draw from threshold x {0, 0.1, ..., 1} are ruled out",
            )
        )
    for sub in (
        "enable_feasible_predictor_grid_search_on_recall_and_precision",
        "feasible_predictor_grid_search_validation_file",
    ):
        if sub in fo:
            handled.append(KeyHandling(f"feasible_output.{sub}", "ignored", "a development aid of HyperMapper"))
    if not enabled:
        return None, flags
    name = fo.get("name", "Valid")
    if not isinstance(name, str) or not name:
        ctx.fail(("feasible_output", "name"), f"expected a non-empty string, but got {show(name)}")
    handled.append(
        KeyHandling(
            "feasible_output.enable_feasible_predictor",
            "mapped",
            f"feasible_output {name!r}; the feasibility classifier of 'bo' comes on",
        )
    )
    return name, flags
