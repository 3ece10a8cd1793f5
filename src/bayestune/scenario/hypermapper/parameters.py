"""One input parameter of a HyperMapper 2.0 / BaCO file, read into a bayestune parameter, and
BaCO's permutation variables in constraints translated into bayestune's grammar.

Kept apart from :mod:`bayestune.scenario.hypermapper`, which reads the file's other sections.
"""

from __future__ import annotations

import io
import logging
import re
import tokenize
from collections.abc import Mapping
from typing import Any

from bayestune.scenario.hypermapper.keys import unknown_key_message
from bayestune.scenario.hypermapper.priors import hm_prior
from bayestune.scenario.hypermapper.schemas import PARAMETER_KEYS
from bayestune.space.inference import is_integral, is_number
from bayestune.space.parameters import PERMUTATION_METRICS, Parameter
from bayestune.space.spec import JsonPath, SpecContext, fmt_path, make_parameter, show

logger = logging.getLogger(__name__)

HM_PARAMETER_TYPES = ("real", "integer", "ordinal", "categorical", "permutation")
#: BaCO's permutation ``parametrization`` -> our metric (``naive``, a one-hot over all n!
#: permutations, has no distance structure; Hamming is the nearest we have).
HM_PERMUTATION_METRICS = {**{m: m for m in PERMUTATION_METRICS}, "naive": "hamming"}


def hm_parameter(ctx: SpecContext, name: str, spec: Any, peer: str) -> tuple[Parameter, list[tuple[JsonPath, str]]]:
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
        ctx.fail(
            path + ("parameter_type",), f"unknown parameter_type {show(kind)}; allowed: {list(HM_PARAMETER_TYPES)}"
        )
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
            ctx.fail(
                path + ("parametrization",),
                f"must be one of {sorted(HM_PERMUTATION_METRICS)}, but got {show(param_metric)}",
            )
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
            if kind == "integer" and peer == "baco" and values[0] > values[1]:  # BaCO's space.py swaps them
                logger.info(
                    "%s: %s: integer bounds %s read as [min, max], as BaCO swaps them",
                    ctx.source,
                    fmt_path(vpath),
                    values,
                )
                values = [values[1], values[0]]
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
                    logger.warning(
                        "%s: %s: the ordinal's values %s are not sorted: its prior list pairs with "
                        "the sorted values %s, as in BaCO",
                        ctx.source,
                        fmt_path(vpath),
                        values,
                        sorted(values),
                    )
                values = [values[i] for i in order]
        domain = values
    prior = hm_prior(ctx, path, spec, kind, domain, peer)
    # BaCO's transform: log only log-scales the model's input; values are still drawn uniformly.
    sampling = "uniform" if kind in ("real", "integer") else None
    param = make_parameter(
        ctx,
        path,
        kind,
        name,
        domain,
        log=log,
        metric=metric,
        prior=prior,
        default=default,
        sampling=sampling,
        domain_key="values",
        default_key="parameter_default",
    )
    constraints = []
    raw_cons = spec.get("constraints", [])
    if not isinstance(raw_cons, list):
        ctx.fail(path + ("constraints",), f"expected a list of expression strings, but got {show(raw_cons)}")
    for j, text in enumerate(raw_cons):
        if not isinstance(text, str) or not text.strip():
            ctx.fail(
                path + ("constraints", j), f"a constraint must be a non-empty expression string, but got {show(text)}"
            )
        constraints.append((path + ("constraints", j), text))
    return param, constraints


_PERMUTATION_ENTRY = re.compile(r"(?P<base>[A-Za-z_][A-Za-z0-9_]*?)_(?P<at>i?)(?P<k>[0-9]+)")


def translate_permutation_names(text: str, permutations: Mapping[str, int], names: set[str]) -> str:
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
