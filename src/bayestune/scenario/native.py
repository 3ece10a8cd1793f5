"""bayestune's own scenario format, described by the published JSON Schema
``bayestune/schemas/scenario.schema.json`` and ``docs/scenario.md``: read after a schema
check whose first error names the JSON path, and written back by :func:`scenario_to_dict`."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, relevance

from bayestune.exceptions import BayestuneError, ScenarioError
from bayestune.formatting import did_you_mean
from bayestune.jsonable import to_jsonable
from bayestune.measurement_spec import MeasurementSpec
from bayestune.objectives import OutputConstraint
from bayestune.scenario._common import default_name, parse_objectives
from bayestune.scenario.records import (
    BLACKBOX_KINDS,
    DEFAULT_MULTI_OBJECTIVE_STRATEGY,
    BlackBoxSpec,
    DesignSpec,
    Scenario,
    TransferSpec,
)
from bayestune.space.spec import SpecContext, fmt_path, read_space, show

#: Initial-design methods of the native format.
DESIGN_METHODS = ("uniform", "cot", "lhs", "maximin", "feasible_lhs", "prior", "hypermapper", "grid")
#: Top-level keys of the native format (also listed in the JSON Schema).
NATIVE_KEYS = (
    "$schema",
    "name",
    "description",
    "parameters",
    "constraints",
    "objectives",
    "budget",
    "initial_design",
    "strategy",
    "strategy_options",
    "blackbox",
    "seed",
    "journal",
    "feasible_output",
    "output_constraints",
    "time_limit",
    "batch",
    "measurement",
    "transfer",
)


#: Problems a scenario error lists after the most relevant one (the rest are counted).
MORE_ERRORS = 5


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
    # The stubs type these as possibly unset: a validation error from a schema always has them.
    schema: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    wanted: Any = err.validator_value
    if v == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(str(k) for k in value if k not in allowed) if isinstance(value, Mapping) else []
        keys = ", ".join(repr(k) + did_you_mean(k, allowed) for k in extra)
        return f"unknown key{'s' if len(extra) > 1 else ''} {keys}; allowed keys: {allowed}"
    if v == "required":
        missing = [k for k in wanted if isinstance(value, Mapping) and k not in value]
        return f"missing required key {missing[0]!r}" if missing else err.message
    if v == "type":
        expected = wanted
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {'an' if expected[0] in 'aeiou' else 'a'} {expected}, but got {show(value)}"
    if v == "enum":
        return f"must be one of {show(wanted)}, but got {show(value)}"
    if v == "const":
        return f"must be {show(wanted)}, but got {show(value)}"
    if v in ("minItems", "maxItems"):
        rule = "at least" if v == "minItems" else "at most"
        return f"must have {rule} {wanted} item(s), but got {show(value)}"
    if v in ("minProperties", "maxProperties"):
        return f"must have at least {wanted} entr(ies), but got {show(value)}"
    if v == "minLength":
        return f"must be a non-empty string, but got {show(value)}"
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[v]
        return f"`value {op} {wanted}` must hold, but got {show(value)}"
    if v in ("pattern", "oneOf", "anyOf") and schema.get("description"):
        return f"must be {schema['description']}, but got {show(value)}"
    return f"{err.message}"


def _check_native_schema(data: Mapping[str, Any], ctx: SpecContext) -> None:
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
    # every problem at once, the most relevant first: a user fixes them in one go
    rest = [e for e in errors if e is not best and "propertyNames" not in e.absolute_schema_path]
    more = "".join(f"; also {fmt_path(list(e.absolute_path))}: {_schema_message(e)}" for e in rest[:MORE_ERRORS])
    if len(rest) > MORE_ERRORS:  # a hostile file (a YAML alias bomb) can have millions
        more += f" (and {len(rest) - MORE_ERRORS} more problem(s))"
    if "propertyNames" in best.absolute_schema_path:
        # jsonschema reports a bad key at the object holding it; point at the key itself.
        ctx.fail(
            path + [str(best.instance)],
            f"a parameter name must be a Python identifier, but got {show(best.instance)}{more}",
        )
    ctx.fail(path, _schema_message(best) + more)


def parse_native(data: Mapping[str, Any], ctx: SpecContext) -> Scenario:
    _check_native_schema(data, ctx)
    space = read_space(ctx, data["parameters"], data.get("constraints", []))
    objectives = parse_objectives(ctx, data["objectives"], ("objectives",), space)
    d = DesignSpec()
    design_data = data.get("initial_design", {})
    try:
        design = DesignSpec(
            method=design_data.get("method", d.method),
            size=design_data.get("size", d.size),
            include_default=design_data.get("include_default", d.include_default),
        )
    except ScenarioError as exc:
        raise ctx.error(("initial_design", "size"), str(exc)) from None
    blackbox = _parse_blackbox(ctx, data.get("blackbox"))
    feasible = data.get("feasible_output")
    if feasible is not None and feasible in {o.name for o in objectives}:
        ctx.fail(("feasible_output",), f"the feasibility output must not be an objective, but got {show(feasible)}")
    if feasible is not None and feasible in space:
        ctx.fail(("feasible_output",), f"the feasibility output must not be a parameter, but got {show(feasible)}")
    output_constraints = []
    for i, text in enumerate(data.get("output_constraints", [])):
        try:
            c = OutputConstraint(text)
        except ScenarioError as exc:
            raise ctx.error(("output_constraints", i), str(exc)) from None
        clash = sorted(set(c.outputs) & set(space.names))
        if clash:
            ctx.fail(
                ("output_constraints", i),
                f"an output constraint reads measured outputs, not parameters, "
                f"but {show(text)} names parameter(s) {clash}",
            )
        output_constraints.append(text)
    kwargs: dict[str, Any] = {}
    if "strategy" in data:
        kwargs["strategy"] = data["strategy"]
    elif len(objectives) > 1:
        kwargs["strategy"] = DEFAULT_MULTI_OBJECTIVE_STRATEGY
    if "budget" in data:
        kwargs["budget"] = data["budget"]
    if "transfer" in data:
        t = data["transfer"]
        try:
            kwargs["transfer"] = TransferSpec(tuple(t["runs"]), mode=t.get("mode", TransferSpec.mode), top=t.get("top"))
        except ScenarioError as exc:
            raise ctx.error(("transfer",), str(exc)) from None
    if "measurement" in data:
        try:
            kwargs["measurement"] = MeasurementSpec.from_dict(data["measurement"])
        except BayestuneError as exc:
            raise ctx.error(("measurement",), str(exc)) from None
    try:
        return Scenario(
            name=data.get("name", default_name(ctx.source)),
            space=space,
            objectives=objectives,
            design=design,
            strategy_options=copy.deepcopy(dict(data.get("strategy_options", {}))),
            blackbox=blackbox,
            seed=data.get("seed"),
            journal=data.get("journal"),
            feasible_output=feasible,
            output_constraints=tuple(output_constraints),
            time_limit=data.get("time_limit"),
            batch=data.get("batch"),
            source=ctx.source,
            **kwargs,
        )
    except ScenarioError as exc:
        raise ctx.error((), str(exc)) from None


def _parse_blackbox(ctx: SpecContext, bb: Mapping[str, Any] | None) -> BlackBoxSpec | None:
    if bb is None:
        return None
    kinds = [k for k in BLACKBOX_KINDS if k in bb]  # "build" is a stage of its own, read below
    if not kinds and "build" in bb:
        ctx.fail(
            ("blackbox",),
            "a build step needs a run step: add 'command' (e.g. \"{artefact} --size 512\") or 'python' "
            '("module:function", reading config["artefact"])',
        )
    if len(kinds) != 1:
        ctx.fail(
            ("blackbox",),
            f"exactly one of {list(BLACKBOX_KINDS)} must be given, but got {kinds if kinds else 'none'} in {show(bb)}",
        )
    kind = kinds[0]
    target = bb[kind]
    if kind == "python":
        module, _, func = target.rpartition(":")
        if not module.strip() or not all(part.isidentifier() for part in func.strip().split(".")):
            ctx.fail(
                ("blackbox", "python"),
                f'expected "module:function" or "path/to/file.py:function", but got {show(target)}',
            )
    build, build_kind, build_timeout = _parse_build(ctx, bb.get("build"))
    try:
        return BlackBoxSpec(
            kind=kind,
            target=target,
            timeout=bb.get("timeout"),
            workdir=bb.get("workdir"),
            options=copy.deepcopy(dict(bb.get("options", {}))),
            build=build,
            build_kind=build_kind,
            build_timeout=build_timeout,
        )
    except ScenarioError as exc:
        raise ctx.error(("blackbox",), str(exc)) from None


def _parse_build(ctx: SpecContext, build: Any) -> tuple[str | None, str, float | None]:
    """``blackbox.build``: a command template, or ``{"command" | "python": ..., "timeout": s}``."""
    if build is None or isinstance(build, str):
        return build, "command", None
    if not isinstance(build, Mapping):
        ctx.fail(("blackbox", "build"), f"expected a command template or an object, but got {show(build)}")
    kinds = [k for k in ("command", "python") if k in build]
    unknown = sorted(set(build) - {"command", "python", "timeout"})
    if len(kinds) != 1 or unknown:
        ctx.fail(
            ("blackbox", "build"),
            f"expected exactly one of 'command' or 'python' and an optional 'timeout', but got {show(build)}",
        )
    return build[kinds[0]], kinds[0], build.get("timeout")


def scenario_to_dict(s: Scenario) -> dict[str, Any]:
    """The scenario in the native format (JSON-ready); :func:`scenario_from_dict` reads it back."""
    out: dict[str, Any] = {"name": s.name, "parameters": [to_jsonable(p.to_spec()) for p in s.space.parameters]}
    constraints = [c.expression for c in s.space.constraints]
    if constraints:
        out["constraints"] = constraints
    out["objectives"] = [
        o.name if o.direction == "minimize" else {"name": o.name, "direction": o.direction} for o in s.objectives
    ]
    out["budget"] = s.budget
    out["initial_design"] = {
        "method": s.design.method,
        "size": s.design.size,
        "include_default": s.design.include_default,
    }
    out["strategy"] = s.strategy
    if s.strategy_options:
        out["strategy_options"] = to_jsonable(copy.deepcopy(dict(s.strategy_options)))
    if s.blackbox is not None:
        bb: dict[str, Any] = {s.blackbox.kind: s.blackbox.target}
        if s.blackbox.timeout is not None:
            bb["timeout"] = s.blackbox.timeout
        if s.blackbox.workdir is not None:
            bb["workdir"] = s.blackbox.workdir
        if s.blackbox.options:
            bb["options"] = to_jsonable(copy.deepcopy(dict(s.blackbox.options)))
        if s.blackbox.build is not None:
            build: dict[str, Any] = {s.blackbox.build_kind: s.blackbox.build}
            if s.blackbox.build_timeout is not None:
                build["timeout"] = s.blackbox.build_timeout
            bb["build"] = build
        out["blackbox"] = bb
    if s.seed is not None:
        out["seed"] = s.seed
    if s.journal is not None:
        out["journal"] = s.journal
    if s.feasible_output is not None:
        out["feasible_output"] = s.feasible_output
    if s.output_constraints:
        out["output_constraints"] = list(s.output_constraints)
    if s.time_limit is not None:
        out["time_limit"] = s.time_limit
    if s.batch is not None:
        out["batch"] = s.batch
    if s.measurement is not None:
        out["measurement"] = to_jsonable(s.measurement.to_dict())
    if s.transfer is not None:
        t = s.transfer
        if not all(isinstance(r, str) for r in t.runs):
            raise ScenarioError("a scenario file can name prior runs by path only, not loaded PriorRun records")
        out["transfer"] = {"runs": list(t.runs), "mode": t.mode, **({"top": t.top} if t.top is not None else {})}
    return out
