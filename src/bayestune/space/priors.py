"""User beliefs about where good values lie (HyperMapper 2.0 / piBO priors).

A numeric prior is a Beta distribution on the parameter's unit interval (after the
optional log transform); a categorical prior is a probability per value. Priors bias
the initial design and weight the acquisition function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayestune.exceptions import SpaceError

#: Named Beta shapes from HyperMapper 2.0: name -> (alpha, beta).
BETA_SHAPES: dict[str, tuple[float, float]] = {
    "uniform": (1.0, 1.0),
    "gaussian": (3.0, 3.0),
    "decay": (0.5, 1.5),
    "exponential": (1.5, 0.5),
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
    def named(cls, shape: str) -> "BetaPrior":
        if shape not in BETA_SHAPES:
            raise SpaceError(
                f"unknown prior shape {shape!r}; allowed: {sorted(BETA_SHAPES)} or a custom [alpha, beta]"
            )
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


def beta_prior_from_spec(spec: object) -> BetaPrior | None:
    """Accept 'gaussian', [alpha, beta] or {'alpha':.., 'beta':..}; None means no prior."""
    if spec is None:
        return None
    if isinstance(spec, BetaPrior):
        return spec
    if isinstance(spec, str):
        return BetaPrior.named(spec)
    if isinstance(spec, dict) and set(spec) == {"alpha", "beta"}:
        return BetaPrior(float(spec["alpha"]), float(spec["beta"]))
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        return BetaPrior(float(spec[0]), float(spec[1]))
    raise SpaceError(
        f"prior must be one of {sorted(BETA_SHAPES)}, [alpha, beta] or {{'alpha': a, 'beta': b}}, but got {spec!r}"
    )
