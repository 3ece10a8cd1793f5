"""One Bayesian-optimisation step assembled from parts: a target transform, a model part (the
surrogate factory of :mod:`bayestune.bostep.surrogates`, or BoGraph's DAG), a scorer
(:mod:`bayestune.bostep.scorer`) and a proposal schedule.

A suggestion: fit the model to the targets of the history; learn P(feasible) once failures are
seen; score candidates; then the schedule decides who picks. By default the global maximiser
of the score does; every ``trust_region.every``-th model suggestion the Hamming trust region
around the incumbent does (:mod:`bayestune.search.trust_region`); experimental schedules add
ε-greedy random steps and a stalled run's exploration step. A batch is planned with the
kriging believer when the model can be told a believed value, else as the top of one score.

Why: ``bo``, ``parego`` and ``bograph`` differ only in the target and the model they plug in;
everything else here is shared, so each behaves the same on feasibility, priors and the trust
region, and a new idea lands as a part rather than as a branch in three strategies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from bayestune.acquisition.thompson import thompson_pick
from bayestune.bostep.arms import ARMS, DEFAULT_ARM, ArmHedge
from bayestune.bostep.scorer import PriorSettings, Scorer
from bayestune.history import History, draw_unseen, top_up
from bayestune.models.base import ModelFit
from bayestune.models.censored import impute_censored
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.gp import GaussianProcess
from bayestune.models.linalg import limit_blas_threads
from bayestune.models.targets import LOG_TRANSFORM_CHOICES
from bayestune.models.training import feasibility_classifier
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import AcquisitionSearchSettings, Score, maximize
from bayestune.search.stagnation import evaluations_since_improvement, explore_now
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space

#: Feasible configurations drawn for a Thompson step when the space is too large to enumerate.
THOMPSON_SAMPLE = 2000
#: How many of the latest evaluations an arm hedge searches for its last proposal's outcome.
OUTCOME_LOOKBACK = 8
#: A stalled run's exploration steps.
STALL_ACTIONS = ("thompson", "random")


@dataclass(frozen=True)
class FeasibilitySettings(Settings):
    """Hidden constraints learned from failed evaluations (the ``feasibility`` option group; BaCO)."""

    model: bool | str = "auto"  # a random-forest classifier of P(feasible); auto: on once a failure has been seen
    threshold: float = 0.1  # candidates with P(feasible) <= a draw from threshold x {0, 0.1, ..., 1} are ruled out

    def rules(self) -> list[Rule]:
        return [
            self.one_of("model", (True, False, "auto")),
            ("threshold", 0.0 <= self.threshold <= 1.0, "`0 <= threshold <= 1`"),
        ]


@dataclass(frozen=True)
class StepSettings(Settings):
    """The options every strategy built on a BO step shares (its settings derive from these)."""

    RENAMED: ClassVar[dict[str, str]] = {
        "n_samples": "acquisition_search.n_samples",
        "n_starts": "acquisition_search.n_starts",
        "exhaustive_limit": "acquisition_search.exhaustive_limit",
        "feasibility_model": "feasibility.model",
        "feasibility_threshold": "feasibility.threshold",
        "local_every": "trust_region.every",
        "local_fail_tolerance": "trust_region.fail_tolerance",
        "local_after": "trust_region.after",
        "prior_beta": "prior.beta",
    }

    log_transform: bool | str = "auto"  # log of positive objectives (models.targets); off: BaCO Fig. 9's ablation
    prior: PriorSettings = PriorSettings()
    feasibility: FeasibilitySettings = FeasibilitySettings()
    trust_region: TrustRegionSettings = TrustRegionSettings()
    acquisition_search: AcquisitionSearchSettings = AcquisitionSearchSettings()

    def rules(self) -> list[Rule]:
        return [self.one_of("log_transform", LOG_TRANSFORM_CHOICES)]


class ModelPart(Protocol):
    """What the step needs of a model: the encoding it reads, a fit, and the rows P(feasible)
    learns from. A part that can also ``believe(fit, row) -> ModelFit`` plans batches with it."""

    encoder: FeatureEncoder

    def fit(self, history: History, targets: np.ndarray) -> ModelFit: ...

    def observation_rows(self, history: History, targets: np.ndarray) -> np.ndarray: ...

    def with_failures(
        self, fit: ModelFit, history: History, targets: np.ndarray, classifier: FeasibilityClassifier | None
    ) -> ModelFit: ...


class ProposalSchedule:
    """Who picks each suggestion: the global maximiser, the trust region, or an exploration step."""

    def __init__(
        self,
        trust_region: TrustRegionSettings,
        *,
        epsilon: float = 0.0,
        stall_after: int = 0,
        stall_action: str = "thompson",
    ) -> None:
        self.trust_region_settings = trust_region
        self.trust_region = trust_region.region()
        self.epsilon, self.stall_after, self.stall_action = epsilon, stall_after, stall_action
        self.n_model_suggestions = 0
        #: trust-region proposals made (for tests and benchmarks)
        self.local_picks = 0

    def random_step(self, rng: np.random.Generator) -> bool:
        """BaCO's ε-greedy step: a random configuration instead of the model's pick."""
        return self.epsilon > 0 and rng.random() < self.epsilon

    def turns(self, targets: np.ndarray, feasible: np.ndarray, n_evaluated: int, n: int) -> tuple[bool, bool]:
        """(stall step, trust-region turn) for this model suggestion, which it counts."""
        stall = explore_now(self.model_phase_stall(targets, feasible), self.stall_after, n)
        self.n_model_suggestions += 1
        local = self.trust_region is not None and self.trust_region_settings.is_turn(
            self.n_model_suggestions, n_evaluated
        )
        return stall, local

    def local_pick(
        self,
        space: Space,
        score: Score,
        incumbent: np.ndarray,
        best: float,
        rng: np.random.Generator,
        *,
        seen: set[bytes],
        candidates: np.ndarray | None,
    ) -> np.ndarray | None:
        """The trust region's proposal as a one-row matrix (None: the global search decides)."""
        if self.trust_region is None:
            return None
        row = self.trust_region.pick(space, score, incumbent, best, rng, seen=seen, candidates=candidates)
        self.local_picks += row is not None
        return row

    def model_phase_stall(self, targets: np.ndarray, feasible: np.ndarray) -> int | None:
        """Evaluations since the best last improved, counting only the model's own suggestions
        (the initial design is meant to spread out, not to improve). A resumed run counts its
        model suggestions afresh."""
        since = evaluations_since_improvement(targets, feasible)
        return None if since is None else min(since, self.n_model_suggestions)


