"""HyperMapper 2.0 / BaCO scenario JSON (``application_name``, ``optimization_objectives``,
``input_parameters``, ...), read unchanged: parameters, constraints (BaCO's permutation
variables translated into our grammar), design of experiment, budget, time limit, batches,
strategy and its options.

Every key of the two published schemas has a handling (:mod:`.hypermapper_keys`): an unknown
key is an error with a suggestion, a refused one an error naming the bayestune way, and what
became of each key is recorded in :attr:`Scenario.key_handling`. A file is read as
HyperMapper's or BaCO's from the keys only one of them knows (:func:`_flavour`): the two differ
in the default model (random forest / GP), epsilon-greedy step (0.1 / 0) and forest settings."""

from __future__ import annotations

import io
import logging
import re
import tokenize
from collections.abc import Mapping
from typing import Any

from bayestune.exceptions import ScenarioError
from bayestune.measurement_spec import MeasurementPolicy, MeasurementSpec
from bayestune.scenario._common import parse_objectives
from bayestune.scenario.hypermapper_keys import (
    BACO_KEYS, BACO_PARAMETER_KEYS, DOE_KEYS, FEASIBLE_KEYS, HYPERMAPPER_KEYS, MODE_KEYS, MODEL_KEYS,
    PARAMETER_KEYS, TOP_LEVEL, KeyHandling, did_you_mean, is_default, unknown_key_message,
)
from bayestune.scenario.hypermapper_priors import hm_prior
from bayestune.scenario.records import DEFAULT_MULTI_OBJECTIVE_STRATEGY, DesignSpec, Scenario
from bayestune.space.inference import is_integral, is_number
from bayestune.space.parameters import PERMUTATION_METRICS, Parameter, Permutation
from bayestune.space.spec import JsonPath, SpecContext, build_space, fmt_path, make_parameter, show

logger = logging.getLogger(__name__)

#: Top-level keys that mark the format.
HM_MARKERS = ("application_name", "optimization_objectives", "input_parameters")
HM_PARAMETER_TYPES = ("real", "integer", "ordinal", "categorical", "permutation")
#: HyperMapper/BaCO ``doe_type`` -> our initial-design method.
HM_DOE_METHODS = {
    "random sampling": "cot",            # uniform over the feasible set (BaCO samples the Chain-of-Trees)
    "embedding random sampling": "cot",
    "standard latin hypercube": "lhs",
    "k latin hypercube": "lhs",
    "grid_search": "maximin",            # no grid design: the closest space-filling one
}
#: HyperMapper/BaCO ``optimization_method`` -> our strategy name.
HM_STRATEGIES = {
    "bayesian_optimization": "bo",
    "prior_guided_optimization": "bo",
    "random_scalarizations": "bo",
    "local_search": "local",
    "evolutionary_optimization": "genetic",
    "exhaustive": "cot_random",          # random order without repeats: every configuration, given the budget
}
#: HyperMapper/BaCO ``acquisition_function`` -> the ``acquisition`` option of ``bo`` (EI is its default).
HM_ACQUISITIONS = {"EI": "ei", "EI_BOPRO": "ei", "EI_PIBO": "ei", "UCB": "lcb"}
#: BaCO's wrappers of other tuners: run with our BO instead (logged).
_HM_FOREIGN_METHODS = ("opentuner", "ytopt", "ytopt_ccs")
#: Random-forest keys of ``models`` -> options of ``bo``; each peer's defaults and ours.
_RF_OPTIONS = {"number_of_trees": "rf.trees", "max_features": "rf.max_features", "bootstrap": "rf.bootstrap",
               "min_samples_split": "rf.min_samples_split"}
_RF_DEFAULTS = {
    "baco": {"number_of_trees": 200, "max_features": 0.5, "bootstrap": True, "min_samples_split": 2},
    "hypermapper": {"number_of_trees": 10, "max_features": 0.5, "bootstrap": False, "min_samples_split": 5},
}
_RF_BAYESTUNE = {"number_of_trees": 100, "max_features": 0.5, "bootstrap": True, "min_samples_split": 2}
#: Numeric top-level keys read onto options of the model-based strategies: key, option, check.
_BO_NUMERIC_OPTIONS = (
    ("exploration_augmentation", "xi", lambda v: is_number(v) and v >= 0),
    ("model_weight", "prior_beta", lambda v: is_number(v) and v >= 0),
    ("model_posterior_weight", "prior_beta", lambda v: is_number(v) and v >= 0),
    ("local_search_starting_points", "acquisition_search.n_starts", lambda v: is_integral(v) and v >= 1),
    ("local_search_random_points", "acquisition_search.n_samples", lambda v: is_integral(v) and v >= 1),
)
_CHECK_TEXT = {"xi": "a number >= 0", "prior_beta": "a number >= 0", "acquisition_search.n_starts": "an integer >= 1",
               "acquisition_search.n_samples": "an integer >= 1"}
