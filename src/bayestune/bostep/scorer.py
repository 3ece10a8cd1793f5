"""The scoring part of a BO step: the acquisition that scores the next pick, with its
exploration parameter, weighted by P(feasible) and the user's prior
(:func:`bayestune.acquisition.scoring.acquisition_scorer`), and EI's incumbent under noise.

It reads the groups it owns (``prior``, ``feasibility``) and the strategy's acquisition; a
policy that changes the acquisition per pick is a subclass that overrides :meth:`Scorer.prepare`,
:meth:`Scorer.acquisition_parameter` and :meth:`Scorer.record` (the benchmark contender
``bo_kt`` in ``benchmarks/kernel_tuner_emulation.py``: Kernel Tuner's portfolio and
contextual variance, which lost against this default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayestune.acquisition.functions import DEFAULT_KAPPA, DEFAULT_XI
from bayestune.acquisition.scoring import DEFAULT_MC_SAMPLES, Score, acquisition_scorer
from bayestune.bostep.feasibility import FeasibilitySettings
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
    """The user's prior's pull on the acquisition, piBO's ``prior^(beta / n)`` (the ``prior``
    group); n counts every observation."""

    beta: float = 10.0  # strength: a larger beta keeps the prior's pull longer

    def rules(self) -> list[Rule]:
        return [("beta", self.beta >= 0, "`beta >= 0`")]

    def decay_n(self, n_observations: int) -> int:
        """The ``n`` of ``prior^(beta / n)`` after ``n_observations`` (at least 1)."""
        return max(1, n_observations)


@dataclass(frozen=True)
class PeerPriorSettings(PriorSettings):
    """The ``prior`` group with the peers' counting: BaCO and HyperMapper count model steps only
    (n = 1 at the first), so their readers set ``count=model_steps`` and ``design`` to the
    design's size; HyperMapper's picks of one iteration share its iteration_number, hence
    ``batch``. Peer behaviour their files set, offered where their files land (``bo``, ``parego``)."""

    count: str = "observations"  # what n counts: observations | model_steps (BaCO's, HyperMapper's)
    design: int = 0  # with count=model_steps: the observations before the first model step
    batch: int = 1  # with count=model_steps: the picks of one model step, which share one n

    def rules(self) -> list[Rule]:
        return [
            *super().rules(),
            self.one_of("count", PRIOR_DECAY_COUNTS),
            self.at_least("design", 0),
            self.at_least("batch", 1),
        ]

    def decay_n(self, n_observations: int) -> int:
        """As :meth:`PriorSettings.decay_n`; with model steps, the first step after the design is
        1, and each later batch of picks adds one."""
        if self.count == "model_steps":
            after = n_observations - self.design
            return max(1, -(-after // self.batch) + 1)  # a step that ends part-way through a batch counts whole
        return super().decay_n(n_observations)


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
        self,
        space: Space,
        rng: np.random.Generator,
        candidates: EnumeratedCandidates,
        *,
        prior: PriorSettings,
        feasibility: FeasibilitySettings,
        acquisition: str = "ei",
        xi: float = DEFAULT_XI,
        kappa: float = DEFAULT_KAPPA,
        mc_samples: int = DEFAULT_MC_SAMPLES,
    ) -> None:
        self.space, self.rng, self.candidates = space, rng, candidates
        self.prior, self.feasibility = prior, feasibility
        self.acquisition, self.xi, self.kappa, self.mc_samples = acquisition, xi, kappa, mc_samples
        self._incumbent: float | None = None

    def prepare(
        self, history: History, targets: np.ndarray, fit: ModelFit, encoder: FeatureEncoder, seen: set[bytes]
    ) -> None:
        """Once per suggestion, before the first score: EI's incumbent."""
        self._incumbent = plug_in_incumbent(history, fit, encoder)

    def acquisition_parameter(self) -> tuple[str, float]:
        """The next pick's acquisition and its exploration parameter (ξ for EI/PI, κ for LCB)."""
        return self.acquisition, self.kappa if self.acquisition == "lcb" else self.xi

    def score(self, posterior, encoder: FeatureEncoder, classifier: FeasibilityClassifier | None, n_obs: int) -> Score:
        """The next pick's score."""
        acquisition, parameter = self.acquisition_parameter()
        return acquisition_scorer(
            self.space,
            encoder,
            posterior,
            classifier,
            self.rng,
            acquisition=acquisition,
            parameter=parameter,
            n_obs=self.prior.decay_n(n_obs),
            prior_beta=self.prior.beta,
            feasibility_threshold=self.feasibility.threshold,
            mc_samples=self.mc_samples,
            incumbent=self._incumbent,
        )

    def record(self, key: bytes) -> None:
        """A pick was made (a per-pick policy judges it once evaluated); nothing by default."""
