"""Can the model see the needle? The rank of the true optimum among the unseen configurations
under the GP's mean, for the default encoding and for one that also sees interactions
(issue 39, item 4: research).

Why this and not only best-so-far: on convolution-type spaces the default GP ranks the true
optimum around the 30th percentile of the unseen configurations even after 70 evaluations, so no
acquisition can pick it; a model change that moves this percentile is worth a search benchmark,
one that does not is not. The training data are the first ``k`` evaluations of recorded ``bo``
runs (a results file of ``python -m benchmarks run``), so every encoding sees the same points.

Encodings:

* ``default``: bayestune's features (one per parameter);
* ``products``: the default plus, for every pair of numeric parameters with positive values, the
  normalised log of their product (``log a + log b``: "work per thread", "tile area") as one
  more numeric feature with its own length-scale, so a product can matter without the
  length-scales of its factors collapsing;
* ``logsum``: the default plus one feature, the normalised log of the product of *all* numeric
  parameters with positive values (a single "total work" direction).

Command::

    python -m benchmarks.optimum_rank RUNS.jsonl [--strategy bo] [--at 40,70] [--seeds 10]

Prints, per space and ``k``, the median percentile (lower is better: 0 = the model's favourite).
"""

from __future__ import annotations

import argparse
import itertools
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from bayestune.bostep.surrogates import LENGTHSCALE_PRIOR, NOISE_BOUNDS, OUTPUTSCALE_BOUNDS
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.models.kernels import FeatureBlock
from bayestune.space import Space
from bayestune.space.parameters import Categorical, Permutation
from benchmarks.jsonl import load_records
from benchmarks.problem import config_key

ENCODINGS = ("default", "products", "logsum")


class InteractionEncoder(FeatureEncoder):
    """The default features plus log-product features of numeric parameters (see the module)."""

    def __init__(self, space: Space, mode: str) -> None:
        super().__init__(space)
        numeric = [
            p
            for p in space.parameters
            if p.cardinality > 2
            and not isinstance(p, (Categorical, Permutation))
            and p.kind != "perfect_tile"
            and min(np.asarray(getattr(p, "values", [getattr(p, "low", 0)]), dtype=float)) > 0
        ]
        self.groups: list[tuple[str, ...]] = []
        if mode == "products":
            self.groups = [(a.name, b.name) for a, b in itertools.combinations(numeric, 2)]
        elif mode == "logsum" and len(numeric) > 1:
            self.groups = [tuple(p.name for p in numeric)]
        self._spans: list[tuple[float, float]] = []
        for group in self.groups:
            lo = sum(np.log(_values(space, name)).min() for name in group)
            hi = sum(np.log(_values(space, name)).max() for name in group)
            self._spans.append((lo, hi))
            self.blocks.append(FeatureBlock("*".join(group), "numeric", self.width, 1, "euclidean"))
            self.width += 1

    def transform(self, X: np.ndarray) -> np.ndarray:
        F = super().transform(X)  # allocates every column, fills the default ones
        n_base = self.width - len(self.groups)
        cols = self.space.columns(np.asarray(X, dtype=float).reshape(-1, self.space.width))
        for j, (group, (lo, hi)) in enumerate(zip(self.groups, self._spans)):
            s = sum(np.log(np.asarray(cols[name], dtype=float)) for name in group)
            F[:, n_base + j] = (s - lo) / (hi - lo) if hi > lo else 0.0
        return F


def _values(space: Space, name: str) -> np.ndarray:
    p = space[name]
    values = getattr(p, "values", None)
    if values is None:
        values = [p.low, p.high]  # type: ignore[attr-defined]
    return np.asarray(values, dtype=float)


def optimum_percentile(problem, configs: Sequence[dict], values: Sequence[float | None], k: int, mode: str) -> float:
    """Percentile (0-100) of the true optimum among unseen feasible configurations, ranked by
    the GP mean fitted to the first ``k`` evaluations (failures left out, as the default does)."""
    space = problem.space
    seen = {config_key(c) for c in configs[:k]}
    if config_key(problem.optimum_config) in seen:
        return 0.0
    rows = [(c, v) for c, v in zip(configs[:k], values[:k]) if v is not None]
    X = space.to_matrix([space.validate_config(c) for c, _ in rows])
    y = np.array([v for _, v in rows], dtype=float)
    encoder = FeatureEncoder(space) if mode == "default" else InteractionEncoder(space, mode)
    gp = GaussianProcess(
        encoder.blocks,
        lengthscale_prior=LENGTHSCALE_PRIOR,
        noise_bounds=NOISE_BOUNDS,
        outputscale_bounds=OUTPUTSCALE_BOUNDS,
        seed=0,
    ).fit(encoder.transform(X), y)
    every = space.enumerate(limit=300_000)
    assert every is not None, f"{problem.name}: not enumerable"
    keys = [config_key(c) for c in space.to_configs(every)]
    unseen = every[[key not in seen for key in keys]]
    mean = gp.predict(encoder.transform(unseen))
    target = gp.predict(encoder.transform(space.to_matrix([space.validate_config(problem.optimum_config)])))[0]
    return 100.0 * float(np.mean(mean < target))


def main(argv: Sequence[str] | None = None) -> None:
    from benchmarks.problems import get_problem

    parser = argparse.ArgumentParser(prog="python -m benchmarks.optimum_rank", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs")
    parser.add_argument("--strategy", default="bo")
    parser.add_argument("--at", default="40,70")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--encodings", default=",".join(ENCODINGS))
    args = parser.parse_args(argv)
    at = [int(k) for k in args.at.split(",")]
    modes = args.encodings.split(",")
    by_problem: dict[str, list[dict]] = defaultdict(list)
    for r in load_records(args.runs):
        if r["strategy"] == args.strategy and r.get("kind") == "gpu" and int(r["seed"]) < args.seeds:
            by_problem[r["problem"]].append(r)
    header = ["space", "k", *modes]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    medians: dict[tuple[int, str], list[float]] = defaultdict(list)
    for name, runs in sorted(by_problem.items()):
        problem = get_problem(name)
        for k in at:
            cells = []
            for mode in modes:
                p = [optimum_percentile(problem, r["configs"], r["values"], k, mode) for r in runs]
                medians[k, mode].append(float(np.median(p)))
                cells.append(f"{np.median(p):.1f}")
            print(f"| {name} | {k} | " + " | ".join(cells) + " |", flush=True)
    for k in at:
        print(
            f"| **median over spaces** | {k} | " + " | ".join(f"{np.median(medians[k, m]):.1f}" for m in modes) + " |"
        )


if __name__ == "__main__":
    main()