def _set(options: dict[str, Any], dotted: str, value: Any) -> None:
    """``options["a"]["b"] = value`` for the option ``"a.b"`` of a strategy's option group."""
    *groups, leaf = dotted.split(".")
    for group in groups:
        options = options.setdefault(group, {})
    options[leaf] = value


#: BaCO's permutation ``parametrization`` -> our metric (``naive``, a one-hot over all n!
#: permutations, has no distance structure; Hamming is the nearest we have).
HM_PERMUTATION_METRICS = {**{m: m for m in PERMUTATION_METRICS}, "naive": "hamming"}
#: Values of ``feasible_output.true_value`` our evaluators read as "feasible" (case-insensitive).
_TRUE_TEXTS = ("true", "1", "yes", "y")


def _hm_parameter(ctx: SpecContext, name: str, spec: Any) -> tuple[Parameter, list[tuple[JsonPath, str]]]:
    path: JsonPath = ("input_parameters", name)
    if not isinstance(spec, Mapping):
        ctx.fail(path, f"a parameter must be an object, but got {show(spec)}")
    for key in spec:
        if key not in PARAMETER_KEYS:
            ctx.fail(path + (str(key),), unknown_key_message(str(key), PARAMETER_KEYS, "in a parameter"))
    if "parameter_type" not in spec:
        ctx.fail(path, "missing required key 'parameter_type'")
    kind = spec["parameter_type"]
    if kind not in HM_PARAMETER_TYPES:
        ctx.fail(path + ("parameter_type",), f"unknown parameter_type {show(kind)}; allowed: {list(HM_PARAMETER_TYPES)}")
    if "values" not in spec:
        ctx.fail(path, "missing required key 'values'")
    values = spec["values"]
    vpath = path + ("values",)
    transform = spec.get("transform", "none")
    if transform not in ("none", "log"):
        ctx.fail(path + ("transform",), f"must be one of ['none', 'log'], but got {show(transform)}")
    log = transform == "log"
    if log and kind in ("categorical", "permutation"):
        ctx.fail(path + ("transform",), f"a log transform applies to real, integer and ordinal parameters, not {kind}")
    default = spec.get("parameter_default")
    metric = "spearman"
    if kind == "permutation":
        if is_integral(values):
            values = [values]
        if not (isinstance(values, list) and len(values) == 1 and is_integral(values[0]) and values[0] >= 1):
            ctx.fail(vpath, f"a permutation's values are [n] (the number of elements, n >= 1), but got {show(values)}")
        domain: Any = int(values[0])
        param_metric = spec.get("parametrization", "spearman")
        if param_metric not in HM_PERMUTATION_METRICS:
            ctx.fail(path + ("parametrization",),
                     f"must be one of {sorted(HM_PERMUTATION_METRICS)}, but got {show(param_metric)}")
        metric = HM_PERMUTATION_METRICS[param_metric]
        if param_metric == "naive":
            logger.info("%s: %s: permutation parametrization 'naive' is read as 'hamming'", ctx.source, fmt_path(path))
    else:
        if not isinstance(values, list) or not values:
            ctx.fail(vpath, f"expected a non-empty list, but got {show(values)}")
        if kind in ("real", "integer"):
            if len(values) != 2 or not all(is_number(v) for v in values):
                ctx.fail(vpath, f"a {kind} parameter's values are [min, max], but got {show(values)}")
            if kind == "integer" and not all(is_integral(v) for v in values):
                ctx.fail(vpath, f"an integer parameter's values are two integers [min, max], but got {show(values)}")
            if kind == "integer" and values[0] == values[1]:
                kind, values = "ordinal", [int(values[0])]  # a constant
            elif not values[0] < values[1]:
                ctx.fail(vpath, f"`min < max` must hold, but got {show(values)}")
            if kind == "integer":
                values = [int(values[0]), int(values[1])]
        if kind == "ordinal":
            if not all(is_number(v) for v in values):
                ctx.fail(vpath, f"ordinal values must be numbers, but got {show(values)}")
            if len(set(values)) != len(values):
                ctx.fail(vpath, f"ordinal values must be distinct, but got {show(values)}")
            order = sorted(range(len(values)), key=lambda i: values[i])
            if order != list(range(len(values))):
                if isinstance(spec.get("prior"), list):
                    logger.warning("%s: %s: the ordinal's values %s are not sorted: its prior list pairs with "
                                   "the sorted values %s, as in BaCO", ctx.source, fmt_path(vpath), values,
                                   sorted(values))
                values = [values[i] for i in order]
        domain = values
    prior = hm_prior(ctx, path, spec, kind, domain)
    # BaCO's transform: log only log-scales the model's input; values are still drawn uniformly.
    sampling = "uniform" if kind in ("real", "integer") else None
    param = make_parameter(ctx, path, kind, name, domain, log=log, metric=metric, prior=prior, default=default,
                            sampling=sampling, domain_key="values", default_key="parameter_default")
    constraints = []
    raw_cons = spec.get("constraints", [])
    if not isinstance(raw_cons, list):
        ctx.fail(path + ("constraints",), f"expected a list of expression strings, but got {show(raw_cons)}")
    for j, text in enumerate(raw_cons):
        if not isinstance(text, str) or not text.strip():
            ctx.fail(path + ("constraints", j), f"a constraint must be a non-empty expression string, but got {show(text)}")
        constraints.append((path + ("constraints", j), text))
    return param, constraints


