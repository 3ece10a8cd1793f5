"""The scoring part of a BO step: which acquisition scores the next pick, with which
exploration parameter, weighted how (:func:`bayestune.acquisition.scoring.acquisition_scorer`).

The constant choice (EI/PI/LCB with ξ/κ) is the default; two experimental policies change it
per pick: a portfolio of acquisitions judged by discounted ranks
(:mod:`bayestune.acquisition.portfolio`) and Kernel Tuner's contextual-variance exploration
factor (:mod:`bayestune.acquisition.exploration`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayestune.acquisition.exploration import SPREAD_SAMPLE, ContextualVariance, latent_unit
from bayestune.acquisition.portfolio import AcquisitionPortfolio
from bayestune.acquisition.scoring import DEFAULT_MC_SAMPLES, Score, acquisition_scorer
from bayestune.history import History
from bayestune.models.base import ModelFit, SamplingPosterior
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import FeasibilityClassifier
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.settings import Rule, Settings
from bayestune.space.space import Space

#: What ``n`` in piBO's ``prior^(beta / n)`` starts counting from (:class:`PriorSettings`).
PRIOR_DECAY_COUNTS = ("observations", "model_steps")


@dataclass(frozen=True)
class PriorSettings(Settings):
    """The user's prior's pull on the acquisition, piBO's ``prior^(beta / n)`` (the ``prior`` group)."""

    # bayestune's n counts every observation; BaCO and HyperMapper count model steps only (n = 1
    # at the first), so their readers set count=model_steps and design to the design's size;
    # HyperMapper's picks of one iteration share its iteration_number, hence batch.

    beta: float = 10.0  # strength: a larger beta keeps the prior's pull longer
    count: str = "observations"  # what n counts: observations | model_steps (BaCO's, HyperMapper's)
    design: int = 0  # with count=model_steps: the observations before the first model step
    batch: int = 1  # with count=model_steps: the picks of one model step, which share one n

    def rules(self) -> list[Rule]:
        return [
            ("beta", self.beta >= 0, "`beta >= 0`"),
            self.one_of("count", PRIOR_DECAY_COUNTS),
            self.at_least("design", 0),
            self.at_least("batch", 1),
        ]

    def decay_n(self, n_observations: int) -> int:
        """The ``n`` of ``prior^(beta / n)`` after ``n_observations`` (at least 1); with model
        steps, the first step after the design is 1, and each later batch of picks adds one."""
        if self.count == "model_steps":
            after = n_observations - self.design
            return max(1, -(-after // self.batch) + 1)  # a step that ends part-way through a batch counts whole
        return max(1, n_observations)


@dataclass(frozen=True)
class ScoringChoice:
    """What scores a pick (the strategy's settings, flattened once)."""

    acquisition: str = "ei"  # ei | pi | lcb
    xi: float = 1e-4  # EI/PI improvement margin (latent units)
    kappa: float = 2.0  # LCB exploration weight
    prior: PriorSettings = PriorSettings()  # piBO: the prior's pull and its decay
    feasibility_threshold: float = 0.1
    mc_samples: int = DEFAULT_MC_SAMPLES  # draws of a sampling posterior
    portfolio: bool = False  # experimental: EI/PI/LCB chosen per pick by discounted ranks
    contextual_variance: bool = False  # experimental: Kernel Tuner's λ instead of the constant ξ/κ


def plug_in_incumbent(history: History, fit: ModelFit, encoder: FeatureEncoder) -> float | None:
    """Noisy EI's incumbent when the black box is noisy (some configuration has repeated runs): the
    best posterior mean at the evaluated rows, not their luckiest sample, which is too good to
    improve on near the best region, so EI wanders off (3.7 points less true regret at σ = 0.3,
    2.4 at 0.15, 100 seeds paired: benchmarks/results/measurement/noise_tries.md). None otherwise:
    a black box measured once per configuration (a replay) is scored as before."""
    noisy = any(sum(math.isfinite(v) for v in runs) >= 2 for row in history.repeats for runs in row.values())
    if not noisy or isinstance(fit.posterior, SamplingPosterior) or not len(fit.X):
        return None
    mean, _ = fit.posterior.predict_latent(encoder.transform(fit.X))
    return float(np.min(mean))


class Scorer:
    """Builds each pick's score: see the module docstring."""

    def __init__(
        self, space: Space, rng: np.random.Generator, choice: ScoringChoice, candidates: EnumeratedCandidates
    ) -> None:
        self.space, self.rng, self.choice, self.candidates = space, rng, choice, candidates
        self.portfolio = AcquisitionPortfolio() if choice.portfolio else None
        self.exploration = ContextualVariance("cv") if choice.contextual_variance else None
        self._explore: tuple[float, float] | None = None
        self._incumbent: float | None = None

    def prepare(
        self, history: History, targets: np.ndarray, fit: ModelFit, encoder: FeatureEncoder, seen: set[bytes]
    ) -> None:
        """Once per suggestion, before the first score: the exploration factor of this
        suggestion, the portfolio's judgement of the last proposals, and the incumbent."""
        self._incumbent = plug_in_incumbent(history, fit, encoder)
        if self.exploration is not None:
            self._explore = (
                self._exploration_factor(self.exploration, fit, encoder, seen),
                latent_unit(fit.fitted, fit.y),
            )
        if self.portfolio is not None:
            self.portfolio.update(self.space.row_keys(history.X), targets, history.feasible)

    def score(
        self,
        posterior,
        encoder: FeatureEncoder,
        classifier: FeasibilityClassifier | None,
        n_obs: int,
        *,
        acquisition: str | None = None,
        rng: np.random.Generator | None = None,
    ) -> tuple[Score, str]:
        """The next pick's score and the acquisition it uses (``acquisition``: this one instead of
        the policy's, e.g. an arm's nominee; ``rng``: draw from it instead of the scorer's)."""
        choice = self.choice
        if acquisition is None:
            acquisition = self.portfolio.next_member() if self.portfolio is not None else choice.acquisition
        parameter = choice.kappa if acquisition == "lcb" else choice.xi
        if self._explore is not None:
            factor, unit = self._explore
            parameter = factor if acquisition == "lcb" else factor * unit
        score = acquisition_scorer(
            self.space,
            encoder,
            posterior,
            classifier,
            self.rng if rng is None else rng,
            acquisition=acquisition,
            parameter=parameter,
            n_obs=choice.prior.decay_n(n_obs),
            prior_beta=choice.prior.beta,
            feasibility_threshold=choice.feasibility_threshold,
            mc_samples=choice.mc_samples,
            incumbent=self._incumbent,
        )
        return score, acquisition

    def record(self, key: bytes, acquisition: str) -> None:
        """A pick was made with ``acquisition`` (the portfolio judges it once evaluated)."""
        if self.portfolio is not None:
            self.portfolio.record_proposal(key, acquisition)

    def _exploration_factor(
        self, exploration: ContextualVariance, fit: ModelFit, encoder: FeatureEncoder, seen: set[bytes]
    ) -> float:
        """Kernel Tuner's contextual-variance λ for this suggestion, from the posterior spread
        over unvisited candidates."""
        pool = self.candidates.unseen(seen)
        if pool is None:
            pool = self.space.sample(SPREAD_SAMPLE, self.rng)
        elif len(pool) > SPREAD_SAMPLE:
            pool = pool[self.rng.choice(len(pool), SPREAD_SAMPLE, replace=False)]
        if not len(pool):
            return 0.0
        _, sd = fit.posterior.predict_latent(encoder.transform(pool))
        return exploration(fit.fitted, sd, fit.y)
