"""The Gaussian process's hyperparameter vector θ: which entries are held fixed, where the
random starts of the fit come from, and which polished starts are worth polishing again.

θ = (log ℓ_1, …, log ℓ_P, log σ², log σ_n²): one length-scale per feature block, then the
signal and the noise variance, all in log space.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Every this many fits a strategy's GP hyperparameters get the full multi-start search; in
#: between, a light search (fewer random starts plus the previous optimum) suffices because one
#: new observation rarely moves the optimum far. ``bo``'s surrogate and ``bograph``'s node GPs
#: both follow it.
FULL_FIT_EVERY = 5
#: Above ``screen_max_points``, how many subset optima are polished again on all data
#: (measured on synthetic mixed problems: 1 sometimes lands in a worse basin, 3 rarely does).
FULL_POLISH_STARTS = 3


def fixed_theta(names: Sequence[str], fixed: Mapping[str, Any] | None) -> tuple[np.ndarray, np.ndarray]:
    """θ template with the ``fixed`` entries filled in, and the mask of free entries.

    ``fixed`` is ``{"lengthscales": float | sequence | {name: ℓ}, "outputscale": σ², "noise": σ_n²}``,
    any subset; ``names`` are the length-scales' block names.
    """
    P = len(names)
    theta = np.zeros(P + 2)
    free = np.ones(P + 2, dtype=bool)
    fixed = dict(fixed or {})

    def put(i: int, value: Any, label: str) -> None:
        v = float(value)
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"fixed_hyperparameters: {label} must be a finite positive number, but got {value!r}")
        theta[i], free[i] = math.log(v), False

    if "lengthscales" in fixed:
        ls = fixed["lengthscales"]
        names = list(names)
        if isinstance(ls, Mapping):
            for name, v in ls.items():
                if name not in names:
                    raise ValueError(f"fixed_hyperparameters: unknown length-scale name {name!r}; allowed: {names}")
                put(names.index(name), v, f"lengthscale {name!r}")
        else:
            arr = np.broadcast_to(np.asarray(ls, dtype=float), (P,)) if np.ndim(ls) == 0 else np.asarray(ls, float)
            if arr.shape != (P,):
                raise ValueError(f"fixed_hyperparameters: expected {P} length-scales, but got {len(arr)}")
            for i, v in enumerate(arr):
                put(i, v, f"lengthscale {names[i]!r}")
    if "outputscale" in fixed:
        put(P, fixed["outputscale"], "outputscale")
    if "noise" in fixed:
        put(P + 1, fixed["noise"], "noise")
    return theta, free


def random_thetas(
    rng: np.random.Generator,
    lengthscale_prior: tuple[float, float] | None,
    template: np.ndarray,
    free: np.ndarray,
    bounds: np.ndarray,
    n: int,
) -> np.ndarray:
    """BaCO-style random starts: ℓ half from the prior, half log-uniform on [0.05, 20];
    σ² ~ 10^U(−1, 1); σ_n² ~ 10^U(−5, −2); all clipped to the (log) ``bounds``."""
    P = len(template) - 2
    thetas = np.tile(template, (n, 1))
    log_ls = rng.uniform(math.log(0.05), math.log(20.0), size=(n, P))
    if lengthscale_prior is not None:
        a, b = lengthscale_prior
        from_prior = rng.random(n) < 0.5
        log_ls[from_prior] = np.log(np.maximum(rng.gamma(a, 1.0 / b, size=(int(from_prior.sum()), P)), 1e-300))
    sampled = np.column_stack(
        [
            log_ls,
            rng.uniform(-1.0, 1.0, n) * math.log(10.0),
            rng.uniform(-5.0, -2.0, n) * math.log(10.0),
        ]
    )
    sampled = np.clip(sampled, bounds[:, 0], bounds[:, 1])
    thetas[:, free] = sampled[:, free]
    return thetas


def distinct(thetas: np.ndarray, limit: int = FULL_POLISH_STARTS, tol: float = 0.1) -> list[np.ndarray]:
    """The first ``limit`` rows that differ from every earlier pick by more than ``tol``
    in some log-hyperparameter: starts in one basin would polish to the same optimum."""
    picked: list[np.ndarray] = []
    for theta in thetas:
        if all(np.max(np.abs(theta - p)) > tol for p in picked):
            picked.append(theta)
            if len(picked) == limit:
                break
    return picked
