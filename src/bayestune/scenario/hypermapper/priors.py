"""HyperMapper/BaCO priors as the priors our parameters take, with the peers' densities.

* a named shape (``gaussian``, ``decay``, ``exponential``) is HyperMapper 2.0's Beta on the
  parameter's normalised range: Beta(3, 3), Beta(0.8, 1), Beta(1, 0.8); on an ordinal of a
  HyperMapper file, as HyperMapper computes it: the i-th of n sorted values gets the Beta's mass
  on [i/n, (i+1)/n] (by rank, not by value: powers of two are evenly spaced);
* BaCO's ``gaussian`` with ``prior_parameters: [mean, std]`` is a normal density truncated to
  ``[min, max]`` on the value scale (``transform: log`` does not change it: it only log-scales
  the model's input); on an integer or ordinal it gives each value the truncated normal's
  density there;
* a probability list is one probability per value of an ordinal (paired with the values in
  ascending order, as BaCO sorts the values and keeps the list as written), an integer or a
  categorical, and a density at evenly spaced points of ``[min, max]`` on a real, linear in
  between (BaCO's and HyperMapper's ``np.interp``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bayestune.space.inference import is_number
from bayestune.space.priors import BETA_SHAPES, GridDensityPrior, TruncatedNormalPrior, ValuePrior
from bayestune.space.spec import JsonPath, SpecContext, show


def _truncated_normal_masses(points: Sequence[float], mean: float, std: float) -> list[float] | None:
    """The normal density at each of ``points`` (proportional to the truncated one)."""
    z = (np.asarray(points, dtype=float) - mean) / std
    w = np.exp(-0.5 * z * z)
    if not np.isfinite(w).all() or w.sum() <= 0:
        return None
    return [float(x) for x in w / w.sum()]


def _rank_masses(shape: str, n: int) -> ValuePrior:
    """HyperMapper's named prior on an ordinal of ``n`` values: the Beta's mass on each ``1/n`` bin."""
    from scipy.special import betainc  # the regularised incomplete beta is the Beta CDF

    a, b = BETA_SHAPES[shape]
    cdf = betainc(a, b, np.linspace(0.0, 1.0, n + 1))
    return ValuePrior(tuple(float(m) for m in np.diff(cdf)))


def hm_prior(
    ctx: SpecContext, path: JsonPath, spec: Mapping[str, Any], kind: str, domain: Any, peer: str = "baco"
) -> Any:
    """Translate a HyperMapper/BaCO ``prior`` to what our parameter constructors take (the
    module docstring says how each form reads); ``peer`` is whose file it is."""
    prior = spec.get("prior")
    ppath = path + ("prior",)
    if prior is None or prior == "uniform":
        return None
    if kind == "permutation":
        ctx.fail(ppath, f"permutation parameters take no prior, but got {show(prior)}")
    if isinstance(prior, str):
        if prior in ("estimate", "custom_gaussian"):
            ctx.fail(
                ppath,
                f"the {prior!r} prior is not supported; use one of {sorted(BETA_SHAPES)} or a list of probabilities",
            )
        if prior not in BETA_SHAPES:
            ctx.fail(ppath, f"must be one of {sorted(BETA_SHAPES)} or a list of probabilities, but got {show(prior)}")
        if kind == "categorical":
            ctx.fail(ppath, f"a categorical prior is a list of probabilities (one per value), but got {show(prior)}")
        pp = spec.get("prior_parameters")
        if prior == "gaussian" and pp not in (None, []):
            if not (isinstance(pp, list) and len(pp) == 2 and all(is_number(v) for v in pp) and pp[1] > 0):
                ctx.fail(
                    path + ("prior_parameters",), f"a gaussian prior takes [mean, std] with std > 0, but got {show(pp)}"
                )
            mean, std = float(pp[0]), float(pp[1])
            lo, hi = (float(domain[0]), float(domain[-1]))
            if hi <= lo:
                return "gaussian"  # the domain itself is reported as invalid later
            if kind == "real":
                return TruncatedNormalPrior((mean - lo) / (hi - lo), std / (hi - lo))
            points = list(range(int(domain[0]), int(domain[1]) + 1)) if kind == "integer" else list(domain)
            masses = _truncated_normal_masses(points, mean, std)
            if masses is None:
                ctx.fail(
                    path + ("prior_parameters",), f"the gaussian [mean, std] puts no mass on the values, got {show(pp)}"
                )
            return ValuePrior(tuple(masses))
        if kind == "ordinal" and peer == "hypermapper" and prior != "uniform" and len(domain) > 1:
            return _rank_masses(prior, len(domain))
        return prior
    if not isinstance(prior, list) or not prior or not all(is_number(v) and v >= 0 for v in prior) or sum(prior) <= 0:
        ctx.fail(
            ppath,
            f"must be a shape name or a list of non-negative probabilities with a positive sum, but got {show(prior)}",
        )
    if kind == "categorical":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {show(prior)}")
        return list(prior)
    if kind == "ordinal":
        if len(prior) != len(domain):
            ctx.fail(ppath, f"needs one probability per value ({len(domain)}), but got {len(prior)}: {show(prior)}")
        return ValuePrior(tuple(float(v) for v in prior))
    if kind == "integer":
        n = int(domain[1]) - int(domain[0]) + 1
        if len(prior) != n:
            ctx.fail(
                ppath,
                f"needs one probability per integer in [{domain[0]}, {domain[1]}] ({n}), "
                f"but got {len(prior)}: {show(prior)}",
            )
        return ValuePrior(tuple(float(v) for v in prior))
    # real: BaCO and HyperMapper read the list as a density on an even grid over [min, max]
    if len(prior) < 2:
        ctx.fail(ppath, f"a real parameter's probability list needs at least 2 points, but got {show(prior)}")
    return GridDensityPrior(tuple(float(v) for v in prior))
