"""One Bayesian-optimisation step assembled from parts: a target transform, a model part (the
surrogate part of :mod:`bayestune.bostep.surrogates`, or BoGraph's DAG), a scorer
(:mod:`bayestune.bostep.scorer`) and a proposal schedule (:mod:`bayestune.bostep.proposers`).

A suggestion: fit the model to the targets of the history; learn P(feasible) once failures are
seen (:mod:`bayestune.bostep.feasibility`); score candidates; then the schedule's proposers
pick: by default the global maximiser of the score, and every ``trust_region.every``-th model
suggestion the Hamming trust region around the incumbent. A batch is planned with the kriging
believer when the model part can be told a believed value (:class:`BatchBeliever`), else as the
top of one score.

Why: ``bo``, ``parego`` and ``bograph`` differ only in the target and the model they plug in;
everything else here is shared, so each behaves the same on feasibility, priors and the trust
region, and a new idea lands as a part rather than as a branch in three strategies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from bayestune.bostep.feasibility import FeasibilitySettings
from bayestune.bostep.proposers import Pick, ProposalSchedule
from bayestune.bostep.scorer import PriorSettings, Scorer
from bayestune.history import History, draw_unseen, top_up
from bayestune.models.base import ModelFit
from bayestune.models.censored import impute_censored
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.models.linalg import limit_blas_threads
from bayestune.models.targets import LOG_TRANSFORM_CHOICES
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import AcquisitionSearchSettings, Score
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space


@dataclass(frozen=True)
class StepSettings(Settings):
    """The options every strategy built on a BO step shares (its settings derive from these)."""

    RENAMED: ClassVar[dict[str, str]] = {
        "n_samples": "acquisition_search.n_samples",
        "n_starts": "acquisition_search.n_starts",
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
    learns from (the contract suite: tests/bostep/test_model_part.py)."""

    encoder: FeatureEncoder

    def fit(self, history: History, targets: np.ndarray) -> ModelFit: ...

    def observation_rows(self, history: History, targets: np.ndarray) -> np.ndarray: ...

    def with_failures(
        self, fit: ModelFit, history: History, targets: np.ndarray, classifier: FeasibilityClassifier | None
    ) -> ModelFit: ...


@runtime_checkable
class BatchBeliever(Protocol):
    """A model part that can also be told a believed value at a pick (the kriging believer), so
    a batch is planned pick by pick; a part without it plans a batch as the top of one score."""

    def believe(self, fit: ModelFit, row: np.ndarray) -> ModelFit: ...


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
        candidates: EnumeratedCandidates,
    ) -> None:
        self.space, self.rng = space, rng
        self.target, self.model, self.scorer, self.schedule = target, model, scorer, schedule
        self.feasibility, self.candidates = feasibility, candidates

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
        believer = model if isinstance(model, BatchBeliever) else None
        if believer is not None and len(history.pending) and fit.F is not None:  # configurations in flight
            fit = believer.believe(fit, history.pending)  # (asynchronous refills): the model counts on them
        classifier = self.feasibility.classifier(
            model.encoder, history, lambda: model.observation_rows(history, targets), rng
        )
        fit = model.with_failures(fit, history, targets, classifier)
        seen0 = set(history.seen)
        seen = set(seen0)
        self.scorer.prepare(history, targets, fit, model.encoder, seen)
        turns = self.schedule.turns(targets, history.feasible, history.n, n)
        chosen: list[np.ndarray] = []
        score: Score | None = None
        for k in range(n):
            if score is None:
                score = self.scorer.score(fit.posterior, model.encoder, classifier, history.n)
                search_score = score if fit.project is None else _projected(space, score, fit.project, seen0)
            pick = Pick(space, history, fit, model.encoder, classifier, search_score, seen, self.candidates, rng)
            picked = self.schedule.first_pick(pick, turns) if k == 0 else None
            if picked is None:
                picked = self.schedule.maximiser.pick(pick, 1 if believer else n - len(chosen))
            if not len(picked):
                break
            for row, key in zip(picked, space.row_keys(picked)):
                chosen.append(row)
                self.scorer.record(key)
                seen.add(key)
            if len(chosen) >= n:
                break
            if believer is not None:  # pretend a value was observed at the pick, then re-plan
                fit, score = believer.believe(fit, chosen[-1]), None
        if fit.project is not None and chosen:
            chosen = _project_rows(space, np.array(chosen), fit.project, seen0)
            seen = seen0 | set(space.row_keys(np.array(chosen)))
        return top_up(space, history, chosen, seen, n, rng)


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
