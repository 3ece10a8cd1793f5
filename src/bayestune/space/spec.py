"""A space from its JSON description (the ``parameters`` and ``constraints`` of a native
scenario, what :meth:`Space.to_spec` writes), with errors that name the JSON path.

Every scenario format builds its parameters through :func:`make_parameter` and its space
through :func:`build_space`, so a bad bound or default is reported at the key that holds it,
e.g. ``x.json: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]``. The errors are
:class:`ScenarioError`: a space description is a part of a scenario file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from bayestune.exceptions import ConstraintError, ScenarioError, SpaceError
from bayestune.space.inference import is_number
from bayestune.space.parameter import is_finite_number
from bayestune.space.parameters import Categorical, Integer, Ordinal, Parameter, PerfectTile, Permutation, Real
from bayestune.space.space import Space

__all__ = [
    "DOMAIN_KEYS",
    "JsonPath",
    "SpecContext",
    "build_space",
    "check_unique_names",
    "fmt_path",
    "make_parameter",
    "read_space",
    "show",
    "space_from_spec",
]

JsonPath = tuple  # of str (object keys) and int (array indices)
#: The key holding each parameter type's domain.
DOMAIN_KEYS = {
    "real": "bounds",
    "integer": "bounds",
    "ordinal": "values",
    "categorical": "values",
    "permutation": "n",
    "perfect_tile": "extent",
}


def fmt_path(path: Sequence[str | int]) -> str:
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def show(value: Any, limit: int = 200) -> str:
    """The offending value as it would appear in the file (JSON), shortened if long."""
    try:
        text = json.dumps(value, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SpecContext:
    """Where we are reading from; builds errors that name the file and the JSON path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, path: Sequence[str | int], message: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {fmt_path(path)}: {message}")

    def fail(self, path: Sequence[str | int], message: str) -> NoReturn:
        raise self.error(path, message)


def make_parameter(
    ctx: SpecContext,
    path: JsonPath,
    kind: str,
    name: str,
    domain: Any,
    *,
    log: bool = False,
    metric: str = "spearman",
    prior: Any = None,
    default: Any = None,
    sampling: str | None = None,
    levels: Any = None,
    max_innermost: Any = None,
    domain_key: str,
    prior_key: str = "prior",
    default_key: str = "default",
    name_path: JsonPath | None = None,
) -> Parameter:
    """Construct one parameter in stages (domain, then prior, then default) so that a
    :class:`SpaceError` is reported at the key that caused it."""
    if not isinstance(name, str) or not name.isidentifier():
        ctx.fail(
            name_path if name_path is not None else path,
            f"a parameter name must be a Python identifier, but got {show(name)}",
        )

    def build(prior_: Any, default_: Any) -> Parameter:
        if kind in ("real", "integer"):
            lo, hi = domain
            cls = Real if kind == "real" else Integer
            return cls(name, lo, hi, log=log, default=default_, prior=prior_, sampling=sampling)
        if kind == "ordinal":
            return Ordinal(name, domain, log=log, default=default_, prior=prior_)
        if kind == "categorical":
            return Categorical(name, domain, default=default_, prior=prior_)
        if kind == "permutation":
            return Permutation(name, domain, metric=metric, default=default_)
        if kind == "perfect_tile":
            return PerfectTile(name, domain, levels, max_innermost=max_innermost, default=default_)
        raise AssertionError(kind)

    if kind in ("real", "integer"):
        if not (isinstance(domain, (list, tuple)) and len(domain) == 2 and all(is_number(v) for v in domain)):
            ctx.fail(path + (domain_key,), f"expected [low, high] (two numbers), but got {show(domain)}")
        lo, hi = domain
        if not (is_finite_number(lo) and is_finite_number(hi)):
            ctx.fail(path + (domain_key,), f"bounds must be finite numbers, but got {show(list(domain))}")
        if not lo < hi:
            ctx.fail(path + (domain_key,), f"`low < high` must hold, but got {show(list(domain))}")
        if (log or sampling == "log-uniform") and lo <= 0:
            ctx.fail(path + (domain_key,), f"a log-scale parameter needs `low > 0`, but got {show(list(domain))}")
    if kind == "perfect_tile":
        for key, value in (("levels", levels), ("max_innermost", max_innermost)):
            if (value is not None or key == "levels") and not (is_number(value) and value == int(value) and value >= 1):
                ctx.fail(path + (key,), f"expected an integer >= 1, but got {show(value)}")
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


