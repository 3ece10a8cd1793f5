"""Scenario files: read and write tuning problems as JSON or YAML.

Three input formats are recognised from their top-level keys:

* **native** (``parameters``, ``objectives``, ...): bayestune's own format, described by the
  published JSON Schema ``bayestune/schemas/scenario.schema.json`` and ``docs/scenario.md``;
* **HyperMapper 2.0 / BaCO** (``application_name``, ``optimization_objectives``,
  ``input_parameters``, ...): their scenario JSON, read unchanged;
* **T1** (``General``, ``ConfigurationSpace``, ``KernelSpecification``, ...): the community
  search-space format of the GPU-kernel benchmark collections.

:func:`scenario_to_dict` always writes the native format. Every problem is reported as a
:class:`~bayestune.exceptions.ScenarioError` naming the file, the JSON path, the rule and the
offending value, e.g. ``examples/x.json: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]``.
"""

from __future__ import annotations

import ast
import copy
import io
import json
import logging
import math
import operator
import os
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, relevance

from bayestune.exceptions import ConstraintError, ScenarioError, SpaceError
from bayestune.objectives import Objective, OutputConstraint
from bayestune.scenario_model import (
    BLACKBOX_KINDS,
    DEFAULT_MULTI_OBJECTIVE_STRATEGY,
    BlackBoxSpec,
    DesignSpec,
    Scenario,
)
from bayestune.space.parameters import PERMUTATION_METRICS, Categorical, Integer, Ordinal, Parameter, Permutation, Real
from bayestune.space.priors import BETA_SHAPES
from bayestune.space.space import Space

logger = logging.getLogger(__name__)

__all__ = [
    "FORMATS", "detect_format", "load_scenario", "load_schema", "save_scenario", "scenario_from_dict",
    "scenario_to_dict", "space_from_spec",
]

#: Input formats recognised by :func:`detect_format`.
FORMATS = ("native", "hypermapper", "t1")
#: Initial-design methods of the native format.
DESIGN_METHODS = ("uniform", "cot", "lhs", "maximin", "prior")
#: Top-level keys of the native format (also listed in the JSON Schema).
NATIVE_KEYS = (
    "$schema", "name", "description", "parameters", "constraints", "objectives", "budget", "initial_design",
    "strategy", "strategy_options", "blackbox", "seed", "journal", "feasible_output", "output_constraints",
)
_HM_MARKERS = ("application_name", "optimization_objectives", "input_parameters")
_T1_MARKERS = ("ConfigurationSpace",)

_JsonPath = tuple  # of str (object keys) and int (array indices)


