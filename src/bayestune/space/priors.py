"""User beliefs about where good values lie (HyperMapper 2.0 / BaCO / piBO priors).

A numeric prior lives on the parameter's unit interval (the scale it is sampled on: after the
log transform of a log-uniform parameter): a Beta distribution (HyperMapper 2.0's named
shapes), a truncated normal (BaCO's ``gaussian`` with ``[mean, std]``), a piecewise-linear
density on an even grid (BaCO's probability list for a real), or one probability per value of
a discrete parameter (BaCO's list for an ordinal or integer). A categorical prior is a
probability per value. Priors weight the acquisition function (piBO) and, on request, the
initial design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayestune.exceptions import SpaceError

#: Named Beta shapes of HyperMapper 2.0 (``Parameter.densities_alphas/betas`` in its
#: ``space.py``): name -> (alpha, beta).
BETA_SHAPES: dict[str, tuple[float, float]] = {
    "uniform": (1.0, 1.0),
    "gaussian": (3.0, 3.0),
    "decay": (0.8, 1.0),
    "exponential": (1.0, 0.8),
}


@dataclass(frozen=True)
class BetaPrior:
    """Beta(alpha, beta) density over the unit interval of a numeric parameter."""

    alpha: float
    beta: float
    shape: str = "custom"

    def __post_init__(self) -> None:
        for label, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not (np.isfinite(value) and value > 0):
                raise SpaceError(f"Beta prior: `{label} > 0` must hold, but got {label}={value!r}")

    @classmethod
    def named(cls, shape: str) -> BetaPrior:
        if shape not in BETA_SHAPES:
            raise SpaceError(f"unknown prior shape {shape!r}; allowed: {sorted(BETA_SHAPES)} or a custom [alpha, beta]")
        a, b = BETA_SHAPES[shape]
        return cls(a, b, shape)

    @property
    def is_uniform(self) -> bool:
        return self.alpha == 1.0 and self.beta == 1.0

    def sample_unit(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.beta(self.alpha, self.beta, size=n)

    def pdf_unit(self, u: np.ndarray) -> np.ndarray:
        # Clip away from 0/1 so decay/exponential shapes stay finite at the bounds.
        from scipy.special import betaln

        u = np.clip(np.asarray(u, dtype=float), 1e-6, 1 - 1e-6)
        log_pdf = (self.alpha - 1) * np.log(u) + (self.beta - 1) * np.log1p(-u) - betaln(self.alpha, self.beta)
        return np.exp(log_pdf)

    def bin_probabilities(self, edges: np.ndarray) -> np.ndarray:
        """Probability mass of each bin [edges[i], edges[i+1]] on the unit interval."""
        from scipy.special import betainc  # the regularised incomplete beta is the Beta CDF

        cdf = betainc(self.alpha, self.beta, np.clip(edges, 0.0, 1.0))
        mass = np.diff(cdf)
        total = mass.sum()
        if total <= 0:
            return np.full(len(mass), 1.0 / len(mass))
        return mass / total

    def to_spec(self) -> str | list[float]:
        return self.shape if self.shape != "custom" else [self.alpha, self.beta]


@dataclass(frozen=True)
class TruncatedNormalPrior:
    """A normal density N(mean, std) truncated to the unit interval: BaCO's ``gaussian`` prior
    ``[mean, std]`` of a real parameter, rescaled from ``[min, max]`` to ``[0, 1]``."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        if not (np.isfinite(self.mean) and np.isfinite(self.std) and self.std > 0):
            raise SpaceError(
                f"truncated normal prior: `std > 0` and finite values must hold, "
                f"but got mean={self.mean!r}, std={self.std!r}"
            )

    is_uniform = False

    def _bounds(self) -> tuple[float, float]:
        return (0.0 - self.mean) / self.std, (1.0 - self.mean) / self.std

    def sample_unit(self, rng: np.random.Generator, n: int) -> np.ndarray:
        from scipy.stats import truncnorm

        a, b = self._bounds()
        return np.clip(truncnorm.rvs(a, b, loc=self.mean, scale=self.std, size=n, random_state=rng), 0.0, 1.0)

    def pdf_unit(self, u: np.ndarray) -> np.ndarray:
        from scipy.stats import truncnorm

        a, b = self._bounds()
        return truncnorm.pdf(np.clip(np.asarray(u, dtype=float), 0.0, 1.0), a, b, loc=self.mean, scale=self.std)

    def bin_probabilities(self, edges: np.ndarray) -> np.ndarray:
        from scipy.stats import truncnorm

        a, b = self._bounds()
        mass = np.diff(truncnorm.cdf(np.clip(edges, 0.0, 1.0), a, b, loc=self.mean, scale=self.std))
        total = mass.sum()
        return mass / total if total > 0 else np.full(len(mass), 1.0 / len(mass))

    def to_spec(self) -> dict[str, float]:
        return {"mean": self.mean, "std": self.std}


