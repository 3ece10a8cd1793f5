"""Real and Integer parameters: a range ``[low, high]``, optionally on a log scale, with an
optional prior on the normalised sampling scale.

Two meanings of "log" are kept apart: ``log`` puts the model's input (and the distances of the
local search) on a log scale; ``sampling`` says how values are drawn, ``"log-uniform"`` (the
default when ``log``) or ``"uniform"``. BaCO's ``transform: log`` is ``log=True,
sampling="uniform"``: it only log-scales the model input. Priors live on the sampling scale."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bayestune.exceptions import SpaceError
from bayestune.space.parameter import Parameter, is_finite_number, is_numeric
from bayestune.space.priors import DensityPrior, NumericPrior, ValuePrior, beta_prior_from_spec

SAMPLINGS = ("uniform", "log-uniform")
#: Standard deviations of a real parameter's local moves on the unit scale: two small, two large.
_REAL_STEP_SCALES = np.array([0.05, 0.05, 0.2, 0.2])


class _NumericParameter(Parameter):
    """Shared machinery of Real and Integer: bounds, log scale, Beta prior on the unit scale."""

    def __init__(
        self, name: str, low: float, high: float, *, log: bool, default: Any, prior: Any, sampling: str | None = None
    ) -> None:
        super().__init__(name)
        if not (is_finite_number(low) and is_finite_number(high)):
            raise SpaceError(f"parameter {name!r}: bounds must be finite numbers, but got low={low!r}, high={high!r}")
        if not low < high:
            raise SpaceError(f"parameter {name!r}: `low < high` must hold, but got (low={low!r}, high={high!r})")
        if not math.isfinite(float(high) - float(low)):
            raise SpaceError(
                f"parameter {name!r}: the span high - low must be a finite number, but got low={low!r}, high={high!r}"
            )
        if log and low <= 0:
            raise SpaceError(f"parameter {name!r}: a log-scale parameter needs `low > 0`, but got low={low!r}")
        self.low, self.high, self.log = low, high, bool(log)
        if sampling is None:
            sampling = "log-uniform" if self.log else "uniform"
        if sampling not in SAMPLINGS:
            raise SpaceError(f"parameter {name!r}: sampling must be one of {list(SAMPLINGS)}, but got {sampling!r}")
        if sampling == "log-uniform" and low <= 0:
            raise SpaceError(f"parameter {name!r}: log-uniform sampling needs `low > 0`, but got low={low!r}")
        self.sampling = sampling
        self.prior: NumericPrior | None = beta_prior_from_spec(prior)
        if self.prior is not None and self.prior.is_uniform:
            self.prior = None
        self._default = self.validate(default) if default is not None else None

    def _t(self, v: np.ndarray) -> np.ndarray:
        return np.log(v) if self.log else v

    def _t_inv(self, t: np.ndarray) -> np.ndarray:
        return np.exp(t) if self.log else t

    def _to_unit_values(self, v: np.ndarray) -> np.ndarray:
        lo, hi = self._t(np.float64(self.low)), self._t(np.float64(self.high))
        return (self._t(np.asarray(v, dtype=float)) - lo) / (hi - lo)

    def _from_unit_values(self, u: np.ndarray) -> np.ndarray:
        lo, hi = self._t(np.float64(self.low)), self._t(np.float64(self.high))
        return self._t_inv(lo + np.clip(u, 0.0, 1.0) * (hi - lo))

    def unit(self, raw: np.ndarray) -> np.ndarray:
        return self._to_unit_values(np.asarray(raw, dtype=float).reshape(-1, 1))

    @property
    def _log_sampling(self) -> bool:
        return self.sampling == "log-uniform"

    def sampling_unit(self, v: np.ndarray) -> np.ndarray:
        """Values on the unit interval of the sampling scale (where a uniform draw is uniform
        and the prior lives)."""
        v = np.asarray(v, dtype=float)
        if self._log_sampling == self.log:
            return self._to_unit_values(v)
        return (v - self.low) / (self.high - self.low)

    def from_sampling_unit(self, u: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`sampling_unit` (clipped to the unit interval)."""
        if self._log_sampling == self.log:
            return self._from_unit_values(u)
        return self.low + np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * (self.high - self.low)

    def columns(self, raw: np.ndarray) -> np.ndarray:
        return np.asarray(raw, dtype=float).reshape(-1)

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        v = np.asarray(raw, dtype=float).reshape(-1)
        return np.isfinite(v) & (v >= self.low) & (v <= self.high)

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        if self.prior is None:
            return super().prior_weight(raw)
        return self._density().pdf_unit(self.sampling_unit(np.asarray(raw, dtype=float).reshape(-1)))

    def _density(self) -> DensityPrior:
        """The prior as a density on the sampling scale; a value prior has none (Integer weighs
        and draws it per value, Real refuses one)."""
        if self.prior is None or isinstance(self.prior, ValuePrior):
            raise SpaceError(f"parameter {self.name!r}: no prior density, but got {self.prior!r}")
        return self.prior

    def to_spec(self) -> dict[str, Any]:
        spec = self._spec_with({"bounds": [self.low, self.high]})
        if self.log and not self._log_sampling:
            spec["sampling"] = self.sampling
        return spec


