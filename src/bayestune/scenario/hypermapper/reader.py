"""HyperMapper 2.0 / BaCO scenario JSON (``application_name``, ``optimization_objectives``,
``input_parameters``, ...), read unchanged: parameters, constraints (BaCO's permutation
variables translated into our grammar), design of experiment, budget, time limit, batches,
strategy and its options.

Every key of the two published schemas has a handling (:mod:`.keys`): an unknown key is an
error with a suggestion, a refused one an error naming the bayestune way, and what became of
each key is recorded in :attr:`Scenario.key_handling`. Whose file it is decides what absent
keys mean (:mod:`.peers`); the strategy follows that peer's defaults (:mod:`.strategy`). This
module reads the top level and puts the sections together: the space (:mod:`.inputs`), the
answers (:mod:`.outputs`), the design and budget (:mod:`.budget`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bayestune.exceptions import BayestuneError, ScenarioError
from bayestune.measurement_spec import MeasurementSpec
from bayestune.scenario._common import parse_objectives
from bayestune.scenario.hypermapper.budget import read_budget
from bayestune.scenario.hypermapper.inputs import read_space
from bayestune.scenario.hypermapper.keys import (
    EXACT_VALUES,
    MEASUREMENT_KEY,
    PEER_DEFAULTS,
    TOP_LEVEL,
    KeyHandling,
    is_default,
    unknown_key_message,
)
from bayestune.scenario.hypermapper.outputs import black_box, feasible_output
from bayestune.scenario.hypermapper.peers import OVERRIDE_KEY, Peer, detect_peer, peer_samples
from bayestune.scenario.hypermapper.strategy import describe, peer_options, repetitions
from bayestune.scenario.records import Scenario
from bayestune.space.spec import SpecContext, show

logger = logging.getLogger(__name__)

#: Top-level keys that mark the format.
HM_MARKERS = ("application_name", "optimization_objectives", "input_parameters")


def _review_top_level(data: Mapping[str, Any], ctx: SpecContext, peer: Peer, handled: list[KeyHandling]) -> None:
    """Reject unknown keys with a suggestion, refuse keys whose effect we cannot reproduce, warn
    about the peer's internals set to other than their defaults, and record what became of each."""
    for key, value in data.items():
        key = str(key)
        if key not in TOP_LEVEL:
            ctx.fail((key,), unknown_key_message(key, TOP_LEVEL, "at the top level"))
        handling, detail, default = TOP_LEVEL[key]
        default = PEER_DEFAULTS.get(key, {}).get(peer.key, default)
        if key in ("baco_mode", "hypermapper_mode"):
            continue  # read by outputs.black_box
        if key in EXACT_VALUES and is_default(value, EXACT_VALUES[key][0]):
            handled.append(KeyHandling(key, "mapped", EXACT_VALUES[key][1]))
            continue
        if handling in ("approximated", "refused") and is_default(value, default):
            handled.append(KeyHandling(key, "ignored", f"the peer's default {show(value)}"))
            continue
        if handling == "refused":
            ctx.fail((key,), f"{show(value)} is not supported: {detail}")
        if handling == "approximated":
            logger.warning("%s: %s = %s has no bayestune equivalent: %s", ctx.source, key, show(value), detail)
        handled.append(KeyHandling(key, handling, detail))


def _exhaustive_budget(data: Mapping[str, Any], ctx: SpecContext, space: Any, handled: list[KeyHandling]) -> int:
    """BaCO's ``optimization_method: exhaustive``: every feasible configuration, once."""
    countable = space.count_feasible()
    if countable is None:
        ctx.fail(("optimization_method",), "'exhaustive' needs a countable space, but it has real parameters")
    handled.append(
        KeyHandling(
            "optimization_method",
            "mapped",
            f"'exhaustive': every one of the {countable} feasible configurations, in random order (budget)",
        )
    )
    return int(countable)


def _measurement(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> MeasurementSpec:
    """One black-box run per configuration, no racing, no confirmation, as both peers measure;
    bayestune's own key :data:`MEASUREMENT_KEY` (a native ``measurement`` section, ``{}`` for its
    defaults) asks for bayestune's measurement policy instead."""
    section = data.get(MEASUREMENT_KEY)
    if section is None:
        handled.append(
            KeyHandling(
                MEASUREMENT_KEY,
                "mapped",
                "absent: one black-box run per configuration, as the peers run it "
                "(no racing, no confirmation; bayestune_measurement: {} for bayestune's)",
            )
        )
        return MeasurementSpec(race=False, remeasure_top=0, baseline=None)
    if not isinstance(section, Mapping):
        ctx.fail((MEASUREMENT_KEY,), f"expected a measurement section (an object), but got {show(section)}")
    try:
        spec = MeasurementSpec.from_dict(section)
    except BayestuneError as exc:
        raise ctx.error((MEASUREMENT_KEY,), str(exc)) from None
    handled.append(KeyHandling(MEASUREMENT_KEY, "mapped", "bayestune's measurement policy, as the section says"))
    return spec


def parse_hypermapper(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    """The :class:`Scenario` of a HyperMapper 2.0 / BaCO mapping, with the defaults of its peer."""
    handled: list[KeyHandling] = []
    peer, why = detect_peer(data, ctx)
    _review_top_level(data, ctx, peer, handled)
    blackbox = black_box(data, ctx, handled)
    name = data.get("application_name", "application")
    if not isinstance(name, str) or not name.strip():
        ctx.fail(("application_name",), f"expected a non-empty string, but got {show(name)}")
    space, inputs = read_space(data, ctx, peer, handled)
    objs = data.get("optimization_objectives")
    if objs is None:
        ctx.fail((), "missing required key 'optimization_objectives'")
    if not isinstance(objs, list) or not objs or not all(isinstance(o, str) and o for o in objs):
        ctx.fail(("optimization_objectives",), f"expected a non-empty list of names, but got {show(objs)}")
    objectives = parse_objectives(ctx, objs, ("optimization_objectives",), space)
    feasible, flags = feasible_output(data, ctx, peer, handled)
    plan = read_budget(data, ctx, space, inputs, peer, handled)
    repetitions(data, ctx, handled)
    strategy, options = peer_options(
        data,
        ctx,
        peer,
        n_objectives=len(objectives),
        n_doe=plan.design.size,
        has_prior=space.has_prior,
        handled=handled,
    )
    handled.insert(0, KeyHandling(OVERRIDE_KEY, "read as", describe(peer, why, strategy, options)))
    budget = plan.budget
    if data.get("optimization_method") == "exhaustive":
        budget = _exhaustive_budget(data, ctx, space, handled)
    samples = peer_samples(
        data,
        ctx,
        peer,
        parameter_names=list(space.names),
        objectives=list(objs),
        feasible=feasible,
        flags=flags,
        handled=handled,
    )
    measurement = _measurement(data, ctx, handled)
    last = {(r.key, r.handling == "read as"): i for i, r in enumerate(handled)}  # a key read twice: its last word
    handled = [r for i, r in enumerate(handled) if last[r.key, r.handling == "read as"] == i]
    try:
        return Scenario(
            name=name,
            space=space,
            objectives=objectives,
            budget=budget,
            design=plan.design,
            strategy=strategy,
            strategy_options=options,
            feasible_output=feasible,
            source=ctx.source,
            time_limit=plan.time_limit,
            batch=plan.per_iteration if plan.per_iteration > 1 else None,
            key_handling=tuple(handled),
            peer_samples=samples,
            blackbox=blackbox,
            measurement=measurement,
        )
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None
