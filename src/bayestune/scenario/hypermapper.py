"""HyperMapper 2.0 / BaCO scenario JSON (``application_name``, ``optimization_objectives``,
``input_parameters``, ...), read unchanged: parameters, constraints (BaCO's permutation
variables translated into our grammar), design of experiment, budget and strategy."""

from __future__ import annotations

import io
import logging
import re
import tokenize
from collections.abc import Mapping
from typing import Any

from bayestune.exceptions import ScenarioError
from bayestune.scenario._common import parse_objectives
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
#: BaCO's permutation ``parametrization`` -> our metric (``naive``, a one-hot over all n!
#: permutations, has no distance structure; Hamming is the nearest we have).
HM_PERMUTATION_METRICS = {**{m: m for m in PERMUTATION_METRICS}, "naive": "hamming"}
_HM_USED_KEYS = {
    "application_name", "optimization_objectives", "input_parameters", "constraints", "feasible_output",
    "design_of_experiment", "optimization_iterations", "evaluations_per_optimization_iteration",
    "optimization_method", "models", "acquisition_function",
}
_HM_PARAM_KEYS = {
    "parameter_type", "values", "parameter_default", "prior", "prior_parameters", "transform",
    "parametrization", "constraints", "dependencies",
}


def _hm_parameter(ctx: SpecContext, name: str, spec: Any) -> tuple[Parameter, list[tuple[JsonPath, str]]]:
    path: JsonPath = ("input_parameters", name)
    if not isinstance(spec, Mapping):
        ctx.fail(path, f"a parameter must be an object, but got {show(spec)}")
    unknown = sorted(set(spec) - _HM_PARAM_KEYS)
    if unknown:
        logger.debug("%s: %s: ignoring keys %s", ctx.source, fmt_path(path), unknown)
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
                logger.debug("%s: %s: sorting ordinal values %s", ctx.source, fmt_path(vpath), values)
                values = [values[i] for i in order]
                if isinstance(spec.get("prior"), list) and len(spec["prior"]) == len(values):
                    spec = {**spec, "prior": [spec["prior"][i] for i in order]}
        domain = values
    prior = hm_prior(ctx, path, spec, kind, domain, log)
    param = make_parameter(ctx, path, kind, name, domain, log=log, metric=metric, prior=prior, default=default,
                            domain_key="values", default_key="parameter_default")
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


def parse_hypermapper(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    ignored = sorted(str(k) for k in data if k not in _HM_USED_KEYS)
    if ignored:
        logger.debug("%s: ignoring HyperMapper/BaCO keys %s", ctx.source, ignored)
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
    feasible = None
    fo = data.get("feasible_output")
    if fo is not None:
        if not isinstance(fo, Mapping):
            ctx.fail(("feasible_output",), f"expected an object, but got {show(fo)}")
        if fo.get("enable_feasible_predictor", False) is True:
            feasible = fo.get("name", "Valid")
            if not isinstance(feasible, str) or not feasible:
                ctx.fail(("feasible_output", "name"), f"expected a non-empty string, but got {show(feasible)}")

    # ---- initial design and budget
    doe = data.get("design_of_experiment", {})
    if not isinstance(doe, Mapping):
        ctx.fail(("design_of_experiment",), f"expected an object, but got {show(doe)}")
    doe_type = doe.get("doe_type", "random sampling")
    if doe_type not in HM_DOE_METHODS:
        ctx.fail(("design_of_experiment", "doe_type"), f"must be one of {sorted(HM_DOE_METHODS)}, but got {show(doe_type)}")
    n_doe = doe.get("number_of_samples", 10)
    if not (is_integral(n_doe) and n_doe >= 0):
        ctx.fail(("design_of_experiment", "number_of_samples"), f"`value >= 0` (an integer) must hold, but got {show(n_doe)}")
    method = HM_DOE_METHODS[doe_type]
    if method == "cot" and space.has_prior:
        method = "prior"  # HyperMapper 2.0 draws its random design from the priors
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
    include_default = all(isinstance(s, Mapping) and s.get("parameter_default") is not None for s in inputs.values())
    design = DesignSpec(method=method, size=int(n_doe), include_default=include_default)

    # ---- strategy
    opt = data.get("optimization_method", "bayesian_optimization")
    if opt in _HM_FOREIGN_METHODS:
        logger.warning("%s: optimization_method %r wraps another tuner; using bayestune's 'bo' instead", ctx.source, opt)
        strategy = "bo"
    elif opt in HM_STRATEGIES:
        strategy = HM_STRATEGIES[opt]
    else:
        ctx.fail(("optimization_method",), f"must be one of {sorted(HM_STRATEGIES) + list(_HM_FOREIGN_METHODS)}, but got {show(opt)}")
    if len(objectives) > 1 and strategy == "bo":  # HyperMapper's BO scalarises several objectives at random
        strategy = DEFAULT_MULTI_OBJECTIVE_STRATEGY
    options: dict[str, Any] = {}
    models = data.get("models")
    if models is not None:
        model = models.get("model") if isinstance(models, Mapping) else None
        if model not in ("gaussian_process", "random_forest"):
            ctx.fail(("models", "model"), f"must be one of ['gaussian_process', 'random_forest'], but got {show(model)}")
        if model == "random_forest" and strategy == "bo":
            options["model"] = "rf"
    acquisition = data.get("acquisition_function")
    if acquisition is not None and strategy == "bo":
        if acquisition in HM_ACQUISITIONS:
            if HM_ACQUISITIONS[acquisition] != "ei":
                options["acquisition"] = HM_ACQUISITIONS[acquisition]
        else:
            logger.info("%s: acquisition_function %r has no counterpart; using EI", ctx.source, acquisition)
    try:
        return Scenario(name=name, space=space, objectives=objectives, budget=budget, design=design,
                        strategy=strategy, strategy_options=options, feasible_output=feasible, source=ctx.source)
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None
