"""The adaptive part of a BO step: a hedge over (model, acquisition) arms, GP-Hedge style.

Which surrogate and acquisition suit a tuning landscape is unknown before the run: the forest
wins on large spaces with narrow optima, a mix of acquisitions on GEMM-like ones, the GP with
EI on most. So the run's own evidence decides (Hoffman, Brochu & de Freitas 2011, "Portfolio
allocation for Bayesian optimization"): at every model suggestion each arm of the set
(:data:`ARM_SETS`; an arm is a model and an acquisition, :data:`ARMS`) *nominates* the maximiser
of its acquisition; one nominee is proposed, the arm drawn by a softmax over the arms'
discounted gains; at the next suggestion, with the models refitted on one more observation,
every arm's gain grows by how good the refreshed models now believe its nominee to be.

Differences from the paper, and why:

* The judges are all the models in the set, each in its own standardised units (the nominee's
  posterior mean against the spread of the model's means at the training points), averaged,
  so a GP does not judge a forest's nominees alone; the sign is flipped (we minimise).
* Gains are discounted (``discount``): the landscape a run sees changes as it narrows in.
* ``reward="model"`` is the paper's full-information gain; it favours exploiting arms (PI's
  nominee is where the model already believes the best is, so the model rates it well whether
  or not it is). ``reward="outcome"`` scores only what was measured, Exp3 style (Auer et al.
  2002): the proposal's rank among the feasible observations (best +1, worst or failed -1),
  divided by the chance it had of being proposed and credited to every arm that nominated
  it; a share :data:`OUTCOME_EXPLORE` of the draws is uniform so that chance stays bounded.
  ``reward="prediction"`` scores the models, not the picks (the issue's "predictive
  likelihood on the most recent observations", in ranks so that a GP and a forest compare in
  one unit): each model as fitted at the last suggestion predicted where the proposal would
  rank among the training rows; once measured, its reward is minus the distance between that
  quantile and the measured one. Every model is judged on the same measured point, so no arm
  is favoured for nominating what its own model likes; arms sharing a model share its reward,
  so it is meant for ``set="models"``.
* The default arm (GP with EI) proposes alone until ``after`` evaluations: the first model
  suggestions behave as the default does, since a short run has no evidence to adapt on.
  Nominees are still made and judged then, from the part's own random stream, so a run's
  proposals up to ``after`` equal the default's draw for draw.
* It acts on single proposals outside the trust region's and the stall rule's turns; a batch
  and those turns are the default's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bayestune.settings import Rule, Settings

#: arm name -> (model, acquisition)
ARMS: dict[str, tuple[str, str]] = {
    "gp-ei": ("gp", "ei"),
    "gp-pi": ("gp", "pi"),
    "gp-lcb": ("gp", "lcb"),
    "rf-ei": ("rf", "ei"),
}
#: The arm that proposes before there is evidence (today's default model and acquisition).
DEFAULT_ARM = "gp-ei"
#: What an arm's gain is made of (module docstring).
REWARDS = ("model", "outcome", "prediction")
#: With ``reward="outcome"``: the share of arm draws made uniformly.
OUTCOME_EXPLORE = 0.1
#: The arm sets a run may hedge over (``off``: the default arm alone, no hedge).
ARM_SETS: dict[str, tuple[str, ...]] = {
    "off": (),
    "acquisitions": ("gp-ei", "gp-pi", "gp-lcb"),
    "models": ("gp-ei", "rf-ei"),
    "all": ("gp-ei", "gp-pi", "gp-lcb", "rf-ei"),
}


@dataclass(frozen=True)
class ArmSettings(Settings):
    """The hedge over (model, acquisition) arms (bostep.arms)."""

    set: str = "off"  # off | acquisitions (gp with ei/pi/lcb) | models (gp-ei, rf-ei) | all
    after: int = 20  # evaluations before an arm other than gp-ei may propose
    eta: float = 1.0  # softmax sharpness over the discounted gains (standardised units)
    discount: float = 0.9  # weight of a gain one suggestion older
    reward: str = (
        "model"  # model (models judge each nominee) | outcome (pick's measured rank) | prediction (rank error)
    )

    def rules(self) -> list[Rule]:
        return [
            self.one_of("set", tuple(ARM_SETS)),
            self.at_least("after", 0),
            ("eta", self.eta > 0, "`eta > 0`"),
            ("discount", 0 < self.discount <= 1, "`0 < discount <= 1`"),
            self.one_of("reward", REWARDS),
        ]

    @property
    def arms(self) -> tuple[str, ...]:
        return ARM_SETS[self.set]

    @property
    def models(self) -> tuple[str, ...]:
        """The models the arms need fitted, in a fixed order."""
        return tuple(dict.fromkeys(ARMS[a][0] for a in self.arms))


class ArmHedge:
    """The gains, the nominees awaiting judgement and the draw: see the module docstring."""

    def __init__(self, settings: ArmSettings, rng: np.random.Generator) -> None:
        if not settings.arms:
            raise ValueError("an arm hedge needs a set of arms, not 'off'")
        self.settings = settings
        self.arms = list(settings.arms)
        self.gains = np.zeros(len(self.arms))
        #: the part's own random stream: the nominees' searches and the draw of an arm
        self.rng = rng
        self._nominees: dict[str, np.ndarray] = {}
        self._chances = np.zeros(len(self.arms))
        self.proposed: np.ndarray | None = None
        #: how often each arm's nominee was proposed (for tests and benchmarks)
        self.picks = {a: 0 for a in self.arms}
        #: with reward="prediction": the judges of the last suggestion and their encoded training rows
        self._previous: tuple[Mapping[str, object], np.ndarray] | None = None

    def judge(self, judges: Mapping[str, object], F_train: np.ndarray, encode, outcome: float | None = None) -> None:
        """Add to each arm's discounted gain the reward of its last nominee: how good the
        refreshed ``judges`` (model name -> fitted surrogate with ``predict_latent``) believe it
        is (``F_train``, the encoded training rows, set each judge's units; ``encode`` maps raw
        rows), or, with ``reward="outcome"``, the measured ``outcome`` of the proposal in [-1, 1]
        (None: not measured; no update)."""
        if self.settings.reward == "prediction":
            previous, self._previous = self._previous, (judges, F_train)
            if previous is not None and outcome is not None and self.proposed is not None:
                self.gains = self.settings.discount * self.gains + self._prediction_rewards(*previous, encode, outcome)
            self._nominees, self.proposed = {}, None  # a turn without a hedged pick judges nothing next time
            return
        if not self._nominees:
            return
        rows = np.array([self._nominees[a] for a in self.arms])
        self._nominees = {}
        if self.settings.reward == "outcome":
            if outcome is None or self.proposed is None:
                return
            same = np.array([np.array_equal(row, self.proposed) for row in rows])
            chance = float(self._chances[same].sum())
            self.gains = self.settings.discount * self.gains + np.where(same, outcome / max(chance, 1e-9), 0.0)
            return
        F = encode(rows)
        reward = np.zeros(len(self.arms))
        for model in judges.values():
            mu, _ = model.predict_latent(F)  # type: ignore[attr-defined]
            ref, _ = model.predict_latent(F_train)  # type: ignore[attr-defined]
            spread = float(np.std(ref)) or 1.0
            reward += -(np.asarray(mu, dtype=float) - float(np.mean(ref))) / spread
        reward /= max(1, len(judges))
        self.gains = self.settings.discount * self.gains + reward

    def _prediction_rewards(
        self, judges: Mapping[str, object], F_train: np.ndarray, encode, outcome: float
    ) -> np.ndarray:
        """Minus each arm's model's quantile error on the measured proposal: the share of its
        training rows it predicted better than the proposal, against the measured share
        (``outcome`` is the measured rank in [-1, 1], +1 the best: that share is (1 - outcome) / 2)."""
        measured = (1.0 - outcome) / 2.0
        F_new = encode(np.asarray(self.proposed).reshape(1, -1))
        error = {}
        for kind, model in judges.items():
            mu_new, _ = model.predict_latent(F_new)  # type: ignore[attr-defined]
            mu_train, _ = model.predict_latent(F_train)  # type: ignore[attr-defined]
            error[kind] = abs(float(np.mean(np.asarray(mu_train) < float(mu_new[0]))) - measured)
        return np.array([-error.get(ARMS[a][0], 1.0) for a in self.arms])

    def probabilities(self) -> np.ndarray:
        """Softmax of ``eta`` x the gains (shifted for stability), mixed with the uniform share
        :data:`OUTCOME_EXPLORE` when the reward is the outcome."""
        z = self.settings.eta * (self.gains - self.gains.max())
        p = np.exp(z)
        p /= p.sum()
        if self.settings.reward == "outcome":
            p = (1 - OUTCOME_EXPLORE) * p + OUTCOME_EXPLORE / len(p)
        return p

    def choose(self, nominees: Mapping[str, np.ndarray], n_evaluated: int) -> str:
        """The arm whose nominee is proposed; the nominees wait for the next :meth:`judge`."""
        missing = [a for a in self.arms if a not in nominees]
        if missing:
            raise ValueError(f"every arm must nominate, but {missing} did not")
        self._nominees = {a: np.asarray(nominees[a]) for a in self.arms}
        draw = self.rng.random()  # drawn every time, so the stream does not depend on `after`
        if n_evaluated < self.settings.after:
            arm = DEFAULT_ARM if DEFAULT_ARM in self.arms else self.arms[0]
            self._chances = np.array([float(a == arm) for a in self.arms])
        else:
            self._chances = self.probabilities()
            arm = self.arms[int(np.searchsorted(np.cumsum(self._chances), draw * (1 - 1e-12)))]
        #: the row proposed (an outcome reward looks up its measured value)
        self.proposed = self._nominees[arm]
        self.picks[arm] += 1
        return arm