_PERMUTATION_ENTRY = re.compile(r"(?P<base>[A-Za-z_][A-Za-z0-9_]*?)_(?P<at>i?)(?P<k>[0-9]+)")


def _translate_permutation_names(text: str, permutations: Mapping[str, int], names: set[str]) -> str:
    """Rewrite BaCO's permutation variables in a constraint into our grammar: ``p_3`` (entry 3
    of permutation ``p``, i.e. the position of element 3) -> ``p[3]``; ``p_i3`` (the element at
    position 3) -> ``at(p, 3)``. The rest of the text is kept: numexpr's ``&``, ``|`` and ``~``
    between conditions mean the same in our grammar."""
    if not permutations:
        return text
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text  # let the constraint parser report it
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    out, last = [], 0
    for tok in tokens:
        if tok.type != tokenize.NAME or tok.string in names:
            continue
        m = _PERMUTATION_ENTRY.fullmatch(tok.string)
        if not (m and m["base"] in permutations and int(m["k"]) < permutations[m["base"]]):
            continue
        start = line_starts[tok.start[0] - 1] + tok.start[1]
        end = line_starts[tok.end[0] - 1] + tok.end[1]
        out.append(text[last:start])
        out.append(f"at({m['base']}, {int(m['k'])})" if m["at"] else f"{m['base']}[{int(m['k'])}]")
        last = end
    out.append(text[last:])
    return "".join(out)