# ---------------------------------------------------------------------------------------
# error reporting
# ---------------------------------------------------------------------------------------
def _fmt_path(path: Sequence[str | int]) -> str:
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def _show(value: Any, limit: int = 200) -> str:
    """The offending value as it would appear in the file (JSON), shortened if long."""
    try:
        text = json.dumps(value, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Ctx:
    """Where we are reading from; builds errors that name the file and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, path: Sequence[str | int], message: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {_fmt_path(path)}: {message}")

    def fail(self, path: Sequence[str | int], message: str) -> NoReturn:
        raise self.error(path, message)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_integral(v: Any) -> bool:
    return _is_number(v) and math.isfinite(v) and float(v).is_integer()


# ---------------------------------------------------------------------------------------
# the JSON Schema of the native format
# ---------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of the native scenario format."""
    text = resources.files("bayestune").joinpath("schemas/scenario.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    return Draft202012Validator(load_schema())


def _schema_message(err: ValidationError) -> str:
    value, v = err.instance, err.validator
    if v == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(str(k) for k in value if k not in allowed) if isinstance(value, Mapping) else []
        keys = ", ".join(repr(k) for k in extra)
        return f"unknown key{'s' if len(extra) > 1 else ''} {keys}; allowed keys: {allowed}"
    if v == "required":
        missing = [k for k in err.validator_value if isinstance(value, Mapping) and k not in value]
        return f"missing required key {missing[0]!r}" if missing else err.message
    if v == "type":
        expected = err.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {'an' if expected[0] in 'aeiou' else 'a'} {expected}, but got {_show(value)}"
    if v == "enum":
        return f"must be one of {_show(err.validator_value)}, but got {_show(value)}"
    if v == "const":
        return f"must be {_show(err.validator_value)}, but got {_show(value)}"
    if v in ("minItems", "maxItems"):
        rule = "at least" if v == "minItems" else "at most"
        return f"must have {rule} {err.validator_value} item(s), but got {_show(value)}"
    if v in ("minProperties", "maxProperties"):
        return f"must have at least {err.validator_value} entr(ies), but got {_show(value)}"
    if v == "minLength":
        return f"must be a non-empty string, but got {_show(value)}"
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return f"`value {op} {err.validator_value}` must hold, but got {_show(value)}"
    if v in ("pattern", "oneOf", "anyOf") and err.schema.get("description"):
        return f"must be {err.schema['description']}, but got {_show(value)}"
    return f"{err.message}"


def _check_native_schema(data: Mapping[str, Any], ctx: _Ctx) -> None:
    errors, seen = [], set()
    for err in _validator().iter_errors(data):
        key = (tuple(err.absolute_path), err.message)
        if key not in seen:  # the same rule can be reached along two schema routes
            seen.add(key)
            errors.append(err)
    if not errors:
        return
    # The most relevant error without descending into oneOf branches (whose sub-errors talk
    # about alternatives the user did not mean).
    best = max(errors, key=relevance)
    path = list(best.absolute_path)
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    if "propertyNames" in best.absolute_schema_path:
        # jsonschema reports a bad key at the object holding it; point at the key itself.
        ctx.fail(path + [str(best.instance)],
                 f"a parameter name must be a Python identifier, but got {_show(best.instance)}{more}")
    ctx.fail(path, _schema_message(best) + more)


# ---------------------------------------------------------------------------------------
# building parameters and spaces, with errors pointing at the right key
# ---------------------------------------------------------------------------------------
def _make_parameter(ctx: _Ctx, path: _JsonPath, kind: str, name: str, domain: Any, *,
                    log: bool = False, metric: str = "spearman", prior: Any = None, default: Any = None,
                    domain_key: str, prior_key: str = "prior", default_key: str = "default",
                    name_path: _JsonPath | None = None) -> Parameter:
    """Construct one parameter in stages (domain, then prior, then default) so that a
    :class:`SpaceError` is reported at the key that caused it."""
    if not isinstance(name, str) or not name.isidentifier():
        ctx.fail(name_path if name_path is not None else path,
                 f"a parameter name must be a Python identifier, but got {_show(name)}")

    def build(prior_: Any, default_: Any) -> Parameter:
        if kind in ("real", "integer"):
            lo, hi = domain
            cls = Real if kind == "real" else Integer
            return cls(name, lo, hi, log=log, default=default_, prior=prior_)
        if kind == "ordinal":
            return Ordinal(name, domain, log=log, default=default_, prior=prior_)
        if kind == "categorical":
            return Categorical(name, domain, default=default_, prior=prior_)
        if kind == "permutation":
            return Permutation(name, domain, metric=metric, default=default_)
        raise AssertionError(kind)

    if kind in ("real", "integer"):
        if not (isinstance(domain, (list, tuple)) and len(domain) == 2 and all(_is_number(v) for v in domain)):
            ctx.fail(path + (domain_key,), f"expected [low, high] (two numbers), but got {_show(domain)}")
        lo, hi = domain
        if not (math.isfinite(lo) and math.isfinite(hi)):
            ctx.fail(path + (domain_key,), f"bounds must be finite numbers, but got {_show(list(domain))}")
        if not lo < hi:
            ctx.fail(path + (domain_key,), f"`low < high` must hold, but got {_show(list(domain))}")
        if log and lo <= 0:
            ctx.fail(path + (domain_key,), f"a log-scale parameter needs `low > 0`, but got {_show(list(domain))}")
    try:
        param = build(None, None)
    except (SpaceError, ValueError, TypeError) as exc:
        raise ctx.error(path + (domain_key,), str(exc)) from None
    if prior is not None:
        try:
            param = build(prior, None)
        except (SpaceError, ValueError, TypeError) as exc:
            raise ctx.error(path + (prior_key,), str(exc)) from None
    if default is not None:
        try:
            param = build(prior, default)
        except (SpaceError, ValueError, TypeError) as exc:
            raise ctx.error(path + (default_key,), str(exc)) from None
    return param


def _check_unique_names(ctx: _Ctx, params: Sequence[Parameter], paths: Sequence[_JsonPath],
                        name_key: str | None) -> None:
    first: dict[str, _JsonPath] = {}
    for p, path in zip(params, paths):
        if p.name in first:
            where = path + (name_key,) if name_key else path
            ctx.fail(where, f"parameter names must be unique, but {p.name!r} also names {_fmt_path(first[p.name])}")
        first[p.name] = path


def _build_space(ctx: _Ctx, params: list[Parameter], constraints: Sequence[tuple[_JsonPath, str]],
                 params_path: _JsonPath) -> Space:
    texts = [text for _, text in constraints]
    try:
        return Space(params, texts)
    except ConstraintError as exc:
        for path, text in constraints:  # find which expression is at fault
            try:
                Space(params, [text])
            except ConstraintError as one:
                raise ctx.error(path, str(one)) from one
        raise ctx.error(constraints[0][0][:-1] if constraints else params_path, str(exc)) from exc
    except SpaceError as exc:
        raise ctx.error(params_path, str(exc)) from exc


def space_from_spec(params: list[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
                    constraints: Sequence[str] = (), *, source: str = "<spec>") -> Space:
    """A :class:`Space` from the ``parameters`` and ``constraints`` of a native scenario
    (the inverse of :meth:`Space.to_spec`). Raises :class:`ScenarioError` naming the path."""
    data = _plain({"parameters": params, "constraints": list(constraints), "objectives": ["_"]})
    ctx = _Ctx(source)
    _check_native_schema(data, ctx)
    return _native_space(data, ctx)


# ---------------------------------------------------------------------------------------
# the native format
# ---------------------------------------------------------------------------------------
_DOMAIN_KEY = {"real": "bounds", "integer": "bounds", "ordinal": "values", "categorical": "values", "permutation": "n"}


def _native_space(data: Mapping[str, Any], ctx: _Ctx) -> Space:
    raw = data["parameters"]
    if isinstance(raw, Mapping):
        items = []
        for key, spec in raw.items():
            path = ("parameters", key)
            if "name" in spec and spec["name"] != key:
                ctx.fail(path + ("name",), f"the name must match the key {key!r} (or be left out), but got {_show(spec['name'])}")
            items.append((path, key, spec, path))
        name_key = None
    else:
        items = [(("parameters", i), spec["name"], spec, ("parameters", i, "name")) for i, spec in enumerate(raw)]
        name_key = "name"
    params, paths = [], []
    for path, name, spec, name_path in items:
        kind = spec["type"]
        params.append(_make_parameter(
            ctx, path, kind, name, spec[_DOMAIN_KEY[kind]], log=spec.get("log", False),
            metric=spec.get("metric", "spearman"), prior=spec.get("prior"), default=spec.get("default"),
            domain_key=_DOMAIN_KEY[kind], name_path=name_path))
        paths.append(path)
    _check_unique_names(ctx, params, paths, name_key)
    constraints = [(("constraints", i), text) for i, text in enumerate(data.get("constraints", []))]
    return _build_space(ctx, params, constraints, ("parameters",))


def _parse_objectives(ctx: _Ctx, items: Sequence[Any], base: _JsonPath, space: Space) -> tuple[Objective, ...]:
    out: list[Objective] = []
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        path = base + (i,)
        name, direction = (item, "minimize") if isinstance(item, str) else (item["name"], item.get("direction", "minimize"))
        if name in first:
            ctx.fail(path, f"objective names must be unique, but {name!r} also appears at {_fmt_path(base + (first[name],))}")
        if name in space:
            ctx.fail(path, f"objective {name!r} has the name of a parameter; objective and parameter names must differ")
        first[name] = i
        try:
            out.append(Objective(name, direction))
        except ScenarioError as exc:
            raise ctx.error(path, str(exc)) from None
    return tuple(out)


def _default_name(source: str) -> str:
    if source.startswith("<"):
        return "scenario"
    return Path(source).stem or "scenario"


def _parse_native(data: Mapping[str, Any], ctx: _Ctx) -> Scenario:
    _check_native_schema(data, ctx)
    space = _native_space(data, ctx)
    objectives = _parse_objectives(ctx, data["objectives"], ("objectives",), space)
    d = DesignSpec()
    design_data = data.get("initial_design", {})
    design = DesignSpec(method=design_data.get("method", d.method), size=design_data.get("size", d.size),
                        include_default=design_data.get("include_default", d.include_default))
    blackbox = _parse_blackbox(ctx, data.get("blackbox"))
    feasible = data.get("feasible_output")
    if feasible is not None and feasible in {o.name for o in objectives}:
        ctx.fail(("feasible_output",), f"the feasibility output must not be an objective, but got {_show(feasible)}")
    if feasible is not None and feasible in space:
        ctx.fail(("feasible_output",), f"the feasibility output must not be a parameter, but got {_show(feasible)}")
    output_constraints = []
    for i, text in enumerate(data.get("output_constraints", [])):
        try:
            c = OutputConstraint(text)
        except ScenarioError as exc:
            raise ctx.error(("output_constraints", i), str(exc)) from None
        clash = sorted(set(c.outputs) & set(space.names))
        if clash:
            ctx.fail(("output_constraints", i), f"an output constraint reads measured outputs, not parameters, "
                                                f"but {_show(text)} names parameter(s) {clash}")
        output_constraints.append(text)
    kwargs: dict[str, Any] = {}
    if "strategy" in data:
        kwargs["strategy"] = data["strategy"]
    elif len(objectives) > 1:
        kwargs["strategy"] = DEFAULT_MULTI_OBJECTIVE_STRATEGY
    if "budget" in data:
        kwargs["budget"] = data["budget"]
    try:
        return Scenario(
            name=data.get("name", _default_name(ctx.source)), space=space, objectives=objectives, design=design,
            strategy_options=copy.deepcopy(dict(data.get("strategy_options", {}))), blackbox=blackbox,
            seed=data.get("seed"), journal=data.get("journal"), feasible_output=feasible,
            output_constraints=tuple(output_constraints), source=ctx.source, **kwargs)
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None


def _parse_blackbox(ctx: _Ctx, bb: Mapping[str, Any] | None) -> BlackBoxSpec | None:
    if bb is None:
        return None
    kinds = [k for k in BLACKBOX_KINDS if k in bb]
    if len(kinds) != 1:
        ctx.fail(("blackbox",), f"exactly one of {list(BLACKBOX_KINDS)} must be given, but got "
                                f"{kinds if kinds else 'none'} in {_show(bb)}")
    kind = kinds[0]
    target = bb[kind]
    if kind == "python":
        module, _, func = target.rpartition(":")
        if not module.strip() or not all(part.isidentifier() for part in func.strip().split(".")):
            ctx.fail(("blackbox", "python"), f'expected "module:function" or "path/to/file.py:function", but got {_show(target)}')
    try:
        return BlackBoxSpec(kind=kind, target=target, timeout=bb.get("timeout"), workdir=bb.get("workdir"),
                            options=copy.deepcopy(dict(bb.get("options", {}))))
    except ScenarioError as exc:
        raise ctx.error(("blackbox",), str(exc)) from None


# ---------------------------------------------------------------------------------------
# HyperMapper 2.0 / BaCO
# ---------------------------------------------------------------------------------------
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


def _beta_from_moments(mu: float, var: float) -> list[float] | None:
    """Beta(alpha, beta) with the given mean and variance on [0, 1] (clamped to sane shapes)."""
    mu = min(max(float(mu), 0.01), 0.99)
    k = mu * (1.0 - mu) / max(float(var), 1e-6) - 1.0
    k = min(max(k, 0.2), 1000.0)
    a, b = round(mu * k, 6), round((1.0 - mu) * k, 6)
    return None if (a == 1.0 and b == 1.0) else [a, b]


def _beta_from_masses(units: np.ndarray, masses: Sequence[float]) -> list[float] | None:
    """Beta matching per-value probabilities of a discrete parameter whose values sit at
    ``units`` on [0, 1]; each mass is spread over the value's bin (edges half-way between
    neighbours), the same bins through which the parameter turns a Beta prior into
    probabilities."""
    w = np.asarray(masses, dtype=float)
    if np.allclose(w, w[0]):
        return None  # uniform
    w = w / w.sum()
    edges = np.concatenate([[0.0], (units[1:] + units[:-1]) / 2, [1.0]])
    centres, widths = (edges[1:] + edges[:-1]) / 2, np.diff(edges)
    mu = float((w * centres).sum())
    var = float((w * (centres - mu) ** 2).sum() + (w * widths**2).sum() / 12)
    return _beta_from_moments(mu, var)


def _beta_from_density(values: Sequence[float]) -> list[float] | None:
    """Beta matching a density given at evenly spaced points of [0, 1] (linear in between)."""
    w = np.asarray(values, dtype=float)
    if np.allclose(w, w[0]):
        return None  # uniform
    x = np.linspace(0.0, 1.0, 4001)
    f = np.interp(x, np.linspace(0.0, 1.0, len(w)), w)
    f = f / f.sum()
    mu = float((f * x).sum())
    return _beta_from_moments(mu, float((f * (x - mu) ** 2).sum()))


def _unit_positions(values: Sequence[float], log: bool) -> np.ndarray:
    t = np.log(np.asarray(values, dtype=float)) if log else np.asarray(values, dtype=float)
    span = t[-1] - t[0]
    return (t - t[0]) / span if span > 0 else np.zeros_like(t)


def _hm_prior(ctx: _Ctx, path: _JsonPath, spec: Mapping[str, Any], kind: str, domain: Any, log: bool) -> Any:
    """Translate a HyperMapper/BaCO ``prior`` to what our parameter constructors take.

    Named shapes map directly; BaCO's ``gaussian`` with ``prior_parameters: [mean, std]`` and
    per-value probability lists on numeric parameters become a moment-matched Beta prior on the
    parameter's (log-)normalised scale; categorical probability lists are kept as they are.
    """
    prior = spec.get("prior")
    ppath = path + ("prior",)
    if prior is None or prior == "uniform":
        return None
    if kind == "permutation":
        ctx.fail(ppath, f"permutation parameters take no prior, but got {_show(prior)}")
    if isinstance(prior, str):
        if prior in ("estimate", "custom_gaussian"):
            ctx.fail(ppath, f"the {prior!r} prior is not supported; use one of {sorted(BETA_SHAPES)} "
                            f"or a list of probabilities")
        if prior not in BETA_SHAPES:
            ctx.fail(ppath, f"must be one of {sorted(BETA_SHAPES)} or a list of probabilities, but got {_show(prior)}")
        if kind == "categorical":
            ctx.fail(ppath, f"a categorical prior is a list of probabilities (one per value), but got {_show(prior)}")
        pp = spec.get("prior_parameters")
        if prior == "gaussian" and pp not in (None, []):
            if not (isinstance(pp, list) and len(pp) == 2 and all(_is_number(v) for v in pp) and pp[1] > 0):
                ctx.fail(path + ("prior_parameters",), f"a gaussian prior takes [mean, std] with std > 0, but got {_show(pp)}")
            mean, std = float(pp[0]), float(pp[1])
            lo, hi = (float(domain[0]), float(domain[-1]))
            if hi <= lo or (log and lo <= 0):
                return "gaussian"  # the domain itself is reported as invalid later
            if log:
                if mean <= 0:
                    ctx.fail(path + ("prior_parameters",), f"a log-scale parameter needs `mean > 0`, but got {_show(pp)}")
                mu = (math.log(mean) - math.log(lo)) / (math.log(hi) - math.log(lo))
                sd = (std / mean) / (math.log(hi) - math.log(lo))
            else:
                mu, sd = (mean - lo) / (hi - lo), std / (hi - lo)
            return _beta_from_moments(mu, sd * sd)
        return prior
    if not isinstance(prior, list) or not prior or not all(_is_number(v) and v >= 0 for v in prior) or sum(prior) <= 0:
        ctx.fail(ppath, f"must be a shape name or a list of non-negative probabilities with a positive sum, but got {_show(prior)}")
    if kind == "categorical":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {_show(prior)}")
        return list(prior)
    if kind == "ordinal":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {_show(prior)}")
        return _beta_from_masses(_unit_positions(domain, log), prior)
    if kind == "integer":
        n = int(domain[1]) - int(domain[0]) + 1
        if len(prior) != n:
            ctx.fail(ppath, f"needs one probability per integer in [{domain[0]}, {domain[1]}] ({n}), "
                            f"but got {len(prior)}: {_show(prior)}")
        return _beta_from_masses(_unit_positions(list(range(int(domain[0]), int(domain[1]) + 1)), log), prior)
    # real: BaCO reads the list as a density on an even grid over [min, max]
    if len(prior) < 2:
        ctx.fail(ppath, f"a real parameter's probability list needs at least 2 points, but got {_show(prior)}")
    return _beta_from_density(prior)


def _hm_parameter(ctx: _Ctx, name: str, spec: Any) -> tuple[Parameter, list[tuple[_JsonPath, str]]]:
    path: _JsonPath = ("input_parameters", name)
    if not isinstance(spec, Mapping):
        ctx.fail(path, f"a parameter must be an object, but got {_show(spec)}")
    unknown = sorted(set(spec) - _HM_PARAM_KEYS)
    if unknown:
        logger.debug("%s: %s: ignoring keys %s", ctx.source, _fmt_path(path), unknown)
    if "parameter_type" not in spec:
        ctx.fail(path, "missing required key 'parameter_type'")
    kind = spec["parameter_type"]
    if kind not in HM_PARAMETER_TYPES:
        ctx.fail(path + ("parameter_type",), f"unknown parameter_type {_show(kind)}; allowed: {list(HM_PARAMETER_TYPES)}")
    if "values" not in spec:
        ctx.fail(path, "missing required key 'values'")
    values = spec["values"]
    vpath = path + ("values",)
    transform = spec.get("transform", "none")
    if transform not in ("none", "log"):
        ctx.fail(path + ("transform",), f"must be one of ['none', 'log'], but got {_show(transform)}")
    log = transform == "log"
    if log and kind in ("categorical", "permutation"):
        ctx.fail(path + ("transform",), f"a log transform applies to real, integer and ordinal parameters, not {kind}")
    default = spec.get("parameter_default")
    metric = "spearman"
    if kind == "permutation":
        if _is_integral(values):
            values = [values]
        if not (isinstance(values, list) and len(values) == 1 and _is_integral(values[0]) and values[0] >= 1):
            ctx.fail(vpath, f"a permutation's values are [n] (the number of elements, n >= 1), but got {_show(values)}")
        domain: Any = int(values[0])
        param_metric = spec.get("parametrization", "spearman")
        if param_metric not in HM_PERMUTATION_METRICS:
            ctx.fail(path + ("parametrization",),
                     f"must be one of {sorted(HM_PERMUTATION_METRICS)}, but got {_show(param_metric)}")
        metric = HM_PERMUTATION_METRICS[param_metric]
        if param_metric == "naive":
            logger.info("%s: %s: permutation parametrization 'naive' is read as 'hamming'", ctx.source, _fmt_path(path))
    else:
        if not isinstance(values, list) or not values:
            ctx.fail(vpath, f"expected a non-empty list, but got {_show(values)}")
        if kind in ("real", "integer"):
            if len(values) != 2 or not all(_is_number(v) for v in values):
                ctx.fail(vpath, f"a {kind} parameter's values are [min, max], but got {_show(values)}")
            if kind == "integer" and not all(_is_integral(v) for v in values):
                ctx.fail(vpath, f"an integer parameter's values are two integers [min, max], but got {_show(values)}")
            if kind == "integer" and values[0] == values[1]:
                kind, values = "ordinal", [int(values[0])]  # a constant
            elif not values[0] < values[1]:
                ctx.fail(vpath, f"`min < max` must hold, but got {_show(values)}")
            if kind == "integer":
                values = [int(values[0]), int(values[1])]
        if kind == "ordinal":
            if not all(_is_number(v) for v in values):
                ctx.fail(vpath, f"ordinal values must be numbers, but got {_show(values)}")
            if len(set(values)) != len(values):
                ctx.fail(vpath, f"ordinal values must be distinct, but got {_show(values)}")
            order = sorted(range(len(values)), key=lambda i: values[i])
            if order != list(range(len(values))):
                logger.debug("%s: %s: sorting ordinal values %s", ctx.source, _fmt_path(vpath), values)
                values = [values[i] for i in order]
                if isinstance(spec.get("prior"), list) and len(spec["prior"]) == len(values):
                    spec = {**spec, "prior": [spec["prior"][i] for i in order]}
        domain = values
    prior = _hm_prior(ctx, path, spec, kind, domain, log)
    param = _make_parameter(ctx, path, kind, name, domain, log=log, metric=metric, prior=prior, default=default,
                            domain_key="values", default_key="parameter_default")
    constraints = []
    raw_cons = spec.get("constraints", [])
    if not isinstance(raw_cons, list):
        ctx.fail(path + ("constraints",), f"expected a list of expression strings, but got {_show(raw_cons)}")
    for j, text in enumerate(raw_cons):
        if not isinstance(text, str) or not text.strip():
            ctx.fail(path + ("constraints", j), f"a constraint must be a non-empty expression string, but got {_show(text)}")
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


def _parse_hypermapper(data: Mapping[str, Any], ctx: _Ctx) -> Scenario:
    ignored = sorted(str(k) for k in data if k not in _HM_USED_KEYS)
    if ignored:
        logger.debug("%s: ignoring HyperMapper/BaCO keys %s", ctx.source, ignored)
    name = data.get("application_name", "application")
    if not isinstance(name, str) or not name.strip():
        ctx.fail(("application_name",), f"expected a non-empty string, but got {_show(name)}")

    # ---- parameters and constraints
    inputs = data.get("input_parameters")
    if inputs is None:
        ctx.fail((), "missing required key 'input_parameters'")
    if not isinstance(inputs, Mapping) or not inputs:
        ctx.fail(("input_parameters",), f"expected an object mapping parameter names to parameters, but got {_show(inputs)}")
    params, paths, constraints = [], [], []
    for key, spec in inputs.items():
        param, cons = _hm_parameter(ctx, str(key), spec)
        params.append(param)
        paths.append(("input_parameters", str(key)))
        constraints.extend(cons)
    top = data.get("constraints", [])
    if not isinstance(top, list):
        ctx.fail(("constraints",), f"expected a list of expression strings, but got {_show(top)}")
    for j, text in enumerate(top):
        if not isinstance(text, str) or not text.strip():
            ctx.fail(("constraints", j), f"a constraint must be a non-empty expression string, but got {_show(text)}")
        constraints.append((("constraints", j), text))
    perms = {p.name: p.n for p in params if isinstance(p, Permutation)}
    names = {p.name for p in params}
    translated, seen = [], set()
    for path, text in constraints:
        new = _translate_permutation_names(text, perms, names)
        if new != text:
            logger.debug("%s: %s: constraint %r read as %r", ctx.source, _fmt_path(path), text, new)
        if new not in seen:  # BaCO repeats a constraint under each parameter it involves
            seen.add(new)
            translated.append((path, new))
    space = _build_space(ctx, params, translated, ("input_parameters",))

    # ---- objectives
    objs = data.get("optimization_objectives")
    if objs is None:
        ctx.fail((), "missing required key 'optimization_objectives'")
    if not isinstance(objs, list) or not objs or not all(isinstance(o, str) and o for o in objs):
        ctx.fail(("optimization_objectives",), f"expected a non-empty list of names, but got {_show(objs)}")
    objectives = _parse_objectives(ctx, objs, ("optimization_objectives",), space)

    # ---- feasibility output
    feasible = None
    fo = data.get("feasible_output")
    if fo is not None:
        if not isinstance(fo, Mapping):
            ctx.fail(("feasible_output",), f"expected an object, but got {_show(fo)}")
        if fo.get("enable_feasible_predictor", False) is True:
            feasible = fo.get("name", "Valid")
            if not isinstance(feasible, str) or not feasible:
                ctx.fail(("feasible_output", "name"), f"expected a non-empty string, but got {_show(feasible)}")

    # ---- initial design and budget
    doe = data.get("design_of_experiment", {})
    if not isinstance(doe, Mapping):
        ctx.fail(("design_of_experiment",), f"expected an object, but got {_show(doe)}")
    doe_type = doe.get("doe_type", "random sampling")
    if doe_type not in HM_DOE_METHODS:
        ctx.fail(("design_of_experiment", "doe_type"), f"must be one of {sorted(HM_DOE_METHODS)}, but got {_show(doe_type)}")
    n_doe = doe.get("number_of_samples", 10)
    if not (_is_integral(n_doe) and n_doe >= 0):
        ctx.fail(("design_of_experiment", "number_of_samples"), f"`value >= 0` (an integer) must hold, but got {_show(n_doe)}")
    method = HM_DOE_METHODS[doe_type]
    if method == "cot" and space.has_prior:
        method = "prior"  # HyperMapper 2.0 draws its random design from the priors
    iterations = data.get("optimization_iterations", 50)
    if not (_is_integral(iterations) and iterations >= 0):
        ctx.fail(("optimization_iterations",), f"`value >= 0` (an integer) must hold, but got {_show(iterations)}")
    per_iter = data.get("evaluations_per_optimization_iteration", 1)
    if not (_is_integral(per_iter) and per_iter >= 1):
        ctx.fail(("evaluations_per_optimization_iteration",), f"`value >= 1` (an integer) must hold, but got {_show(per_iter)}")
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
        ctx.fail(("optimization_method",), f"must be one of {sorted(HM_STRATEGIES) + list(_HM_FOREIGN_METHODS)}, but got {_show(opt)}")
    if len(objectives) > 1 and strategy == "bo":  # HyperMapper's BO scalarises several objectives at random
        strategy = DEFAULT_MULTI_OBJECTIVE_STRATEGY
    options: dict[str, Any] = {}
    models = data.get("models")
    if models is not None:
        model = models.get("model") if isinstance(models, Mapping) else None
        if model not in ("gaussian_process", "random_forest"):
            ctx.fail(("models", "model"), f"must be one of ['gaussian_process', 'random_forest'], but got {_show(model)}")
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


# ---------------------------------------------------------------------------------------
# T1 (community GPU-kernel search spaces)
# ---------------------------------------------------------------------------------------
#: Longest value list a T1 ``Values`` expression may produce.
T1_MAX_VALUES = 1_000_000
_T1_TYPES = {"int": "int", "integer": "int", "float": "float", "double": "float", "real": "float",
             "string": "str", "str": "str", "bool": "bool", "boolean": "bool"}


class _ValueListEvaluator:
    """Evaluate a T1 ``Values`` text such as ``"[32 * i for i in range(1, 32)]"`` without
    ``eval``: literals, arithmetic, list concatenation/repetition, comprehensions and a
    handful of pure builtins; anything else is rejected."""

    _BINOPS: dict[type, Callable[[Any, Any], Any]] = {
        ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    }
    _CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
        ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    }
    _FUNCS: dict[str, Callable[..., Any]] = {
        "range": range, "list": list, "tuple": list, "sorted": sorted, "int": int, "float": float,
        "round": round, "abs": abs, "min": min, "max": max, "len": len, "sum": sum,
    }

    def __init__(self) -> None:
        self.steps = 0

    def run(self, text: str) -> list[Any]:
        tree = ast.parse(text.strip(), mode="eval")
        value = self.eval(tree.body, {})
        if isinstance(value, (range, tuple)):
            value = list(value)
        if not isinstance(value, list):
            raise ValueError(f"expected a list of values, but the expression gives {value!r}")
        return value

    def _tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > T1_MAX_VALUES:
            raise ValueError(f"the expression produces more than {T1_MAX_VALUES:,} values")

    def _size_ok(self, value: Any) -> Any:
        if isinstance(value, (list, range)) and len(value) > T1_MAX_VALUES:
            raise ValueError(f"the expression produces more than {T1_MAX_VALUES:,} values")
        return value

    def eval(self, node: ast.AST, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float, str, bool)):
                return node.value
            raise ValueError(f"unsupported constant {node.value!r}")
        if isinstance(node, (ast.List, ast.Tuple)):
            self._tick(len(node.elts))
            return [self.eval(e, env) for e in node.elts]
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise ValueError(f"unknown name {node.id!r}")
        if isinstance(node, ast.UnaryOp):
            v = self.eval(node.operand, env)
            if isinstance(node.op, ast.USub) and _is_number(v):
                return -v
            if isinstance(node.op, ast.UAdd) and _is_number(v):
                return +v
            if isinstance(node.op, ast.Not):
                return not v
            raise ValueError(f"unsupported unary operation on {v!r}")
        if isinstance(node, ast.BinOp):
            op = self._BINOPS.get(type(node.op))
            if op is None:
                raise ValueError(f"unsupported operator {type(node.op).__name__}")
            a, b = self.eval(node.left, env), self.eval(node.right, env)
            if isinstance(node.op, ast.Pow) and (not _is_number(b) or abs(b) > 64 or (_is_number(a) and abs(a) > 2**32)):
                raise ValueError(f"power {a!r} ** {b!r} is out of range")
            if isinstance(node.op, ast.Mult) and (isinstance(a, (list, str)) or isinstance(b, (list, str))):
                n = b if isinstance(a, (list, str)) else a
                seq = a if isinstance(a, (list, str)) else b
                if not isinstance(n, int) or len(seq) * max(n, 0) > T1_MAX_VALUES:
                    raise ValueError("repetition is out of range")
            return self._size_ok(op(a, b))
        if isinstance(node, ast.BoolOp):
            vals = [self.eval(v, env) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Compare):
            left = self.eval(node.left, env)
            for op_node, comp in zip(node.ops, node.comparators):
                right = self.eval(comp, env)
                if not self._CMPOPS[type(op_node)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in self._FUNCS or node.keywords:
                raise ValueError(f"unsupported call {ast.unparse(node)!r}")
            args = [self.eval(a, env) for a in node.args]
            if node.func.id == "range":
                if not all(isinstance(a, int) and not isinstance(a, bool) for a in args):
                    raise ValueError(f"range() needs integers, but got {args!r}")
            result = self._FUNCS[node.func.id](*args)
            if isinstance(result, range):
                self._size_ok(result)
            return result
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            out: list[Any] = []
            self._comprehension(node.elt, node.generators, 0, env, out)
            return out
        raise ValueError(f"unsupported syntax {type(node).__name__}")

    def _comprehension(self, elt: ast.AST, gens: list[ast.comprehension], i: int, env: dict[str, Any],
                       out: list[Any]) -> None:
        if i == len(gens):
            self._tick()
            out.append(self.eval(elt, env))
            return
        gen = gens[i]
        if not isinstance(gen.target, ast.Name) or gen.is_async:
            raise ValueError("only `for name in ...` comprehensions are supported")
        for item in self.eval(gen.iter, env):
            self._tick()
            inner = {**env, gen.target.id: item}
            if all(self.eval(cond, inner) for cond in gen.ifs):
                self._comprehension(elt, gens, i + 1, inner, out)


def _t1_values(ctx: _Ctx, path: _JsonPath, raw: Any) -> list[Any]:
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, str):
        ctx.fail(path, f"expected a list or a string holding a Python list, but got {_show(raw)}")
    try:
        return _ValueListEvaluator().run(raw)
    except SyntaxError as exc:
        raise ctx.error(path, f"cannot read a list of values ({exc.msg}) from {_show(raw)}") from None
    except (ValueError, TypeError, ZeroDivisionError, OverflowError) as exc:
        raise ctx.error(path, f"cannot read a list of values ({exc}) from {_show(raw)}") from None


def _t1_parameter(ctx: _Ctx, path: _JsonPath, tp: Any) -> Parameter:
    if not isinstance(tp, Mapping):
        ctx.fail(path, f"a tuning parameter must be an object, but got {_show(tp)}")
    for key in ("Name", "Values"):
        if key not in tp:
            ctx.fail(path, f"missing required key {key!r}")
    name = tp["Name"]
    values = _t1_values(ctx, path + ("Values",), tp["Values"])
    if not values:
        ctx.fail(path + ("Values",), f"a parameter needs at least one value, but got {_show(tp['Values'])}")
    declared = tp.get("Type")
    kind = _T1_TYPES.get(str(declared).lower()) if declared is not None else None
    if declared is not None and kind is None:
        ctx.fail(path + ("Type",), f"must be one of {sorted(_T1_TYPES)}, but got {_show(declared)}")
    if kind == "int" and not all(_is_integral(v) for v in values):
        bad = next(v for v in values if not _is_integral(v))
        ctx.fail(path + ("Values",), f"Type is int, but the value {_show(bad)} is not an integer")
    if kind == "float" and not all(_is_number(v) for v in values):
        bad = next(v for v in values if not _is_number(v))
        ctx.fail(path + ("Values",), f"Type is float, but the value {_show(bad)} is not a number")
    if kind == "int":
        values = [int(v) for v in values]
    default = tp.get("Default")
    if isinstance(default, list) and len(default) == 1:
        default = default[0]  # some files wrap the default in a list
    if all(_is_number(v) for v in values):
        if len(set(values)) != len(values):
            ctx.fail(path + ("Values",), f"values must be distinct, but got {_show(values)}")
        values = sorted(values)
        log = values[0] > 0 and values[-1] / values[0] >= 16
        return _make_parameter(ctx, path, "ordinal", name, values, log=log, default=default,
                               domain_key="Values", default_key="Default", name_path=path + ("Name",))
    if kind == "str":
        values = [str(v) for v in values]
        default = None if default is None else str(default)
    return _make_parameter(ctx, path, "categorical", name, values, default=default,
                           domain_key="Values", default_key="Default", name_path=path + ("Name",))


def _parse_t1(data: Mapping[str, Any], ctx: _Ctx) -> Scenario:
    ignored = sorted(str(k) for k in data if k not in ("General", "ConfigurationSpace"))
    if ignored:
        logger.debug("%s: ignoring T1 sections %s", ctx.source, ignored)
    general = data.get("General", {})
    if not isinstance(general, Mapping):
        ctx.fail(("General",), f"expected an object, but got {_show(general)}")
    kernel = data.get("KernelSpecification", {})
    name = general.get("BenchmarkName") or (kernel.get("KernelName") if isinstance(kernel, Mapping) else None) \
        or _default_name(ctx.source)
    cs = data["ConfigurationSpace"]
    if not isinstance(cs, Mapping):
        ctx.fail(("ConfigurationSpace",), f"expected an object, but got {_show(cs)}")
    tps = cs.get("TuningParameters")
    if not isinstance(tps, list) or not tps:
        ctx.fail(("ConfigurationSpace", "TuningParameters"), f"expected a non-empty list of parameters, but got {_show(tps)}")
    base = ("ConfigurationSpace", "TuningParameters")
    params = [_t1_parameter(ctx, base + (i,), tp) for i, tp in enumerate(tps)]
    _check_unique_names(ctx, params, [base + (i,) for i in range(len(params))], "Name")
    names = {p.name for p in params}
    conds = cs.get("Conditions", [])
    if not isinstance(conds, list):
        ctx.fail(("ConfigurationSpace", "Conditions"), f"expected a list, but got {_show(conds)}")
    constraints = []
    for j, cond in enumerate(conds):
        cpath = ("ConfigurationSpace", "Conditions", j)
        if isinstance(cond, str):
            text = cond
        elif isinstance(cond, Mapping) and isinstance(cond.get("Expression"), str):
            text = cond["Expression"]
            for k, pname in enumerate(cond.get("Parameters", []) or []):
                if pname not in names:
                    ctx.fail(cpath + ("Parameters", k), f"unknown parameter {_show(pname)}; the space has {sorted(names)}")
            cpath = cpath + ("Expression",)
        else:
            ctx.fail(cpath, f"a condition is an object with an \"Expression\" string, but got {_show(cond)}")
        if not text.strip():
            ctx.fail(cpath, "a constraint expression must not be empty")
        constraints.append((cpath, text))
    space = _build_space(ctx, params, constraints, base)
    try:
        return Scenario(name=str(name), space=space, objectives=(Objective("time"),), source=ctx.source)
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------
_PARSERS: dict[str, Callable[[Mapping[str, Any], _Ctx], Scenario]] = {
    "native": _parse_native, "hypermapper": _parse_hypermapper, "t1": _parse_t1,
}


def detect_format(data: Mapping[str, Any]) -> str | None:
    """``"native"``, ``"hypermapper"`` (HyperMapper 2.0 / BaCO) or ``"t1"`` from the top-level
    keys of a scenario mapping; None if none applies."""
    if not isinstance(data, Mapping):
        return None
    keys = set(data)
    if keys & set(_T1_MARKERS):
        return "t1"
    if keys & set(_HM_MARKERS):
        return "hypermapper"
    if keys & set(NATIVE_KEYS):
        return "native"
    return None


def scenario_from_dict(data: Mapping[str, Any], *, source: str = "<dict>") -> Scenario:
    """Build a :class:`Scenario` from a parsed scenario in any of the three formats.

    ``source`` names the origin in error messages. Paths in the mapping (``journal``, black-box
    files) are kept as written; :func:`load_scenario` resolves them against the file's directory.
    """
    ctx = _Ctx(source)
    if not isinstance(data, Mapping):
        ctx.fail((), f"a scenario must be an object (a mapping of keys to values), but got {_show(data)}")
    data = _plain(data)
    fmt = detect_format(data)
    if fmt is None:
        ctx.fail((), "unknown scenario format: expected bayestune's keys (parameters, objectives, ...), "
                     "HyperMapper/BaCO keys (application_name, optimization_objectives, input_parameters, ...) "
                     f"or T1 keys (General, ConfigurationSpace, ...), but got the keys {sorted(str(k) for k in data)}")
    return _PARSERS[fmt](data, ctx)


def _plain(value: Any) -> Any:
    """Python-built input in JSON's shapes: tuples and arrays as lists, numpy scalars as numbers."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def scenario_to_dict(s: Scenario) -> dict[str, Any]:
    """The scenario in the native format (JSON-ready); :func:`scenario_from_dict` reads it back."""
    out: dict[str, Any] = {"name": s.name, "parameters": [_jsonable(p.to_spec()) for p in s.space.parameters]}
    constraints = [c.expression for c in s.space.constraints]
    if constraints:
        out["constraints"] = constraints
    out["objectives"] = [o.name if o.direction == "minimize" else {"name": o.name, "direction": o.direction}
                         for o in s.objectives]
    out["budget"] = s.budget
    out["initial_design"] = {"method": s.design.method, "size": s.design.size,
                             "include_default": s.design.include_default}
    out["strategy"] = s.strategy
    if s.strategy_options:
        out["strategy_options"] = _jsonable(copy.deepcopy(dict(s.strategy_options)))
    if s.blackbox is not None:
        bb: dict[str, Any] = {s.blackbox.kind: s.blackbox.target}
        if s.blackbox.timeout is not None:
            bb["timeout"] = s.blackbox.timeout
        if s.blackbox.workdir is not None:
            bb["workdir"] = s.blackbox.workdir
        if s.blackbox.options:
            bb["options"] = _jsonable(copy.deepcopy(dict(s.blackbox.options)))
        out["blackbox"] = bb
    if s.seed is not None:
        out["seed"] = s.seed
    if s.journal is not None:
        out["journal"] = s.journal
    if s.feasible_output is not None:
        out["feasible_output"] = s.feasible_output
    if s.output_constraints:
        out["output_constraints"] = list(s.output_constraints)
    return out


# ---- files -------------------------------------------------------------------------------
class _YamlLoader(yaml.SafeLoader):
    """Safe YAML with two fixes: ``1e-3`` is a float (YAML 1.1 needs a dot), and duplicate
    keys are an error instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}",
                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789"))


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _parse_text(text: str, syntax: str, source: str) -> Any:
    if syntax == "json":
        try:
            return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except _DuplicateKey as exc:
            raise ScenarioError(f"{source}: invalid JSON: duplicate key {str(exc)!r} in an object") from None
        except ValueError as exc:
            raise ScenarioError(f"{source}: invalid JSON: {exc}") from None
    try:
        return yaml.load(text, Loader=_YamlLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError(f"{source}: invalid YAML{where}: {problem}") from None


def _source_dir(s: Scenario) -> str:
    """Directory the scenario's relative paths refer to: its file's, else the current one
    (the rule of :func:`bayestune.evaluators.scenario_dir` and the CLI)."""
    if s.source and not s.source.startswith("<"):
        return os.path.dirname(os.path.abspath(s.source))
    return os.getcwd()


def _is_python_file_target(module_part: str) -> bool:
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def _map_paths(s: Scenario, fn: Callable[[str], str]) -> Scenario:
    """Apply ``fn`` to the file paths a scenario holds: journal, replay file, workdir and the
    file of a ``path/to/file.py:function`` black box."""
    journal = fn(s.journal) if s.journal else s.journal
    bb = s.blackbox
    if bb is not None:
        target = bb.target
        if bb.kind == "replay":
            target = fn(target)
        elif bb.kind == "python":
            module_part, sep, func = target.rpartition(":")
            if _is_python_file_target(module_part):
                target = fn(module_part) + sep + func
        bb = replace(bb, target=target, workdir=fn(bb.workdir) if bb.workdir else bb.workdir)
    return replace(s, journal=journal, blackbox=bb)


def _rebase(old_dir: str, new_dir: str) -> Callable[[str], str]:
    """Rewrite a relative path meant from ``old_dir`` so that it means the same from ``new_dir``."""
    def fn(p: str) -> str:
        if os.path.isabs(os.path.expanduser(p)) or os.path.normpath(old_dir) == os.path.normpath(new_dir):
            return p
        try:
            return os.path.relpath(os.path.join(old_dir, p), new_dir).replace(os.sep, "/")
        except ValueError:  # another drive (Windows)
            return os.path.join(old_dir, p)
    return fn


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read a scenario file (``.json``, ``.yaml`` or ``.yml``; other names are sniffed) in any
    of the three formats.

    Relative paths inside it (``journal``, the black box's file, ``workdir``, replay data) are
    kept as written: they mean paths relative to the file's directory, which consumers get
    from ``scenario.source`` (see :func:`bayestune.evaluators.scenario_dir`)."""
    source = os.fspath(path)
    try:
        raw = Path(source).read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{source}: cannot read the scenario file: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{source}: cannot read the scenario file: it is a directory") from None
    except OSError as exc:
        raise ScenarioError(f"{source}: cannot read the scenario file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{source}: the file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise ScenarioError(f"{source}: the file is empty")
    suffix = Path(source).suffix.lower()
    if suffix == ".json":
        syntax = "json"
    elif suffix in (".yaml", ".yml"):
        syntax = "yaml"
    else:
        syntax = "json" if text.lstrip().startswith("{") else "yaml"
    data = _parse_text(text, syntax, source)
    if data is None:
        raise ScenarioError(f"{source}: the file is empty (no YAML document)")
    return scenario_from_dict(data, source=source)


def save_scenario(s: Scenario, path: str | os.PathLike[str]) -> None:
    """Write ``s`` in the native format: YAML for ``.yaml``/``.yml``, JSON otherwise.

    Relative paths are rewritten so that they keep pointing at the same files from the
    destination's directory (they are relative to the scenario's source directory)."""
    dest = os.fspath(path)
    new_dir = os.path.dirname(os.path.abspath(dest))
    data = scenario_to_dict(_map_paths(s, _rebase(_source_dir(s), new_dir)))
    if Path(dest).suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    tmp = dest + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, dest)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ScenarioError(f"{dest}: cannot write the scenario file: {exc.strerror or exc}") from None
