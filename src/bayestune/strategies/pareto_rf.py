"""HyperMapper 2.0's active learning for several objectives (``pareto_rf``).

Each *iteration* (Algorithm 1 of the paper):

1. fit one random-forest regressor per objective to the feasible evaluations, and a
   random-forest classifier of feasibility to all of them (once a failure has been seen);
2. predict every objective on the unevaluated candidates — all feasible configurations when
   the space is small enough to enumerate, else a large Chain-of-Trees sample — and drop
   those the classifier predicts infeasible;
3. take the predicted Pareto front of what is left. Evaluated configurations are never
   candidates, so each iteration explores a new layer of predicted fronts: the "Pareto wall";
4. evaluate at most ``batch_size`` (the paper's M) of them, chosen at random when the front
   is larger, and fill the rest of the iteration with random unevaluated candidates (the
   paper's epsilon-greedy exploration); ``epsilon`` additionally swaps each front pick for a
   random one with that probability.

An iteration's picks are handed out over successive :meth:`suggest` calls, so asking one
configuration at a time still evaluates M per model fit, as in the paper; a batch ask of
``n > M`` makes one iteration of ``n``. The paper ran thousands of evaluations with large M;
at the tens of evaluations typical here, refitting after every one (M = 1, the default)
measured best (``benchmarks/multiobjective.py``: on the mixed ZDT problem the hypervolume
ratio after 40 evaluations is 0.64 with M = 1, 0.58 with M = 2, 0.49 with M = 5 and 0.24 with
M = 10, mean of 4 seeds). With user priors,
random picks and the fill follow the prior weight ``prior^(prior.beta / n)`` (piBO's decay),
and a share of the sampled candidates is drawn from the priors.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from bayestune.bostep.feasibility import FeasibilitySettings
from bayestune.bostep.scorer import PriorSettings
from bayestune.history import History, draw_unseen, top_up
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier, RandomForestSettings, RandomForestSurrogate
from bayestune.models.targets import LOG_TRANSFORM_CHOICES
from bayestune.models.training import feasibility_classifier
from bayestune.pareto import pareto_mask
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import EXHAUSTIVE_LIMIT
from bayestune.strategies.base import Rule, Settings, Strategy, register

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParetoRFSettings(Settings):
    """Options of the ``pareto_rf`` strategy (``strategy_options`` in a scenario): the groups
    ``rf``, ``feasibility`` and ``prior`` are the model-based strategies' own."""

    RENAMED: ClassVar[dict[str, str]] = {
        "n_estimators": "rf.trees",
        "max_features": "rf.max_features",
        "feasibility_threshold": "feasibility.threshold",
        "prior_beta": "prior.beta",
    }

    batch_size: int = 1  # M: evaluations per active-learning iteration
    epsilon: float = 0.0  # chance that a front pick is replaced by a random candidate
    n_candidates: int = 20_000  # Chain-of-Trees samples predicted per iteration (large spaces)
    log_transform: bool | str = "auto"  # log of positive objectives inside the forests
    rf: RandomForestSettings = RandomForestSettings()  # every forest's (max_features: all of them below 6 features)
    # P(feasible) below feasibility.threshold rules a candidate out (HyperMapper's 0.5)
    feasibility: FeasibilitySettings = FeasibilitySettings(threshold=0.5)
    prior: PriorSettings = PriorSettings()  # piBO's decay of the prior's weight with the observations

    def rules(self) -> list[Rule]:
        return [
            ("batch_size", isinstance(self.batch_size, int) and self.batch_size >= 1, "`batch_size >= 1` (an integer)"),
            ("epsilon", 0.0 <= self.epsilon <= 1.0, "`0 <= epsilon <= 1`"),
            (
                "n_candidates",
                isinstance(self.n_candidates, int) and self.n_candidates >= 1,
                "`n_candidates >= 1` (an integer)",
            ),
            self.one_of("log_transform", LOG_TRANSFORM_CHOICES),
        ]


