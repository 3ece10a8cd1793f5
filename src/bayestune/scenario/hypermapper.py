"""HyperMapper 2.0 / BaCO scenario JSON (``application_name``, ``optimization_objectives``,
``input_parameters``, ...), read unchanged: parameters, constraints (BaCO's permutation
variables translated into our grammar), design of experiment, budget, time limit, batches,
strategy and its options.

Every key of the two published schemas has a handling (:mod:`.hypermapper_keys`): an unknown
key is an error with a suggestion, a refused one an error naming the bayestune way, and what
became of each key is recorded in :attr:`Scenario.key_handling`. Whose file it is decides what
absent keys mean (:mod:`.hypermapper_peers`); the strategy follows that peer's defaults
(:mod:`.hypermapper_strategy`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from bayestune.exceptions import ScenarioError
from bayestune.scenario._common import parse_objectives
from bayestune.scenario.hypermapper_keys import TOP_LEVEL, KeyHandling, is_default, unknown_key_message
from bayestune.scenario.hypermapper_parameters import hm_parameter, translate_permutation_names
from bayestune.scenario.hypermapper_peers import OVERRIDE_KEY, detect_peer, peer_samples
from bayestune.scenario.hypermapper_schemas import DOE_KEYS, FEASIBLE_KEYS, MODE_KEYS
from bayestune.scenario.hypermapper_strategy import describe, peer_options, repetitions
from bayestune.scenario.records import BlackBoxSpec, DesignSpec, Scenario
from bayestune.space.inference import is_integral, is_number
from bayestune.space.parameters import Permutation
from bayestune.space.spec import SpecContext, build_space, fmt_path, show

logger = logging.getLogger(__name__)

#: Top-level keys that mark the format.
HM_MARKERS = ("application_name", "optimization_objectives", "input_parameters")
#: HyperMapper/BaCO ``doe_type`` -> our initial-design method.
HM_DOE_METHODS = {
    "random sampling": "cot",  # uniform over the feasible set (BaCO samples the Chain-of-Trees)
    "embedding random sampling": "cot",
    "standard latin hypercube": "lhs",
    "k latin hypercube": "lhs",
    "grid_search": "maximin",  # no grid design: the closest space-filling one
}
#: Values of ``feasible_output.true_value`` our evaluators read as "feasible" (case-insensitive).
_TRUE_TEXTS = ("true", "1", "yes", "y")


def _review_top_level(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> None:
    """Reject unknown keys with a suggestion, refuse keys whose effect we cannot reproduce, warn
    about the peer's internals set to other than their defaults, and record what became of each."""
    for key, value in data.items():
        key = str(key)
        if key not in TOP_LEVEL:
            ctx.fail((key,), unknown_key_message(key, TOP_LEVEL, "at the top level"))
        handling, detail, default = TOP_LEVEL[key]
        if key in ("baco_mode", "hypermapper_mode"):
            continue  # read by _black_box
        if handling in ("approximated", "refused") and is_default(value, default):
            handled.append(KeyHandling(key, "ignored", f"the peer's default {show(value)}"))
            continue
        if handling == "refused":
            ctx.fail((key,), f"{show(value)} is not supported: {detail}")
        if handling == "approximated":
            logger.warning("%s: %s = %s has no bayestune equivalent: %s", ctx.source, key, show(value), detail)
        handled.append(KeyHandling(key, handling, detail))