class Real(_NumericParameter):
    """A continuous value in ``[low, high]``, optionally on a log scale."""

    kind = "real"

    def __init__(
        self,
        name: str,
        low: float,
        high: float,
        *,
        log: bool = False,
        default: float | None = None,
        prior: Any = None,
        sampling: str | None = None,
    ) -> None:
        super().__init__(name, low, high, log=log, default=default, prior=prior, sampling=sampling)
        if isinstance(self.prior, ValuePrior):
            raise SpaceError(f"parameter {name!r}: a real parameter takes a density, not one probability per value")

    @property
    def cardinality(self) -> float:
        return math.inf

    @property
    def default(self) -> float:
        if self._default is not None:
            return self._default
        return float(self._from_unit_values(np.float64(0.5)))

    def validate(self, value: Any) -> float:
        if not is_numeric(value) or not math.isfinite(float(value)):
            raise SpaceError(f"parameter {self.name!r}: expected a finite number, but got {value!r}")
        v = float(value)
        if not self.low <= v <= self.high:
            raise SpaceError(f"parameter {self.name!r}: `{self.low} <= value <= {self.high}` must hold, but got {v!r}")
        return v

    def to_raw(self, value: Any) -> np.ndarray:
        return np.array([float(value)])

    def from_raw(self, raw: np.ndarray) -> float:
        return float(np.asarray(raw).reshape(-1)[0])

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        u = self._density().sample_unit(rng, n) if (use_prior and self.prior) else rng.random(n)
        return self.from_sampling_unit(u).reshape(-1, 1)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.neighbours_many(np.asarray(raw, dtype=float).reshape(-1)[:1], rng)[0]

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Per row, two small and two large Gaussian steps on the unit scale (σ 0.05 and 0.2),
        clipped; drawn row after row, as one row at a time would draw them."""
        v = np.asarray(raw, dtype=float).reshape(-1)
        steps = rng.normal(0.0, _REAL_STEP_SCALES, size=(len(v), len(_REAL_STEP_SCALES)))
        cand = self._from_unit_values(np.clip(self._to_unit_values(v)[:, None] + steps, 0.0, 1.0))
        keep = cand != v[:, None]
        owner = np.broadcast_to(np.arange(len(v))[:, None], cand.shape)[keep]
        return cand[keep].reshape(-1, 1), owner


#: The range of integer bounds: numpy's int64, in which samplers and encodings compute.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _short(value: Any) -> str:
    text = (
        repr(value) if not isinstance(value, int) or abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"
    )
    return text[:60]


class Integer(_NumericParameter):
    """An integer in ``[low, high]`` (inclusive), optionally on a log scale."""

    kind = "integer"

    def __init__(
        self,
        name: str,
        low: int,
        high: int,
        *,
        log: bool = False,
        default: int | None = None,
        prior: Any = None,
        sampling: str | None = None,
    ) -> None:
        for label, v in (("low", low), ("high", high)):
            if not isinstance(v, (int, np.integer)) and (not is_finite_number(v) or float(v) != int(v)):
                raise SpaceError(f"parameter {name!r}: integer bounds required, but got {label}={_short(v)}")
            if not INT64_MIN <= int(v) <= INT64_MAX:  # 1e19 written as a float is checked as well
                raise SpaceError(
                    f"parameter {name!r}: integer bounds must lie in [-2**63, 2**63 - 1] (64-bit "
                    f"integers, what every model and sampler computes with), but got {label}={_short(v)}"
                )
        super().__init__(name, int(low), int(high), log=log, default=default, prior=prior, sampling=sampling)
        if isinstance(self.prior, ValuePrior) and len(self.prior.probabilities) != self.cardinality:
            raise SpaceError(
                f"parameter {name!r}: a value prior needs one probability per integer in "
                f"[{self.low}, {self.high}] ({int(self.cardinality)}), but got "
                f"{len(self.prior.probabilities)}"
            )

    @property
    def cardinality(self) -> float:
        return self.high - self.low + 1

    @property
    def default(self) -> int:
        if self._default is not None:
            return self._default
        return int(np.rint(self._from_unit_values(np.float64(0.5))))

    def validate(self, value: Any) -> int:
        if not is_numeric(value) or not math.isfinite(float(value)) or float(value) != int(value):
            raise SpaceError(f"parameter {self.name!r}: expected an integer, but got {value!r}")
        v = int(value)
        if not self.low <= v <= self.high:
            raise SpaceError(f"parameter {self.name!r}: `{self.low} <= value <= {self.high}` must hold, but got {v!r}")
        return v

    def to_raw(self, value: Any) -> np.ndarray:
        return np.array([float(value)])

    def from_raw(self, raw: np.ndarray) -> int:
        return int(np.rint(np.asarray(raw).reshape(-1)[0]))

    def in_domain(self, raw: np.ndarray) -> np.ndarray:
        v = np.asarray(raw, dtype=float).reshape(-1)
        return super().in_domain(raw) & (v == np.rint(v))

    def grid(self) -> np.ndarray:
        return np.arange(self.low, self.high + 1, dtype=float).reshape(-1, 1)

    def index_of(self, raw: np.ndarray) -> np.ndarray:
        return np.rint(np.asarray(raw, dtype=float).reshape(-1)).astype(np.int64) - self.low

    def raw_of_index(self, index: np.ndarray) -> np.ndarray:
        return (np.asarray(index, dtype=float) + self.low).reshape(-1, 1)

    def prior_weight(self, raw: np.ndarray) -> np.ndarray:
        if isinstance(self.prior, ValuePrior):
            return self.prior.normalized[self.index_of(raw)] * self.cardinality
        return super().prior_weight(raw)

    def _bin_probabilities(self, prior: NumericPrior) -> np.ndarray:
        u = self.sampling_unit(self.grid()[:, 0])
        edges = np.concatenate([[0.0], (u[1:] + u[:-1]) / 2, [1.0]])
        return prior.bin_probabilities(edges)

    def sample(self, rng: np.random.Generator, n: int, use_prior: bool = False) -> np.ndarray:
        if use_prior and self.prior is not None:
            # A value prior holds one probability per integer, so it is drawn per value at any size.
            if self.cardinality <= 1_000_000 or isinstance(self.prior, ValuePrior):
                idx = rng.choice(int(self.cardinality), size=n, p=self._bin_probabilities(self.prior))
                return self.raw_of_index(idx)
            v = np.rint(self.from_sampling_unit(self._density().sample_unit(rng, n)))
        elif self._log_sampling:
            # Log-uniform: each octave equally likely, rounded to the nearest integer.
            lo, hi = math.log(self.low - 0.5 if self.low > 0.5 else self.low), math.log(self.high + 0.5)
            v = np.rint(np.exp(rng.uniform(lo, hi, n)))
        else:
            v = rng.integers(int(self.low), int(self.high) + 1, size=n).astype(float)
        return np.clip(v, self.low, self.high).reshape(-1, 1)

    def neighbours(self, raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.neighbours_many(np.asarray(raw, dtype=float).reshape(-1)[:1], rng)[0]

    def neighbours_many(self, raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the values one below and above and the jumps of 0.1 on the unit scale
        (rounded): distinct, in range, ascending within each row."""
        v = np.asarray(raw, dtype=float).reshape(-1)
        u = self._to_unit_values(v)
        jumps = np.rint(self._from_unit_values(np.column_stack([u - 0.1, u + 0.1])))
        cand = np.sort(np.column_stack([v - 1, v + 1, jumps]), axis=1)
        keep = (cand >= self.low) & (cand <= self.high) & (cand != v[:, None])
        keep[:, 1:] &= cand[:, 1:] != cand[:, :-1]  # each value once
        owner = np.broadcast_to(np.arange(len(v))[:, None], cand.shape)[keep]
        return cand[keep].reshape(-1, 1), owner