@register
class ParetoRandomForest(Strategy):
    """See the module docstring."""

    name = "pareto_rf"
    multi_objective = True
    settings_class = ParetoRFSettings
    settings: ParetoRFSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        self.encoder = FeatureEncoder(space)
        self._plan: list[np.ndarray] = []
        self.enumerated = EnumeratedCandidates(space, EXHAUSTIVE_LIMIT)

    # ---- candidates --------------------------------------------------------------------
    def _candidates(self, history: History, seen: set[bytes]) -> np.ndarray:
        """Unevaluated feasible configurations: all of them, or a large sample."""
        settings = self.settings
        every = self.enumerated.unseen(seen)
        if every is not None:
            return every
        n_prior = settings.n_candidates // 2 if self.space.has_prior else 0
        parts = [self.space.sample(settings.n_candidates - n_prior, self.rng, method="cot")]
        if n_prior:
            parts.append(self.space.sample(n_prior, self.rng, method="cot", use_prior=True))
        X = np.concatenate(parts)
        keys = self.space.row_keys(X)
        first: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k not in seen and k not in first:
                first[k] = i
        return X[np.fromiter(first.values(), dtype=int, count=len(first))]

    def _weights(self, X: np.ndarray, n_obs: int) -> np.ndarray:
        """Selection weights of random picks: uniform, or the decaying prior."""
        if not self.space.has_prior or not len(X):
            return np.ones(len(X))
        w = np.power(
            np.maximum(self.space.prior_weight(X), 1e-300),
            self.settings.prior.beta / self.settings.prior.decay_n(n_obs),
        )
        return w if np.all(np.isfinite(w)) and w.sum() > 0 else np.ones(len(X))

    def _pick(self, idx: np.ndarray, k: int, weights: np.ndarray) -> np.ndarray:
        """``k`` of ``idx`` at random without replacement, in proportion to ``weights``."""
        if k >= len(idx):
            return self.rng.permutation(idx)
        w = weights[idx]
        return self.rng.choice(idx, size=k, replace=False, p=w / w.sum())

    # ---- one active-learning iteration -------------------------------------------------
    def _fit(self, history: History) -> tuple[list[RandomForestSurrogate], FeasibilityClassifier | None]:
        settings = self.settings
        ok = history.feasible
        F = self.encoder.transform(history.X[ok])
        S = history.signed_Y()[ok]
        rf = settings.rf if self.encoder.width >= 6 else replace(settings.rf, max_features=1.0)
        models = [
            rf.surrogate(settings.log_transform, int(self.rng.integers(2**31))).fit(F, S[:, j])
            for j in range(S.shape[1])
        ]
        mode = settings.feasibility.model
        classifier = None
        if mode is True or (mode == "auto" and not history.feasible.all()):
            classifier = feasibility_classifier(
                self.encoder, history, np.arange(history.n), self.rng, n_estimators=settings.rf.trees
            )
        return models, classifier

    def _iteration(self, history: History, seen: set[bytes], size: int) -> list[np.ndarray]:
        settings = self.settings
        if history.n_feasible < 2 or self.encoder.width == 0:
            return list(draw_unseen(self.space, history.with_seen(seen), size, self.rng, use_prior=True))
        cands = self._candidates(history, seen)
        if not len(cands):
            return []
        models, classifier = self._fit(history)
        Fc = self.encoder.transform(cands)
        pred = np.column_stack([m.predict_latent(Fc)[0] for m in models])
        allowed = np.ones(len(cands), dtype=bool)
        if classifier is not None:
            p = classifier.predict_proba(Fc)
            allowed = p >= settings.feasibility.threshold
            if not allowed.any():  # nothing looks feasible: keep the most likely ones
                allowed = p >= p.max()
        pool = np.flatnonzero(allowed)
        front = pool[pareto_mask(pred[pool])]
        weights = self._weights(cands, history.n)
        chosen = list(self._pick(front, size, weights))
        if settings.epsilon > 0:
            chosen = [i for i in chosen if self.rng.random() >= settings.epsilon]
        n_front = len(chosen)
        rest = np.setdiff1d(np.arange(len(cands)), np.asarray(chosen, dtype=int))
        chosen += list(self._pick(rest, size - len(chosen), weights))
        logger.debug(
            "pareto_rf: %d candidates, %d predicted feasible, front of %d: %d picked + %d random",
            len(cands),
            len(pool),
            len(front),
            n_front,
            len(chosen) - n_front,
        )
        return [cands[i] for i in chosen]

    def suggest(self, history: History, n: int) -> np.ndarray:
        seen = set(history.seen)
        out: list[np.ndarray] = []
        while len(out) < n:
            if not self._plan:
                self._plan = self._iteration(history, seen, max(self.settings.batch_size, n - len(out)))
                if not self._plan:
                    break
            row = self._plan.pop(0)
            key = self.space.row_keys(row.reshape(1, -1))[0]
            if key not in seen:
                seen.add(key)
                out.append(row)
        return top_up(self.space, history, out, seen, n, self.rng)
