"""HyperMapper/BaCO priors as the Beta priors our parameters take.

BaCO states a prior as a named shape, as ``gaussian`` with ``[mean, std]``, or as one
probability per value (a density on an even grid for a real parameter); each becomes the
moment-matched Beta on the parameter's (log-)normalised scale. Categorical probability lists
are kept as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bayestune.space.inference import is_number
from bayestune.space.priors import BETA_SHAPES
from bayestune.space.spec import JsonPath, SpecContext, show


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


def hm_prior(ctx: SpecContext, path: JsonPath, spec: Mapping[str, Any], kind: str, domain: Any, log: bool) -> Any:
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
        ctx.fail(ppath, f"permutation parameters take no prior, but got {show(prior)}")
    if isinstance(prior, str):
        if prior in ("estimate", "custom_gaussian"):
            ctx.fail(ppath, f"the {prior!r} prior is not supported; use one of {sorted(BETA_SHAPES)} "
                            f"or a list of probabilities")
        if prior not in BETA_SHAPES:
            ctx.fail(ppath, f"must be one of {sorted(BETA_SHAPES)} or a list of probabilities, but got {show(prior)}")
        if kind == "categorical":
            ctx.fail(ppath, f"a categorical prior is a list of probabilities (one per value), but got {show(prior)}")
        pp = spec.get("prior_parameters")
        if prior == "gaussian" and pp not in (None, []):
            if not (isinstance(pp, list) and len(pp) == 2 and all(is_number(v) for v in pp) and pp[1] > 0):
                ctx.fail(path + ("prior_parameters",), f"a gaussian prior takes [mean, std] with std > 0, but got {show(pp)}")
            mean, std = float(pp[0]), float(pp[1])
            lo, hi = (float(domain[0]), float(domain[-1]))
            if hi <= lo or (log and lo <= 0):
                return "gaussian"  # the domain itself is reported as invalid later
            if log:
                if mean <= 0:
                    ctx.fail(path + ("prior_parameters",), f"a log-scale parameter needs `mean > 0`, but got {show(pp)}")
                mu = (math.log(mean) - math.log(lo)) / (math.log(hi) - math.log(lo))
                sd = (std / mean) / (math.log(hi) - math.log(lo))
            else:
                mu, sd = (mean - lo) / (hi - lo), std / (hi - lo)
            return _beta_from_moments(mu, sd * sd)
        return prior
    if not isinstance(prior, list) or not prior or not all(is_number(v) and v >= 0 for v in prior) or sum(prior) <= 0:
        ctx.fail(ppath, f"must be a shape name or a list of non-negative probabilities with a positive sum, but got {show(prior)}")
    if kind == "categorical":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {show(prior)}")
        return list(prior)
    if kind == "ordinal":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {show(prior)}")
        return _beta_from_masses(_unit_positions(domain, log), prior)
    if kind == "integer":
        n = int(domain[1]) - int(domain[0]) + 1
        if len(prior) != n:
            ctx.fail(ppath, f"needs one probability per integer in [{domain[0]}, {domain[1]}] ({n}), "
                            f"but got {len(prior)}: {show(prior)}")
        return _beta_from_masses(_unit_positions(list(range(int(domain[0]), int(domain[1]) + 1)), log), prior)
    # real: BaCO reads the list as a density on an even grid over [min, max]
    if len(prior) < 2:
        ctx.fail(ppath, f"a real parameter's probability list needs at least 2 points, but got {show(prior)}")
    return _beta_from_density(prior)
