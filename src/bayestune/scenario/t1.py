"""T1, the community search-space format of the GPU-kernel benchmark collections (``General``,
``ConfigurationSpace``, ``KernelSpecification``, ...): tuning parameters as value lists (or
Python list expressions), conditions as constraint expressions, the objective ``time``.

Each value list becomes a parameter by the one rule of :mod:`bayestune.space.inference`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bayestune.exceptions import ScenarioError
from bayestune.objectives import Objective
from bayestune.scenario._common import default_name
from bayestune.scenario.records import Scenario
from bayestune.space.expressions.value_lists import evaluate_value_list
from bayestune.space.inference import declared_domain, is_integral, is_number
from bayestune.space.parameters import Parameter
from bayestune.space.spec import JsonPath, SpecContext, build_space, check_unique_names, make_parameter, show

logger = logging.getLogger(__name__)

#: Top-level keys that mark the format.
T1_MARKERS = ("ConfigurationSpace",)
_T1_TYPES = {
    "int": "int",
    "integer": "int",
    "float": "float",
    "double": "float",
    "real": "float",
    "string": "str",
    "str": "str",
    "bool": "bool",
    "boolean": "bool",
}


def _t1_values(ctx: SpecContext, path: JsonPath, raw: Any) -> list[Any]:
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, str):
        ctx.fail(path, f"expected a list or a string holding a Python list, but got {show(raw)}")
    try:
        return evaluate_value_list(raw)
    except SyntaxError as exc:
        raise ctx.error(path, f"cannot read a list of values ({exc.msg}) from {show(raw)}") from None
    except (ValueError, TypeError, ZeroDivisionError, OverflowError) as exc:
        raise ctx.error(path, f"cannot read a list of values ({exc}) from {show(raw)}") from None


def _t1_parameter(ctx: SpecContext, path: JsonPath, tp: Any) -> Parameter:
    if not isinstance(tp, Mapping):
        ctx.fail(path, f"a tuning parameter must be an object, but got {show(tp)}")
    for key in ("Name", "Values"):
        if key not in tp:
            ctx.fail(path, f"missing required key {key!r}")
    name = tp["Name"]
    values = _t1_values(ctx, path + ("Values",), tp["Values"])
    if not values:
        ctx.fail(path + ("Values",), f"a parameter needs at least one value, but got {show(tp['Values'])}")
    declared = tp.get("Type")
    kind = _T1_TYPES.get(str(declared).lower()) if declared is not None else None
    if declared is not None and kind is None:
        ctx.fail(path + ("Type",), f"must be one of {sorted(_T1_TYPES)}, but got {show(declared)}")
    if kind == "int" and not all(is_integral(v) for v in values):
        bad = next(v for v in values if not is_integral(v))
        ctx.fail(path + ("Values",), f"Type is int, but the value {show(bad)} is not an integer")
    if kind == "float" and not all(is_number(v) for v in values):
        bad = next(v for v in values if not is_number(v))
        ctx.fail(path + ("Values",), f"Type is float, but the value {show(bad)} is not a number")
    if kind == "int":
        values = [int(v) for v in values]
    default = tp.get("Default")
    if isinstance(default, list) and len(default) == 1:
        default = default[0]  # some files wrap the default in a list
    numeric = all(is_number(v) for v in values)
    if numeric and len(set(values)) != len(values):
        ctx.fail(path + ("Values",), f"values must be distinct, but got {show(values)}")
    if kind == "str" and not numeric:
        values = [str(v) for v in values]
        default = None if default is None else str(default)
    domain_kind, domain, log = declared_domain(values)
    return make_parameter(
        ctx,
        path,
        domain_kind,
        name,
        domain,
        log=log,
        default=default,
        domain_key="Values",
        default_key="Default",
        name_path=path + ("Name",),
    )


def parse_t1(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    ignored = sorted(str(k) for k in data if k not in ("General", "ConfigurationSpace"))
    if ignored:
        logger.debug("%s: ignoring T1 sections %s", ctx.source, ignored)
    general = data.get("General", {})
    if not isinstance(general, Mapping):
        ctx.fail(("General",), f"expected an object, but got {show(general)}")
    kernel = data.get("KernelSpecification", {})
    name = (
        general.get("BenchmarkName")
        or (kernel.get("KernelName") if isinstance(kernel, Mapping) else None)
        or default_name(ctx.source)
    )
    cs = data["ConfigurationSpace"]
    if not isinstance(cs, Mapping):
        ctx.fail(("ConfigurationSpace",), f"expected an object, but got {show(cs)}")
    tps = cs.get("TuningParameters")
    if not isinstance(tps, list) or not tps:
        ctx.fail(
            ("ConfigurationSpace", "TuningParameters"), f"expected a non-empty list of parameters, but got {show(tps)}"
        )
    base = ("ConfigurationSpace", "TuningParameters")
    params = [_t1_parameter(ctx, base + (i,), tp) for i, tp in enumerate(tps)]
    check_unique_names(ctx, params, [base + (i,) for i in range(len(params))], "Name")
    names = {p.name for p in params}
    conds = cs.get("Conditions", [])
    if not isinstance(conds, list):
        ctx.fail(("ConfigurationSpace", "Conditions"), f"expected a list, but got {show(conds)}")
    constraints = []
    for j, cond in enumerate(conds):
        cpath: JsonPath = ("ConfigurationSpace", "Conditions", j)
        if isinstance(cond, str):
            text = cond
        elif isinstance(cond, Mapping) and isinstance(cond.get("Expression"), str):
            text = cond["Expression"]
            for k, pname in enumerate(cond.get("Parameters", []) or []):
                if pname not in names:
                    ctx.fail(
                        cpath + ("Parameters", k), f"unknown parameter {show(pname)}; the space has {sorted(names)}"
                    )
            cpath = cpath + ("Expression",)
        else:
            ctx.fail(cpath, f'a condition is an object with an "Expression" string, but got {show(cond)}')
        if not text.strip():
            ctx.fail(cpath, "a constraint expression must not be empty")
        constraints.append((cpath, text))
    space = build_space(ctx, params, constraints, base)
    try:
        return Scenario(name=str(name), space=space, objectives=(Objective("time"),), source=ctx.source)
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None
