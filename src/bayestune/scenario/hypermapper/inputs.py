"""The search space of a HyperMapper 2.0 / BaCO file: ``input_parameters`` and the constraints
(each parameter's and the top-level list), BaCO's permutation variables translated into our
grammar, and HyperMapper's rule that several objectives make every prior uniform."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bayestune.scenario.hypermapper.keys import KeyHandling
from bayestune.scenario.hypermapper.parameters import hm_parameter, translate_permutation_names
from bayestune.scenario.hypermapper.peers import Peer
from bayestune.space.parameters import Permutation
from bayestune.space.space import Space
from bayestune.space.spec import SpecContext, build_space, fmt_path, show

logger = logging.getLogger(__name__)


def _uniform_for_several_objectives(
    data: Mapping[str, Any], inputs: Mapping[str, Any], ctx: SpecContext, peer: Peer, handled: list[KeyHandling]
) -> Mapping[str, Any]:
    """HyperMapper's bo.py: with several objectives "priors will be uniform"; BaCO keeps them."""
    objs = data.get("optimization_objectives")
    several = isinstance(objs, list) and len(objs) > 1
    priors = [
        str(k) for k, spec in inputs.items() if isinstance(spec, Mapping) and spec.get("prior", "uniform") != "uniform"
    ]
    if peer.key != "hypermapper" or not several or not priors:
        return inputs
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
    return {
        k: ({f: v for f, v in spec.items() if f != "prior"} if str(k) in priors else spec) for k, spec in inputs.items()
    }


def read_space(
    data: Mapping[str, Any], ctx: SpecContext, peer: Peer, handled: list[KeyHandling]
) -> tuple[Space, Mapping[str, Any]]:
    """The space and the ``input_parameters`` it was built from (priors dropped where the peer drops them)."""
    inputs = data.get("input_parameters")
    if inputs is None:
        ctx.fail((), "missing required key 'input_parameters'")
    if not isinstance(inputs, Mapping) or not inputs:
        ctx.fail(
            ("input_parameters",), f"expected an object mapping parameter names to parameters, but got {show(inputs)}"
        )
    inputs = _uniform_for_several_objectives(data, inputs, ctx, peer, handled)
    params, constraints = [], []
    for key, spec in inputs.items():
        param, cons = hm_parameter(ctx, str(key), spec, peer.key)
        params.append(param)
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
    return build_space(ctx, params, translated, ("input_parameters",)), inputs
