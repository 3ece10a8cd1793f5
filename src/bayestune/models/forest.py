"""Random-forest models: a regression surrogate with uncertainty, and the feasibility
classifier that learns hidden constraints from failed evaluations (BaCO, HyperMapper 2.0)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bayestune.models.targets import uses_log
from bayestune.models.trees import ClassificationForest
from bayestune.settings import Rule, Settings


@dataclass(frozen=True)
class RandomForestSettings(Settings):
    """The forest of ``model: rf`` (the ``rf`` option group); BaCO's public defaults."""

    trees: int = 100  # number of trees
    max_features: float = 0.5  # share of the features each split considers
    bootstrap: bool = True  # bagging
    min_samples_split: int = 2  # smallest node that is split

    def rules(self) -> list[Rule]:
        return [
            ("trees", isinstance(self.trees, int) and 1 <= self.trees <= 1000, "`1 <= trees <= 1000`"),
            ("max_features", 0 < self.max_features <= 1, "`0 < max_features <= 1`"),
            self.at_least("min_samples_split", 2),
        ]

    def surrogate(self, log_transform: bool | str, seed: int, trees: int | None = None) -> RandomForestSurrogate:
        """An unfitted forest with these settings (``trees`` overrides the count)."""
        return RandomForestSurrogate(
            log_transform_y=log_transform,
            seed=seed,
            n_estimators=trees or self.trees,
            max_features=self.max_features,
            bootstrap=self.bootstrap,
            min_samples_split=self.min_samples_split,
        )


class RandomForestSurrogate:
    """Random-forest regression; the spread of the trees' predictions is the uncertainty.

    Defaults follow BaCO's public code (bootstrap, max_features 0.5). Outputs are
    log-transformed by the rule of :mod:`bayestune.models.targets`, like the GP's, so EI is
    computed on the same scale.
    """

    def __init__(
        self,
        *,
        n_estimators: int = 100,
        max_features: float = 0.5,
        min_samples_leaf: int = 1,
        log_transform_y: bool | str = "auto",
        seed: int | None = None,
        bootstrap: bool = True,
        min_samples_split: int = 2,
    ) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.min_samples_split = min_samples_split
        self.log_transform_y = log_transform_y
        self.seed = seed

    def fit(self, F: np.ndarray, y: np.ndarray) -> RandomForestSurrogate:
        from sklearn.ensemble import RandomForestRegressor

        y = np.asarray(y, dtype=float)
        if not np.all(np.isfinite(y)):
            raise ValueError("random forest: every training output must be finite")
        self.log_y_ = uses_log(y, self.log_transform_y)
        z = np.log(y) if self.log_y_ else y
        self.forest_ = RandomForestRegressor(
            n_estimators=self.n_estimators,
            max_features=self.max_features,
            min_samples_leaf=self.min_samples_leaf,
            min_samples_split=self.min_samples_split,
            bootstrap=self.bootstrap,
            random_state=self.seed,
            n_jobs=1,
        ).fit(F, z)
        self.best_y_latent_ = float(np.min(z))
        return self

    def predict_latent(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        per_tree = np.stack([t.predict(F) for t in self.forest_.estimators_])
        return per_tree.mean(axis=0), per_tree.std(axis=0) + 1e-9

    def feature_importance(self, names: Sequence[str] | None = None) -> dict[str, float]:
        """Impurity importance of each feature column, keyed by ``names`` (default ``f0``, ``f1``, ...)."""
        importances = self.forest_.feature_importances_.tolist()
        names = [f"f{i}" for i in range(len(importances))] if names is None else list(names)
        if len(names) != len(importances):
            raise ValueError(
                f"feature_importance needs one name per feature ({len(importances)}), but got {len(names)}"
            )
        return dict(zip(names, importances))


class FeasibilityClassifier:
    """P(feasible | configuration) from evaluations that succeeded or failed: a random forest
    of :mod:`bayestune.models.trees` (BaCO's classifier, without scikit-learn's per-call cost)."""

    def __init__(self, *, n_estimators: int = 100, max_features: float = 0.5, seed: int | None = None) -> None:
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.seed = seed

    def fit(self, F: np.ndarray, feasible: np.ndarray) -> FeasibilityClassifier:
        labels = np.asarray(feasible, dtype=bool)
        self.constant_ = None if labels.any() and not labels.all() else float(labels.all())
        if self.constant_ is None:
            # With few features, subsampling them leaves many trees splitting on irrelevant
            # ones only, which blurs P(feasible) towards the base rate; use them all then.
            max_features = self.max_features if F.shape[1] >= 6 else 1.0
            self.forest_ = ClassificationForest(
                n_trees=self.n_estimators, max_features=max_features, seed=self.seed
            ).fit(F, labels)
        return self

    def predict_proba(self, F: np.ndarray) -> np.ndarray:
        """Probability that each row is feasible."""
        if self.constant_ is not None:
            return np.full(len(F), self.constant_)
        return self.forest_.predict(F)