def check_unique_names(
    ctx: SpecContext, params: Sequence[Parameter], paths: Sequence[JsonPath], name_key: str | None
) -> None:
    first: dict[str, JsonPath] = {}
    for p, path in zip(params, paths):
        if p.name in first:
            where = path + (name_key,) if name_key else path
            ctx.fail(where, f"parameter names must be unique, but {p.name!r} also names {fmt_path(first[p.name])}")
        first[p.name] = path


def build_space(
    ctx: SpecContext, params: list[Parameter], constraints: Sequence[tuple[JsonPath, str]], params_path: JsonPath
) -> Space:
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


def read_space(ctx: SpecContext, params: Any, constraints: Any = ()) -> Space:
    """The space of a ``parameters`` section (a list of named parameters, or a mapping of names
    to parameters) and a ``constraints`` list. Native scenarios pass the JSON Schema first; the
    checks here keep a bare description (a journal's stored space) from failing with a KeyError."""
    # (path of the parameter, its name or None, its spec, path of its name)
    items: list[tuple[tuple[str | int, ...], Any, Any, tuple[str | int, ...]]] = []
    if isinstance(params, Mapping):
        for key, spec in params.items():
            key_path = ("parameters", key)
            if isinstance(spec, Mapping) and "name" in spec and spec["name"] != key:
                ctx.fail(
                    key_path + ("name",),
                    f"the name must match the key {key!r} (or be left out), but got {show(spec['name'])}",
                )
            items.append((key_path, key, spec, key_path))
        name_key = None
    elif isinstance(params, (list, tuple)):
        items = [
            (
                ("parameters", i),
                spec.get("name") if isinstance(spec, Mapping) else None,
                spec,
                ("parameters", i, "name"),
            )
            for i, spec in enumerate(params)
        ]
        name_key = "name"
    else:
        ctx.fail(("parameters",), f"expected a list or an object of parameters, but got {show(params)}")
    built, paths = [], []
    for path, name, spec, name_path in items:
        if not isinstance(spec, Mapping):
            ctx.fail(path, f"a parameter must be an object, but got {show(spec)}")
        kind = spec.get("type")
        if kind not in DOMAIN_KEYS:
            ctx.fail(path + ("type",), f"must be one of {sorted(DOMAIN_KEYS)}, but got {show(kind)}")
        if DOMAIN_KEYS[kind] not in spec:
            ctx.fail(path, f"missing required key {DOMAIN_KEYS[kind]!r}")
        built.append(
            make_parameter(
                ctx,
                path,
                kind,
                name,
                spec[DOMAIN_KEYS[kind]],
                log=spec.get("log", False),
                sampling=spec.get("sampling"),
                metric=spec.get("metric", "spearman"),
                prior=spec.get("prior"),
                default=spec.get("default"),
                levels=spec.get("levels"),
                max_innermost=spec.get("max_innermost"),
                domain_key=DOMAIN_KEYS[kind],
                name_path=name_path,
            )
        )
        paths.append(path)
    check_unique_names(ctx, built, paths, name_key)
    if isinstance(constraints, str) or not all(isinstance(c, str) for c in constraints):
        ctx.fail(("constraints",), f"expected a list of expression strings, but got {show(constraints)}")
    return build_space(ctx, built, [(("constraints", i), text) for i, text in enumerate(constraints)], ("parameters",))


def space_from_spec(
    params: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
    constraints: Sequence[str] = (),
    *,
    source: str = "<spec>",
) -> Space:
    """The :class:`Space` a ``parameters``/``constraints`` description holds (the inverse of
    :meth:`Space.to_spec`). Raises :class:`ScenarioError` naming the path."""
    return read_space(SpecContext(source), params, constraints)
