"""The target's posterior sampled through the DAG, for Monte-Carlo EI (BoGraph §3.3, Algorithm 2).

The posterior of the target through a DAG of models has no closed form, so it is sampled: in
topological order every node draws its value given its parents' draws. The standard-normal
draws come from one scrambled Sobol sequence, fixed per suggestion and shared by every
candidate (quasi-MC with common random numbers), so two candidates are compared on the same
scenarios and the score is a smooth, deterministic function for the acquisition search.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import norm, qmc

from bayestune.bograph.node_models import GPNode


class DagPosterior:
    """Fitted node models, in topological order, of the nodes the target depends on.

    ``models`` maps each modelled node to its model (with ``parents`` and ``sample``);
    parameter values enter GP nodes as encoded features and the other models as raw values.
    """

    def __init__(self, order: Sequence[str], models: Mapping[str, Any], target: str) -> None:
        self.order, self.models, self.target = list(order), dict(models), target

    def sample(self, features: Mapping[str, np.ndarray], raw: Mapping[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
        """Target draws (S, m) for m candidates: ``features[p]`` (m, width) and ``raw[p]`` (m,) per
        parameter, ``Z`` (S, len(order)) standard-normal draws."""
        m = len(next(iter(raw.values())))
        gp_values: dict[str, np.ndarray] = {p: np.asarray(f)[None, :, :] for p, f in features.items()}
        raw_values: dict[str, np.ndarray] = {p: np.asarray(v)[None, :] for p, v in raw.items()}
        for k, node in enumerate(self.order):
            model = self.models[node]
            source = gp_values if isinstance(model, GPNode) else raw_values
            draw = np.asarray(model.sample({p: source[p] for p in model.parents}, Z[:, k][:, None]), dtype=float)
            draw = np.broadcast_to(draw, (Z.shape[0], m))
            gp_values[node] = raw_values[node] = draw
        return raw_values[self.target]


def normal_draws(n_samples: int, n_nodes: int, seed: int) -> np.ndarray:
    """(n_samples, n_nodes) quasi-random standard-normal draws (scrambled Sobol)."""
    m = max(0, int(np.ceil(np.log2(max(n_samples, 1)))))
    U = qmc.Sobol(d=max(n_nodes, 1), scramble=True, seed=seed).random_base2(m)[:n_samples]
    return norm.ppf(np.clip(U, 1e-9, 1 - 1e-9))


class TargetScale:
    """The units improvement is measured in: the target signed to be minimised, logged when
    every observed value is positive (runtimes, energy, EDP span orders of magnitude)."""

    def __init__(self, observed: np.ndarray, *, minimize: bool, log: bool) -> None:
        observed = np.asarray(observed, dtype=float)
        self.sign = 1.0 if minimize else -1.0
        self.log = bool(log and np.all(observed > 0))

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        if self.log:
            return self.sign * np.log(np.maximum(y, 1e-300))
        return self.sign * y


class GraphPosterior:
    """A fitted graph as a sampling posterior (:class:`bayestune.models.base.SamplingPosterior`):
    the target's draws through the DAG at raw rows, in the graph's minimised units."""

    def __init__(self, graph: Any, parameter_data: Callable[[np.ndarray], tuple[dict, dict]]) -> None:
        self.graph, self.parameter_data = graph, parameter_data
        self.best = float(graph.best)

    def base_samples(self, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        return normal_draws(n_samples, len(self.graph.posterior.order), int(rng.integers(2**31)))

    def rsample(self, X: np.ndarray, base_samples: np.ndarray) -> np.ndarray:
        features, raw = self.parameter_data(X)
        return self.graph.scale(self.graph.posterior.sample(features, raw, base_samples))
