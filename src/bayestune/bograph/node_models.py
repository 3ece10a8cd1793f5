"""One model per non-parameter node, on that node's parents only (BoGraph §3.2).

Each node predicts its own value from its parents' values: a GP (the project's
:class:`~bayestune.models.gp.GaussianProcess`) by default, the expert's formula for a
deterministic node, or the expert's own model. No model ever faces more inputs than its
node's in-degree, which is how the DAG beats the curse of dimensionality.

A model answers ``sample(parents, z)``: the node's value given the parents' values and a
standard-normal draw ``z`` (the Monte-Carlo acquisition shares ``z`` across candidates). Parent
values are arrays of any shape, broadcast together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bayestune.bograph.dag import Formula
from bayestune.exceptions import BayestuneError
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock

#: Hyperparameter boxes in standardised output units (as the ``bo`` strategy's).
NOISE_BOUNDS = (1e-6, 0.25)
OUTPUTSCALE_BOUNDS = (0.05, 20.0)


@runtime_checkable
class NodeModel(Protocol):
    """A custom node model (the expert API): learns a node from its parents' values."""

    def fit(self, parents: Mapping[str, np.ndarray], y: np.ndarray) -> Any: ...

    def predict(self, parents: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of the node, in its own units."""
        ...


class _MetricScaling:
    """A metric parent's values mapped to about [0, 1] (logged first when positive and wide), so
    the GP's length-scale prior, set for unit inputs, fits metric inputs too."""

    def __init__(self, values: np.ndarray) -> None:
        v = np.asarray(values, dtype=float)
        self.log = bool(np.all(v > 0) and v.max() >= 2.0 * v.min())
        t = np.log(v) if self.log else v
        self.low, span = float(t.min()), float(t.max() - t.min())
        self.span = span if span > 1e-12 else 1.0

    def __call__(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        t = np.log(np.maximum(v, 1e-300)) if self.log else v
        return (t - self.low) / self.span


class GPNode:
    """A GP of a node on its parents: parameters through their encoded features, metrics scaled."""

    def __init__(
        self,
        node: str,
        parents: Sequence[str],
        parameter_blocks: Mapping[str, FeatureBlock],
        *,
        log_transform: bool | str = "auto",
        seed: int = 0,
        light: bool = False,
    ) -> None:
        self.node, self.parents = node, list(parents)
        self.parameter_blocks = {p: parameter_blocks[p] for p in self.parents if p in parameter_blocks}
        self.log_transform, self.seed, self.light = log_transform, seed, light
        blocks: list[FeatureBlock] = []
        start = 0
        for p in self.parents:
            src = self.parameter_blocks.get(p)
            if src is not None:
                blocks.append(FeatureBlock(p, src.kind, start, src.width, src.metric))
                start += src.width
            else:
                blocks.append(FeatureBlock(p, "numeric", start, 1, "euclidean"))
                start += 1
        self.blocks = blocks
        self.width = start

    def features(self, parents: Mapping[str, np.ndarray]) -> tuple[np.ndarray, tuple[int, ...]]:
        """The GP inputs of broadcast parent arrays (parameters: (..., width) features)."""
        shapes = []
        for p in self.parents:
            v = np.asarray(parents[p])
            shapes.append(v.shape[:-1] if p in self.parameter_blocks else v.shape)
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        columns = []
        for p in self.parents:
            v = np.asarray(parents[p], dtype=float)
            if p in self.parameter_blocks:
                columns.append(np.broadcast_to(v, shape + v.shape[-1:]).reshape(-1, v.shape[-1]))
            else:
                columns.append(self.scaling_[p](np.broadcast_to(v, shape)).reshape(-1, 1))
        return np.concatenate(columns, axis=1), shape

    def fit(self, parents: Mapping[str, np.ndarray], y: np.ndarray, warm: np.ndarray | None = None) -> GPNode:
        self.scaling_ = {p: _MetricScaling(parents[p]) for p in self.parents if p not in self.parameter_blocks}
        F, _ = self.features(parents)
        gp = GaussianProcess(
            self.blocks,
            log_transform_y=self.log_transform,
            seed=self.seed,
            noise_bounds=NOISE_BOUNDS,
            outputscale_bounds=OUTPUTSCALE_BOUNDS,
            n_restarts_sample=24 if self.light else 100,
            max_iter=60 if self.light else 100,
            blas_threads=None,
        )
        warm = warm if warm is not None and len(warm) == len(self.blocks) + 2 else None
        self.gp_ = gp.fit(F, np.asarray(y, dtype=float), warm_start=warm)
        self.F_, self.y_ = F, np.asarray(y, dtype=float)
        return self

    def sample(self, parents: Mapping[str, np.ndarray], z: np.ndarray | float) -> np.ndarray:
        F, shape = self.features(parents)
        mu, sd = self.gp_.predict_latent(F)
        latent = mu.reshape(shape) + sd.reshape(shape) * z
        t = latent * self.gp_.y_std_ + self.gp_.y_mean_
        return np.exp(t) if self.gp_.log_y_ else t

    def fit_quality(self) -> float:
        """Leave-one-out R² in the GP's latent units (hyperparameters kept): how well the
        parents explain the node."""
        F, y = self.F_, self.gp_.y_to_latent(self.y_)
        n = len(y)
        if n < 4:
            return float("nan")
        fixed = self.gp_.fitted_hyperparameters()
        errors = np.empty(n)
        for i in range(n):
            keep = np.arange(n) != i
            gp = GaussianProcess(
                self.blocks, log_transform_y=False, fixed_hyperparameters=fixed, blas_threads=None
            ).fit(F[keep], y[keep])
            errors[i] = y[i] - float(gp.predict(F[i : i + 1])[0])
        return 1.0 - float(np.mean(errors**2) / max(np.var(y), 1e-12))

    @property
    def hyperparameters(self) -> np.ndarray:
        return self.gp_.hyperparameters_


class FormulaNode:
    """A deterministic node: the expert's formula of its parents, exact (no noise, no fit)."""

    def __init__(self, formula: Formula) -> None:
        self.formula = formula
        self.parents = list(formula.inputs)

    def fit(self, parents: Mapping[str, np.ndarray], y: np.ndarray) -> FormulaNode:
        self.y_, self.pred_ = np.asarray(y, dtype=float), self.formula(parents)
        return self

    def sample(self, parents: Mapping[str, np.ndarray], z: np.ndarray | float) -> np.ndarray:
        return self.formula(parents)

    def fit_quality(self) -> float:
        resid = self.y_ - self.pred_
        return 1.0 - float(np.mean(resid**2) / max(np.var(self.y_), 1e-300))


class CustomNode:
    """The expert's own model of a node, sampled as mean + std·z."""

    def __init__(self, node: str, parents: Sequence[str], model: Any) -> None:
        if not isinstance(model, NodeModel):
            raise BayestuneError(
                f"custom model of node {node!r} needs fit(parents, y) and predict(parents) -> "
                f"(mean, std), but got {type(model).__name__}"
            )
        self.node, self.parents, self.model = node, list(parents), model

    def fit(self, parents: Mapping[str, np.ndarray], y: np.ndarray) -> CustomNode:
        self.model.fit(dict(parents), np.asarray(y, dtype=float))
        self.y_ = np.asarray(y, dtype=float)
        self.pred_ = np.asarray(self.model.predict(dict(parents))[0], dtype=float)
        return self

    def sample(self, parents: Mapping[str, np.ndarray], z: np.ndarray | float) -> np.ndarray:
        mean, std = self.model.predict(dict(parents))
        return np.asarray(mean, dtype=float) + np.asarray(std, dtype=float) * z

    def fit_quality(self) -> float:
        resid = self.y_ - self.pred_
        return 1.0 - float(np.mean(resid**2) / max(np.var(self.y_), 1e-300))


class MarginalNode:
    """A metric with no parents: its observed spread, independent of the configuration."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.parents: list[str] = []

    def fit(self, parents: Mapping[str, np.ndarray], y: np.ndarray) -> MarginalNode:
        self.mean_, self.std_ = float(np.mean(y)), float(np.std(y))
        return self

    def sample(self, parents: Mapping[str, np.ndarray], z: np.ndarray | float) -> np.ndarray:
        return self.mean_ + self.std_ * np.asarray(z, dtype=float)

    def fit_quality(self) -> float:
        return 0.0