def _review_top_level(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> None:
    """Reject unknown keys with a suggestion, refuse keys whose effect we cannot reproduce, warn
    about the peer's internals set to other than their defaults, and record what became of each."""
    for key, value in data.items():
        key = str(key)
        if key not in TOP_LEVEL:
            ctx.fail((key,), unknown_key_message(key, TOP_LEVEL, "at the top level"))
        handling, detail, default = TOP_LEVEL[key]
        if key in ("baco_mode", "hypermapper_mode"):
            if not isinstance(value, Mapping):
                ctx.fail((key,), f"expected an object such as {{\"mode\": \"default\"}}, but got {show(value)}")
            for sub in value:
                if sub not in MODE_KEYS:
                    ctx.fail((key, str(sub)), unknown_key_message(str(sub), MODE_KEYS, f"in {key}"))
            mode = value.get("mode", "default")
            if mode not in ("default", "client-server", "exhaustive"):
                ctx.fail((key, "mode"), f"must be one of ['default', 'client-server', 'exhaustive'], but got {show(mode)}")
            if mode != "default":
                ctx.fail((key, "mode"), f"mode {mode!r} is not read from a scenario file: {detail}")
            handled.append(KeyHandling(key, "ignored", "mode 'default': bayestune calls the black box itself"))
            continue
        if handling in ("approximated", "refused") and is_default(value, default):
            handled.append(KeyHandling(key, "ignored", f"the peer's default {show(value)}"))
            continue
        if handling == "refused":
            ctx.fail((key,), f"{show(value)} is not supported: {detail}")
        if handling == "approximated":
            logger.warning("%s: %s = %s has no bayestune equivalent: %s", ctx.source, key, show(value), detail)
        handled.append(KeyHandling(key, handling, detail))


def _flavour(data: Mapping[str, Any]) -> str:
    """``"hypermapper"`` or ``"baco"``: which tool a file is written for, from the keys only one of
    them knows; a file with only shared keys is read as BaCO's."""
    keys = {str(k) for k in data}
    params = data.get("input_parameters")
    param_keys = set()
    if isinstance(params, Mapping):
        for spec in params.values():
            if isinstance(spec, Mapping):
                param_keys |= set(spec)
                if spec.get("parameter_type") == "permutation":
                    return "baco"
    if keys - HYPERMAPPER_KEYS or param_keys & BACO_PARAMETER_KEYS:
        return "baco"
    if keys - BACO_KEYS:
        return "hypermapper"
    return "baco"


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
        ctx.fail(("feasible_output", "true_value"),
                 f"bayestune reads a validity flag as feasible when it is one of {list(_TRUE_TEXTS)} "
                 f"(any case), but got {show(true_value)}; have the black box print one of those")
    if str(false_value).strip().lower() in _TRUE_TEXTS:
        ctx.fail(("feasible_output", "false_value"), f"{show(false_value)} reads as feasible in bayestune")
    handled.append(KeyHandling("feasible_output.true_value", "mapped",
                           f"a flag in {list(_TRUE_TEXTS)} (any case) is feasible, anything else infeasible"))
    threshold = fo.get("feasibility_threshold")
    if threshold is not None:
        if not (is_number(threshold) and 0 <= threshold <= 1):
            ctx.fail(("feasible_output", "feasibility_threshold"), f"`0 <= value <= 1` must hold, but got {show(threshold)}")
        handled.append(KeyHandling("feasible_output.feasibility_threshold", "mapped",
                               "strategy option feasibility.threshold: candidates whose P(feasible) is at most "
                               "a draw from threshold x {0, 0.1, ..., 1} are ruled out"))
    for sub in ("enable_feasible_predictor_grid_search_on_recall_and_precision",
                "feasible_predictor_grid_search_validation_file"):
        if sub in fo:
            handled.append(KeyHandling(f"feasible_output.{sub}", "ignored", "a development aid of HyperMapper"))
    if not enabled:
        return None
    name = fo.get("name", "Valid")
    if not isinstance(name, str) or not name:
        ctx.fail(("feasible_output", "name"), f"expected a non-empty string, but got {show(name)}")
    handled.append(KeyHandling("feasible_output.enable_feasible_predictor", "mapped",
                           f"feasible_output {name!r}; the feasibility classifier of 'bo' comes on"))
    return name


def parse_hypermapper(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    handled: list[KeyHandling] = []
    _review_top_level(data, ctx, handled)
    flavour = _flavour(data)
    name = data.get("application_name", "application")
    if not isinstance(name, str) or not name.strip():
        ctx.fail(("application_name",), f"expected a non-empty string, but got {show(name)}")

    # ---- parameters and constraints
    inputs = data.get("input_parameters")
    if inputs is None:
        ctx.fail((), "missing required key 'input_parameters'")
    if not isinstance(inputs, Mapping) or not inputs:
        ctx.fail(("input_parameters",), f"expected an object mapping parameter names to parameters, but got {show(inputs)}")
    params, paths, constraints = [], [], []
    for key, spec in inputs.items():
        param, cons = _hm_parameter(ctx, str(key), spec)
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
        new = _translate_permutation_names(text, perms, names)
        if new != text:
            logger.debug("%s: %s: constraint %r read as %r", ctx.source, fmt_path(path), text, new)
        if new not in seen:  # BaCO repeats a constraint under each parameter it involves
            seen.add(new)
            translated.append((path, new))
    space = build_space(ctx, params, translated, ("input_parameters",))

    # ---- objectives
    objs = data.get("optimization_objectives")
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
            ctx.fail(("design_of_experiment", str(sub)),
                     unknown_key_message(str(sub), DOE_KEYS, "in design_of_experiment"))
    if doe.get("allow_repetitions", False) is not False:
        logger.warning("%s: design_of_experiment.allow_repetitions has no bayestune equivalent: the design "
                       "never repeats a configuration", ctx.source)
        handled.append(KeyHandling("design_of_experiment.allow_repetitions", "approximated",
                               "the initial design never repeats a configuration"))
    doe_type = doe.get("doe_type", "random sampling")
    if doe_type not in HM_DOE_METHODS:
        ctx.fail(("design_of_experiment", "doe_type"), f"must be one of {sorted(HM_DOE_METHODS)}, but got {show(doe_type)}")
    n_doe = doe.get("number_of_samples", 10)
    if not (is_integral(n_doe) and n_doe >= 0):
        ctx.fail(("design_of_experiment", "number_of_samples"), f"`value >= 0` (an integer) must hold, but got {show(n_doe)}")
    method = HM_DOE_METHODS[doe_type]
    handled.append(KeyHandling("design_of_experiment.doe_type", "mapped", f"design method {method!r}"
                           + (" (uniform; the priors weight the acquisition, piBO, as in BaCO)"
                              if space.has_prior else "")))
    iterations = data.get("optimization_iterations", 50)
    if not (is_integral(iterations) and iterations >= 0):
        ctx.fail(("optimization_iterations",), f"`value >= 0` (an integer) must hold, but got {show(iterations)}")
    per_iter = data.get("evaluations_per_optimization_iteration", 1)
    if not (is_integral(per_iter) and per_iter >= 1):
        ctx.fail(("evaluations_per_optimization_iteration",), f"`value >= 1` (an integer) must hold, but got {show(per_iter)}")
    budget = int(n_doe) + int(iterations) * int(per_iter)
    if budget < 1:
        ctx.fail(("optimization_iterations",), "the budget (number_of_samples + optimization_iterations × "
                                               "evaluations_per_optimization_iteration) must be at least 1, but got 0")
    time_budget = data.get("time_budget", -1)
    if not (is_number(time_budget) and (time_budget == -1 or time_budget > 0)):
        ctx.fail(("time_budget",), f"minutes > 0, or -1 for no limit, must hold, but got {show(time_budget)}")
    time_limit = None if time_budget == -1 else float(time_budget) * 60.0
    repetitions = data.get("number_of_repetitions", 1)
    if not (is_integral(repetitions) and repetitions >= 1):
        ctx.fail(("number_of_repetitions",), f"`value >= 1` (an integer) must hold, but got {show(repetitions)}")
    measurement = (MeasurementSpec(policy=MeasurementPolicy(repeats=int(repetitions), statistic="mean"))
                   if repetitions > 1 else None)
    include_default = all(isinstance(s, Mapping) and s.get("parameter_default") is not None for s in inputs.values())
    design = DesignSpec(method=method, size=int(n_doe), include_default=include_default)

    # ---- strategy
    opt = data.get("optimization_method", "bayesian_optimization")
    if opt in _HM_FOREIGN_METHODS:
        logger.warning("%s: optimization_method %r wraps another tuner; using bayestune's 'bo' instead", ctx.source, opt)
        handled.append(KeyHandling("optimization_method", "approximated", f"{opt!r} wraps another tuner; bayestune's 'bo'"))
        strategy = "bo"
    elif opt in HM_STRATEGIES:
        strategy = HM_STRATEGIES[opt]
    else:
        ctx.fail(("optimization_method",), f"must be one of {sorted(HM_STRATEGIES) + list(_HM_FOREIGN_METHODS)}, but got {show(opt)}")
    if len(objectives) > 1 and strategy == "bo":  # HyperMapper's BO scalarises several objectives at random
        strategy = DEFAULT_MULTI_OBJECTIVE_STRATEGY
    options: dict[str, Any] = {}
    model_based = strategy in ("bo", DEFAULT_MULTI_OBJECTIVE_STRATEGY)
    models = data.get("models")
    if models is None:
        model = "random_forest" if flavour == "hypermapper" else "gaussian_process"
        handled.append(KeyHandling("models", "mapped", f"absent: {model} ({'HyperMapper' if flavour == 'hypermapper' else 'BaCO'}'s "
                                                   "default; the file is read as "
                                                   f"{'HyperMapper' if flavour == 'hypermapper' else 'BaCO'}'s from its keys)"))
    else:
        if not isinstance(models, Mapping):
            ctx.fail(("models",), f"expected an object such as {{\"model\": \"random_forest\"}}, but got {show(models)}")
        model = models.get("model")
        if model not in ("gaussian_process", "random_forest"):
            ctx.fail(("models", "model"), f"must be one of ['gaussian_process', 'random_forest'], but got {show(model)}")
        for sub in models:
            if sub == "model":
                continue
            if sub not in MODEL_KEYS:  # both schemas tolerate extra keys here
                logger.warning("%s: models: unknown key %r%s ignored", ctx.source, sub,
                               did_you_mean(str(sub), MODEL_KEYS))
                handled.append(KeyHandling(f"models.{sub}", "ignored", "not a key of either schema"))
            elif sub in _RF_OPTIONS:
                handled.append(KeyHandling(f"models.{sub}", "mapped", f"strategy option {_RF_OPTIONS[sub]}"))
            else:
                handled.append(KeyHandling(f"models.{sub}", "approximated",
                                       "bayestune's random forest fits mean and spread on its own samples"))
                logger.warning("%s: models.%s has no bayestune equivalent: bayestune's random forest fits "
                               "mean and spread on its own samples", ctx.source, sub)
    if model == "random_forest" and model_based:
        options["model"] = "rf"
        # the peer's forest: its file's settings, else its defaults (bayestune's are BOSettings')
        given = models if isinstance(models, Mapping) else {}
        for key, option in _RF_OPTIONS.items():
            value = given.get(key, _RF_DEFAULTS[flavour][key])
            ok = isinstance(value, bool) if key == "bootstrap" else (
                is_number(value) and 0 < value <= 1 if key == "max_features" else
                is_integral(value) and (1 <= value <= 1000 if key == "number_of_trees" else value >= 2))
            if not ok:
                ctx.fail(("models", key), f"out of the schema's range, got {show(value)}")
            if value != _RF_BAYESTUNE[key] or isinstance(value, bool) != isinstance(_RF_BAYESTUNE[key], bool):
                _set(options, option, value if key in ("bootstrap", "max_features") else int(value))
    acquisition = data.get("acquisition_function")
    if acquisition is not None and model_based:
        if acquisition in HM_ACQUISITIONS:
            if HM_ACQUISITIONS[acquisition] != "ei":
                options["acquisition"] = HM_ACQUISITIONS[acquisition]
        elif acquisition == "TS":  # HyperMapper's Thompson sampling for random scalarisations
            logger.warning("%s: acquisition_function 'TS' has no bayestune counterpart; using EI", ctx.source)
            handled.append(KeyHandling("acquisition_function", "approximated", "'TS' (Thompson sampling): EI instead"))
        else:
            ctx.fail(("acquisition_function",), f"must be one of {sorted(HM_ACQUISITIONS) + ['TS']}, "
                                                f"but got {show(acquisition)}")
    epsilon = data.get("epsilon_greedy_threshold", 0.1 if flavour == "hypermapper" else 0.0)
    if not (is_number(epsilon) and 0 <= epsilon <= 1):
        ctx.fail(("epsilon_greedy_threshold",), f"`0 <= value <= 1` must hold, but got {show(epsilon)}")
    if "epsilon_greedy_threshold" not in data and epsilon:
        handled.append(KeyHandling("epsilon_greedy_threshold", "mapped", f"absent: HyperMapper's default {epsilon}"))
    if epsilon and model_based:
        _set(options, "experimental.epsilon", float(epsilon))
    fo = data.get("feasible_output")
    threshold = fo.get("feasibility_threshold") if isinstance(fo, Mapping) else None
    if threshold is not None and model_based and not is_default(threshold, 0.1):
        _set(options, "feasibility.threshold", float(threshold))
    log_output = data.get("log_transform_output")
    if log_output is not None:
        if not isinstance(log_output, bool):
            ctx.fail(("log_transform_output",), f"expected true or false, but got {show(log_output)}")
        if model_based:
            options["log_transform"] = log_output
    for key, option, check in _BO_NUMERIC_OPTIONS:
        if key not in data:
            continue
        value = data[key]
        if not check(value):
            ctx.fail((key,), f"expected {_CHECK_TEXT[option]}, but got {show(value)}")
        if model_based:
            _set(options, option, float(value) if option in ("xi", "prior_beta") else int(value))
        else:
            handled.append(KeyHandling(key, "ignored", f"only read by the model-based strategies, not {strategy!r}"))
    try:
        return Scenario(name=name, space=space, objectives=objectives, budget=budget, design=design,
                        strategy=strategy, strategy_options=options, feasible_output=feasible, source=ctx.source,
                        time_limit=time_limit, batch=int(per_iter) if per_iter > 1 else None,
                        measurement=measurement, key_handling=tuple(handled))
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None