@dataclass(frozen=True)
class GridDensityPrior:
    """A density given at evenly spaced points of the unit interval, linear in between: BaCO's
    and HyperMapper's probability list on a real parameter (``np.interp`` over ``[min, max]``)."""

    density: tuple[float, ...]

    def __post_init__(self) -> None:
        w = np.asarray(self.density, dtype=float)
        if w.ndim != 1 or len(w) < 2 or np.any(~np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise SpaceError(
                f"grid density prior: at least two non-negative numbers with a positive sum "
                f"are needed, but got {list(self.density)!r}"
            )

    @property
    def is_uniform(self) -> bool:
        return bool(np.allclose(self.density, self.density[0]))

    @property
    def _knots(self) -> np.ndarray:
        return np.linspace(0.0, 1.0, len(self.density))

    @property
    def _area(self) -> float:
        w = np.asarray(self.density, dtype=float)
        return float(((w[1:] + w[:-1]) / 2).sum() / (len(w) - 1))

    def pdf_unit(self, u: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(u, dtype=float), self._knots, np.asarray(self.density, dtype=float)) / self._area

    def cdf_unit(self, u: np.ndarray) -> np.ndarray:
        """Exact CDF of the piecewise-linear density."""
        x = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        knots, w = self._knots, np.asarray(self.density, dtype=float) / self._area
        h = knots[1] - knots[0]
        seg_area = (w[1:] + w[:-1]) / 2 * h
        cum = np.concatenate([[0.0], np.cumsum(seg_area)])
        i = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, len(w) - 2)
        t = x - knots[i]
        slope = (w[i + 1] - w[i]) / h
        return np.minimum(cum[i] + w[i] * t + slope * t * t / 2, 1.0)

    def sample_unit(self, rng: np.random.Generator, n: int) -> np.ndarray:
        grid = np.linspace(0.0, 1.0, 4097)
        return np.interp(rng.random(n), self.cdf_unit(grid), grid)

    def bin_probabilities(self, edges: np.ndarray) -> np.ndarray:
        mass = np.diff(self.cdf_unit(edges))
        total = mass.sum()
        return mass / total if total > 0 else np.full(len(mass), 1.0 / len(mass))

    def to_spec(self) -> dict[str, list[float]]:
        return {"density": list(self.density)}


@dataclass(frozen=True)
class ValuePrior:
    """One probability per value of a discrete numeric parameter (ordinal values in sorted
    order, or every integer from low to high): BaCO's probability list on an ordinal or integer."""

    probabilities: tuple[float, ...]

    def __post_init__(self) -> None:
        p = np.asarray(self.probabilities, dtype=float)
        if p.ndim != 1 or len(p) == 0 or np.any(~np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
            raise SpaceError(
                f"value prior: probabilities must be non-negative numbers with a positive sum, "
                f"but got {list(self.probabilities)!r}"
            )

    @property
    def is_uniform(self) -> bool:
        return bool(np.allclose(self.probabilities, self.probabilities[0]))

    @property
    def normalized(self) -> np.ndarray:
        p = np.asarray(self.probabilities, dtype=float)
        return p / p.sum()

    def bin_probabilities(self, edges: np.ndarray) -> np.ndarray:
        if len(edges) - 1 != len(self.probabilities):
            raise SpaceError(f"value prior: {len(self.probabilities)} probabilities for {len(edges) - 1} values")
        return self.normalized

    def to_spec(self) -> dict[str, list[float]]:
        return {"probabilities": list(self.probabilities)}


#: The priors with a density on the unit interval (they can be drawn from directly).
DensityPrior = BetaPrior | TruncatedNormalPrior | GridDensityPrior
#: The priors a Real, Integer or Ordinal parameter takes.
NumericPrior = DensityPrior | ValuePrior


@dataclass(frozen=True)
class CategoricalPrior:
    """A probability for each value of a categorical parameter, in value order."""

    probabilities: tuple[float, ...]

    def __post_init__(self) -> None:
        p = np.asarray(self.probabilities, dtype=float)
        if p.ndim != 1 or len(p) == 0 or np.any(~np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
            raise SpaceError(
                f"categorical prior: probabilities must be non-negative numbers with a positive sum, "
                f"but got {list(self.probabilities)!r}"
            )

    @property
    def normalized(self) -> np.ndarray:
        p = np.asarray(self.probabilities, dtype=float)
        return p / p.sum()

    def to_spec(self) -> list[float]:
        return list(self.probabilities)


def beta_prior_from_spec(spec: object) -> NumericPrior | None:
    """A numeric prior from its spec: a shape name, ``[alpha, beta]`` or ``{"alpha", "beta"}``
    (Beta); ``{"mean", "std"}`` (truncated normal on the unit interval); ``{"density": [...]}``
    (piecewise-linear density); ``{"probabilities": [...]}`` (one per value). None means no prior."""
    if spec is None:
        return None
    if isinstance(spec, (BetaPrior, TruncatedNormalPrior, GridDensityPrior, ValuePrior)):
        return spec
    if isinstance(spec, str):
        return BetaPrior.named(spec)
    if isinstance(spec, dict) and set(spec) == {"alpha", "beta"}:
        return BetaPrior(float(spec["alpha"]), float(spec["beta"]))
    if isinstance(spec, dict) and set(spec) == {"mean", "std"}:
        return TruncatedNormalPrior(float(spec["mean"]), float(spec["std"]))
    if isinstance(spec, dict) and set(spec) == {"density"} and isinstance(spec["density"], (list, tuple)):
        return GridDensityPrior(tuple(float(x) for x in spec["density"]))
    if isinstance(spec, dict) and set(spec) == {"probabilities"} and isinstance(spec["probabilities"], (list, tuple)):
        return ValuePrior(tuple(float(x) for x in spec["probabilities"]))
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        return BetaPrior(float(spec[0]), float(spec[1]))
    raise SpaceError(
        f"prior must be one of {sorted(BETA_SHAPES)}, [alpha, beta], {{'alpha': a, 'beta': b}}, "
        f"{{'mean': m, 'std': s}}, {{'density': [...]}} or {{'probabilities': [...]}}, but got {spec!r}"
    )