class BOStep:
    """One suggestion from the parts: see the module docstring."""

    def __init__(
        self,
        space: Space,
        rng: np.random.Generator,
        *,
        target: Callable[[History], np.ndarray],
        model: ModelPart,
        scorer: Scorer,
        schedule: ProposalSchedule,
        feasibility: FeasibilitySettings,
        search: AcquisitionSearchSettings,
        candidates: EnumeratedCandidates,
        arms: ArmHedge | None = None,
    ) -> None:
        self.space, self.rng = space, rng
        self.target, self.model, self.scorer, self.schedule = target, model, scorer, schedule
        self.feasibility, self.search, self.candidates = feasibility, search, candidates
        self.arms = arms

    def suggest(self, history: History, n: int) -> np.ndarray:
        # Small matrices: extra BLAS threads only oversubscribe the cores (see limit_blas_threads).
        with limit_blas_threads(1):
            return self._suggest(history, n)

    def _suggest(self, history: History, n: int) -> np.ndarray:
        space, rng, model = self.space, self.rng, self.model
        if history.n_feasible < 2 or model.encoder.width == 0 or self.schedule.random_step(rng):
            return draw_unseen(space, history, n, rng)
        targets = self.target(history)
        censored = history.censored_rows
        if censored.any():  # bounds from an early stop: fitted once as values, then imputed above them
            first = model.fit(history, targets)
            targets = impute_censored(targets, censored, first.fitted, model.encoder.transform(history.X[censored]))
        fit = model.fit(history, targets)
        believe = getattr(model, "believe", None)
        if believe is not None and len(history.pending) and fit.F is not None:  # configurations in flight
            fit = believe(fit, history.pending)  # (asynchronous refills): the model counts on them
        classifier = self._classifier(history, targets)
        fit = model.with_failures(fit, history, targets, classifier)
        seen0 = set(history.seen)
        seen = set(seen0)
        self.scorer.prepare(history, targets, fit, model.encoder, seen)
        stall_turn, local_turn = self.schedule.turns(targets, history.feasible, history.n, n)
        order = np.argsort(fit.y)
        forest = self._judge_arms(history, targets, fit)
        chosen: list[np.ndarray] = []
        score: Score | None = None
        for k in range(n):
            if score is None:
                score, acquisition = self.scorer.score(fit.posterior, model.encoder, classifier, history.n)
                search_score = score if fit.project is None else _projected(space, score, fit.project, seen0)
            rows = self._stall_pick(history, fit, classifier, seen) if stall_turn and k == 0 else None
            if rows is None and local_turn and k == 0:
                rows = self.schedule.local_pick(
                    space,
                    search_score,
                    fit.X[order[0]],
                    float(fit.y[order[0]]),
                    rng,
                    seen=seen,
                    candidates=self.candidates.unseen(seen),
                )
            if rows is None:
                rows = maximize(
                    space,
                    search_score,
                    rng,
                    seen=seen,
                    n=1 if believe else n - len(chosen),
                    candidates=self.candidates.unseen(seen),
                    evaluated_best=fit.X[order],
                    settings=self.search,
                )
            if not len(rows):
                break
            if forest is not None and n == 1 and not (stall_turn or local_turn):
                rows, acquisition = self._hedged_pick(rows, acquisition, fit, forest, classifier, history, seen)
            for row, key in zip(rows, space.row_keys(rows)):
                chosen.append(row)
                self.scorer.record(key, acquisition)
                seen.add(key)
            if len(chosen) >= n:
                break
            if believe is not None:  # pretend a value was observed at the pick, then re-plan
                fit, score = believe(fit, chosen[-1]), None
        if fit.project is not None and chosen:
            chosen = _project_rows(space, np.array(chosen), fit.project, seen0)
            seen = seen0 | set(space.row_keys(np.array(chosen)))
        return top_up(space, history, chosen, seen, n, rng)

    def _judge_arms(self, history: History, targets: np.ndarray, fit: ModelFit) -> dict[str, Any] | None:
        """With an arm hedge: the models of its arms fitted on this history (the step's own fit
        is the GP), after they judged the last nominees; None without a hedge."""
        if self.arms is None or fit.F is None or fit.project is not None:
            return None
        models: dict[str, Any] = {}
        for kind in self.arms.settings.models:
            if kind == "gp":
                models[kind] = fit.posterior
            else:  # the forest, from the hedge's own stream so the default's draws stay as they were
                models[kind] = self.model.fit_forest(history, targets, self.arms.rng)  # type: ignore[attr-defined]
        self.arms.judge(models, fit.F, self.model.encoder.transform, self._outcome(history, targets))
        return models

    def _outcome(self, history: History, targets: np.ndarray) -> float | None:
        """The hedge's last proposal as measured: its rank among the feasible targets, +1 best to
        -1 worst (a failure: -1); None when it is not among the latest evaluations."""
        proposed = None if self.arms is None else self.arms.proposed
        if proposed is None or not history.n:
            return None
        key = self.space.row_keys(np.asarray(proposed).reshape(1, -1))[0]
        recent = range(max(0, history.n - OUTCOME_LOOKBACK), history.n)
        hits = [i for i, k in zip(recent, self.space.row_keys(history.X[recent.start :])) if k == key]
        if not hits:
            return None
        i = hits[-1]
        if not history.feasible[i] or not np.isfinite(targets[i]):
            return -1.0
        ok = targets[history.feasible & np.isfinite(targets)]
        if len(ok) < 2:
            return 0.0
        return float(1.0 - 2.0 * np.mean(ok < targets[i]) * len(ok) / (len(ok) - 1))

    def _hedged_pick(
        self,
        rows: np.ndarray,
        acquisition: str,
        fit: ModelFit,
        models: dict[str, Any],
        classifier: FeasibilityClassifier | None,
        history: History,
        seen: set[bytes],
    ) -> tuple[np.ndarray, str]:
        """The proposal of the arm the hedge draws: ``rows`` (the default arm's pick) or another
        arm's nominee, searched with the hedge's random stream."""
        hedge = self.arms
        assert hedge is not None
        nominees = {DEFAULT_ARM: rows[0]}
        for arm in hedge.arms:
            if arm in nominees:
                continue
            kind, acq = ARMS[arm]
            score, _ = self.scorer.score(
                models[kind], self.model.encoder, classifier, history.n, acquisition=acq, rng=hedge.rng
            )
            picked = maximize(
                self.space,
                score,
                hedge.rng,
                seen=seen,
                n=1,
                candidates=self.candidates.unseen(seen),
                evaluated_best=fit.X[np.argsort(fit.y)],
                settings=self.search,
            )
            nominees[arm] = picked[0] if len(picked) else rows[0]
        arm = hedge.choose(nominees, history.n)
        if arm == DEFAULT_ARM:
            return rows, acquisition
        return nominees[arm].reshape(1, -1), ARMS[arm][1]

    def _classifier(self, history: History, targets: np.ndarray) -> FeasibilityClassifier | None:
        mode = self.feasibility.model
        if mode is False or (mode == "auto" and history.feasible.all()):
            return None
        rows = self.model.observation_rows(history, targets)
        return feasibility_classifier(self.model.encoder, history, rows, self.rng)

    def _stall_pick(
        self, history: History, fit: ModelFit, classifier: FeasibilityClassifier | None, seen: set[bytes]
    ) -> np.ndarray | None:
        """A stalled run's exploration step as a one-row matrix (None: fall back to the acquisition):
        the minimum of a GP posterior draw over the unseen configurations (all of them in an
        enumerable space, else a feasible sample), or a random unseen configuration."""
        if self.schedule.stall_action == "random" or not isinstance(fit.fitted, GaussianProcess):
            rows = draw_unseen(self.space, history.with_seen(seen), 1, self.rng)
            return rows[:1] if len(rows) else None
        pool = self.candidates.unseen(seen)
        if pool is None:
            pool = self.space.sample(THOMPSON_SAMPLE, self.rng)
            keys = self.space.row_keys(pool)
            pool = pool[np.array([k not in seen for k in keys], dtype=bool)]
        if not len(pool):
            return None
        F = self.model.encoder.transform(pool)
        weights = None if classifier is None else classifier.predict_proba(F)
        i = thompson_pick(fit.fitted, F, self.rng, weights=weights)
        return None if i is None else pool[i].reshape(1, -1)


def _projected(space: Space, score: Score, project: Callable[[np.ndarray], np.ndarray], seen: set[bytes]) -> Score:
    """``score`` of rows as they would be proposed; a row that becomes an evaluated one is worthless."""

    def search_score(X: np.ndarray) -> np.ndarray:
        H = project(X)
        dup = np.array([k in seen for k in space.row_keys(H)], dtype=bool)
        return np.where(dup, -np.inf, score(H))

    return search_score


def _project_rows(
    space: Space, rows: np.ndarray, project: Callable[[np.ndarray], np.ndarray], seen: set[bytes]
) -> list[Any]:
    """The picks as proposed: each projected unless that repeats an evaluated or earlier pick."""
    rows = np.asarray(rows, dtype=float).reshape(-1, space.width)
    held = project(rows)
    taken = set(seen)
    for i, key in enumerate(space.row_keys(held)):
        if key not in taken:
            rows[i] = held[i]
        taken.add(space.row_keys(rows[i : i + 1])[0])
    return list(rows)