def _black_box(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> BlackBoxSpec | None:
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


def _feasible_output(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> str | None:
    fo = data.get("feasible_output")
    if fo is None:
        return None
    if not isinstance(fo, Mapping):
        ctx.fail(("feasible_output",), f"expected an object, but got {show(fo)}")
    for sub in fo:
        if sub not in FEASIBLE_KEYS:
            ctx.fail(("feasible_output", str(sub)), unknown_key_message(str(sub), FEASIBLE_KEYS, "in feasible_output"))
    enabled = fo.get("enable_feasible_predictor", False)
    if not isinstance(enabled, bool):
        ctx.fail(("feasible_output", "enable_feasible_predictor"), f"expected true or false, but got {show(enabled)}")
    true_value, false_value = fo.get("true_value", "true"), fo.get("false_value", "false")
    if str(true_value).strip().lower() not in _TRUE_TEXTS:
        ctx.fail(
            ("feasible_output", "true_value"),
            f"bayestune reads a validity flag as feasible when it is one of {list(_TRUE_TEXTS)} "
            f"(any case), but got {show(true_value)}; have the black box print one of those",
        )
    if str(false_value).strip().lower() in _TRUE_TEXTS:
        ctx.fail(("feasible_output", "false_value"), f"{show(false_value)} reads as feasible in bayestune")
    handled.append(
        KeyHandling(
            "feasible_output.true_value",
            "mapped",
            f"a flag in {list(_TRUE_TEXTS)} (any case) is feasible, anything else infeasible",
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
        return None
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
    return name


def parse_hypermapper(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    handled: list[KeyHandling] = []
    _review_top_level(data, ctx, handled)
    blackbox = _black_box(data, ctx, handled)
    peer, why = detect_peer(data, ctx)
    name = data.get("application_name", "application")
    if not isinstance(name, str) or not name.strip():
        ctx.fail(("application_name",), f"expected a non-empty string, but got {show(name)}")

    # ---- parameters and constraints
    inputs = data.get("input_parameters")
    if inputs is None:
        ctx.fail((), "missing required key 'input_parameters'")
    if not isinstance(inputs, Mapping) or not inputs:
        ctx.fail(
            ("input_parameters",), f"expected an object mapping parameter names to parameters, but got {show(inputs)}"
        )
    params, paths, constraints = [], [], []
    objs = data.get("optimization_objectives")
    several = isinstance(objs, list) and len(objs) > 1
    priors = [
        str(k) for k, spec in inputs.items() if isinstance(spec, Mapping) and spec.get("prior", "uniform") != "uniform"
    ]
    if peer.key == "hypermapper" and several and priors:  # HyperMapper's bo.py: "priors will be uniform"
        logger.warning(
            "%s: HyperMapper 2.0 runs several objectives with uniform priors; the priors of %s are not used",
            ctx.source,
            priors,
        )
        handled.append(
            KeyHandling(
                "input_parameters.prior",
                "ignored",
                f"several objectives: HyperMapper 2.0 makes every prior uniform ({', '.join(priors)})",
            )
        )
        inputs = {
            k: ({f: v for f, v in spec.items() if f != "prior"} if str(k) in priors else spec)
            for k, spec in inputs.items()
        }
    for key, spec in inputs.items():
        param, cons = hm_parameter(ctx, str(key), spec, peer.key)
        params.append(param)
        paths.append(("input_parameters", str(key)))
        constraints.extend(cons)
    top = data.get("constraints", [])
    if not isinstance(top, list):
        ctx.fail(("constraints",), f"expected a list of expression strings, but got {show(top)}")
    for j, text in enumerate(top):
        if not isinstance(text, str) or not text.strip():
            ctx.fail(("constraints", j), f"a constraint must be a non-empty expression string, but got {show(text)}")
        constraints.append((("constraints", j), text))
    perms = {p.name: p.n for p in params if isinstance(p, Permutation)}
    names = {p.name for p in params}
    translated, seen = [], set()
    for path, text in constraints:
        new = translate_permutation_names(text, perms, names)
        if new != text:
            logger.debug("%s: %s: constraint %r read as %r", ctx.source, fmt_path(path), text, new)
        if new not in seen:  # BaCO repeats a constraint under each parameter it involves
            seen.add(new)
            translated.append((path, new))
    space = build_space(ctx, params, translated, ("input_parameters",))

    # ---- objectives
    if objs is None:
        ctx.fail((), "missing required key 'optimization_objectives'")
    if not isinstance(objs, list) or not objs or not all(isinstance(o, str) and o for o in objs):
        ctx.fail(("optimization_objectives",), f"expected a non-empty list of names, but got {show(objs)}")
    objectives = parse_objectives(ctx, objs, ("optimization_objectives",), space)

    # ---- feasibility output
    feasible = _feasible_output(data, ctx, handled)

    # ---- initial design and budget
    doe = data.get("design_of_experiment", {})
    if not isinstance(doe, Mapping):
        ctx.fail(("design_of_experiment",), f"expected an object, but got {show(doe)}")
    for sub in doe:
        if sub not in DOE_KEYS:
            ctx.fail(
                ("design_of_experiment", str(sub)), unknown_key_message(str(sub), DOE_KEYS, "in design_of_experiment")
            )
    if doe.get("allow_repetitions", False) is not False:
        logger.warning(
            "%s: design_of_experiment.allow_repetitions has no bayestune equivalent: the design "
            "never repeats a configuration",
            ctx.source,
        )
        handled.append(
            KeyHandling(
                "design_of_experiment.allow_repetitions",
                "approximated",
                "the initial design never repeats a configuration",
            )
        )
    doe_type = doe.get("doe_type", "random sampling")
    if doe_type not in HM_DOE_METHODS:
        ctx.fail(
            ("design_of_experiment", "doe_type"), f"must be one of {sorted(HM_DOE_METHODS)}, but got {show(doe_type)}"
        )
    n_doe = doe.get("number_of_samples", 10)
    if not (is_integral(n_doe) and n_doe >= 0):
        ctx.fail(
            ("design_of_experiment", "number_of_samples"), f"`value >= 0` (an integer) must hold, but got {show(n_doe)}"
        )
    method = HM_DOE_METHODS[doe_type]
    handled.append(
        KeyHandling(
            "design_of_experiment.doe_type",
            "mapped",
            f"design method {method!r}"
            + (" (uniform; the priors weight the acquisition, piBO, as in BaCO)" if space.has_prior else ""),
        )
    )
    iterations = data.get("optimization_iterations", 50)
    if not (is_integral(iterations) and iterations >= 0):
        ctx.fail(("optimization_iterations",), f"`value >= 0` (an integer) must hold, but got {show(iterations)}")
    per_iter = data.get("evaluations_per_optimization_iteration", 1)
    if not (is_integral(per_iter) and per_iter >= 1):
        ctx.fail(
            ("evaluations_per_optimization_iteration",),
            f"`value >= 1` (an integer) must hold, but got {show(per_iter)}",
        )
    budget = int(n_doe) + int(iterations) * int(per_iter)
    if budget < 1:
        ctx.fail(
            ("optimization_iterations",),
            "the budget (number_of_samples + optimization_iterations × "
            "evaluations_per_optimization_iteration) must be at least 1, but got 0",
        )
    time_budget = data.get("time_budget", -1)
    if not (is_number(time_budget) and (time_budget == -1 or time_budget > 0)):
        ctx.fail(("time_budget",), f"minutes > 0, or -1 for no limit, must hold, but got {show(time_budget)}")
    time_limit = None if time_budget == -1 else float(time_budget) * 60.0
    repetitions(data, ctx, handled)
    include_default = all(isinstance(s, Mapping) and s.get("parameter_default") is not None for s in inputs.values())
    design = DesignSpec(method=method, size=int(n_doe), include_default=include_default)

    # ---- strategy, with the peer's defaults
    strategy, options = peer_options(
        data, ctx, peer, n_objectives=len(objectives), n_doe=int(n_doe), has_prior=space.has_prior, handled=handled
    )
    handled.insert(0, KeyHandling(OVERRIDE_KEY, "read as", describe(peer, why, strategy, options)))
    if data.get("optimization_method") == "exhaustive":  # BaCO: every feasible configuration, once
        countable = space.count_feasible()
        if countable is None:
            ctx.fail(("optimization_method",), "'exhaustive' needs a countable space, but it has real parameters")
        budget = countable
        handled.append(
            KeyHandling(
                "optimization_method",
                "mapped",
                f"'exhaustive': every one of the {budget} feasible configurations, in random order (budget)",
            )
        )
    samples = peer_samples(
        data,
        ctx,
        peer,
        parameter_names=[p.name for p in params],
        objectives=list(objs),
        feasible=feasible,
        handled=handled,
    )
    last = {(r.key, r.handling == "read as"): i for i, r in enumerate(handled)}  # a key read twice: its last word
    handled = [r for i, r in enumerate(handled) if last[r.key, r.handling == "read as"] == i]
    try:
        return Scenario(
            name=name,
            space=space,
            objectives=objectives,
            budget=budget,
            design=design,
            strategy=strategy,
            strategy_options=options,
            feasible_output=feasible,
            source=ctx.source,
            time_limit=time_limit,
            batch=int(per_iter) if per_iter > 1 else None,
            key_handling=tuple(handled),
            peer_samples=samples,
            blackbox=blackbox,
        )
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None
