"""``bo`` and ``parego``: BaCO-style Bayesian optimisation as wiring of the BO-step parts
(:mod:`bayestune.bostep`): a surrogate (GP, random forest, or the transfer GP) fitted to the
feasible observations, a feasibility classifier for hidden constraints, an acquisition weighted
by P(feasible) and the user's prior, maximised exhaustively or by multi-start local search, and
every third model suggestion from a Hamming trust region around the incumbent.

The two differ only in the *target transform*: ``bo`` models the objective; ``parego`` (several
objectives) a random Chebyshev scalarisation (:class:`~bayestune.models.targets.ChebyshevScalarization`,
Knowles 2006): each suggestion normalises every objective of the feasible evaluations to [0, 1]
(minimised, logged by the rule of :mod:`bayestune.models.targets`), draws a weight vector λ —
by default uniformly from ParEGO's lattice — and the surrogate learns the scalarised values; a
batch shares one λ and is planned with the kriging believer.

``trust_region.every=3`` is the default since it won leave-one-space-out over 15 spaces (7 GPU,
6 synthetic, 2 Halide) at 40, 60 and 100 evaluations (benchmarks/results/search-quality/issue17_trust_region.md).
The other options that change the search were measured against the default and lost; they live
in the ``experimental`` group, which warns when used.
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bayestune.bostep.arms import ArmHedge, ArmSettings
from bayestune.bostep.scorer import Scorer, ScoringChoice
from bayestune.bostep.step import STALL_ACTIONS, BOStep, ProposalSchedule, StepSettings
from bayestune.bostep.surrogates import ORDINAL_SCALE_CHOICES, GPSettings, ModelChoice, SurrogateFactory
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.forest import RandomForestSettings
from bayestune.models.targets import WEIGHT_DRAWS, ChebyshevScalarization
from bayestune.models.training import DEFAULT_MAX_TRAINING_POINTS, MEMORY_POLICIES
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.settings import ExperimentalOptionWarning, RenamedOptionWarning, Rule, Settings, put_option
from bayestune.strategies.base import Strategy, register

#: Option values of earlier versions that became experimental options: (old key, old value) ->
#: (new dotted key, value).
_LEGACY_VALUES = {
    ("acquisition", "portfolio"): ("experimental.portfolio", True),
    ("exploration", "cv"): ("experimental.contextual_variance", True),
    ("lengthscale_prior", "auto"): ("experimental.lengthscale_prior_auto", True),
}
#: Kernel Tuner emulations that were options of ``bo`` and are gone (the Kernel Tuner peers in
#: benchmarks/peers run the real thing).
_REMOVED_VALUES = {("acquisition", "advanced_multi"), ("exploration", "cv_paper")}


@dataclass(frozen=True)
class ExperimentalSettings(Settings):
    """Options measured against the default that lost and stay off (benchmarks/RESULTS.md); setting one warns."""

    EXPERIMENTAL: ClassVar[bool] = True

    model_selection_every: int = (
        0  # > 0: re-choose gp or rf by cross-validated likelihood every this many model suggestions
    )
    portfolio: bool = False  # EI/PI/LCB chosen per pick by discounted ranks (acquisition.portfolio)
    contextual_variance: bool = False  # Kernel Tuner's contextual-variance factor instead of the constant xi/kappa
    lengthscale_prior_auto: bool = False  # keep or drop the GP's length-scale prior by cross-validated likelihood
    ordinal_scale: str | None = None  # ordinals' warping: None (the space's rule) | log | linear | index | auto
    permutation_metric: str | None = None  # override every permutation's metric (BaCO Fig. 9's ablation)
    stall_after: int = (
        0  # a run whose best has not improved for this many model suggestions explores once every this many
    )
    stall_action: str = "thompson"  # the stall step: thompson (a posterior draw's minimum) | random
    memory_policy: str = "mixed"  # which rows max_training_points keeps: mixed | lru | best | reset (models.training)
    epsilon: float = 0.0  # chance of a random step instead of the model's pick (BaCO's epsilon-greedy)
    arms: ArmSettings = ArmSettings()  # a hedge over (model, acquisition) arms scored by their picks (bostep.arms)

    #: Experimental values that are a peer's own default: a HyperMapper file that leaves
    #: epsilon_greedy_threshold out means 0.1, so the warning says whose default it is.
    PEER_DEFAULTS: ClassVar[dict[str, tuple[Any, str]]] = {
        "epsilon": (
            0.1,
            "HyperMapper 2.0's default epsilon_greedy_threshold: a HyperMapper file without that key means it",
        )
    }

    @classmethod
    def from_options(cls, owner: str, options: Any, *, base: Any = None, path: str = "") -> ExperimentalSettings:
        """As for every group; the experimental warning names a peer's own default (:attr:`PEER_DEFAULTS`)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            settings = super().from_options(owner, options, base=base, path=path)
        peer = [
            f"{path}{k} = {v!r} is {why}"
            for k, (v, why) in cls.PEER_DEFAULTS.items()
            if isinstance(options, dict) and options.get(k) == v
        ]
        for w in caught:
            text = str(w.message)
            if issubclass(w.category, ExperimentalOptionWarning) and peer:
                text += " (" + "; ".join(peer) + ")"
            warnings.warn(text, w.category, stacklevel=3)
        return settings

    def rules(self) -> list[Rule]:
        return [
            self.at_least("model_selection_every", 0),
            self.one_of("ordinal_scale", ORDINAL_SCALE_CHOICES),
            self.at_least("stall_after", 0),
            self.one_of("stall_action", STALL_ACTIONS),
            self.one_of("memory_policy", MEMORY_POLICIES),
            ("epsilon", 0.0 <= self.epsilon <= 1.0, "`0 <= epsilon <= 1`"),
        ]


@dataclass(frozen=True)
class BOSettings(StepSettings):
    """Options of the ``bo`` strategy (``strategy_options`` in a scenario)."""

    RENAMED: ClassVar[dict[str, str]] = {
        **StepSettings.RENAMED,
        "rf_trees": "rf.trees",
        "rf_max_features": "rf.max_features",
        "rf_bootstrap": "rf.bootstrap",
        "rf_min_samples_split": "rf.min_samples_split",
        "noise": "gp.noise",
        "failure_variance": "gp.failure_variance",
        "lengthscale_prior": "gp.lengthscale_prior",
        "model_select_every": "experimental.model_selection_every",
        "permutation_metric": "experimental.permutation_metric",
        "ordinal_scale": "experimental.ordinal_scale",
        "memory_policy": "experimental.memory_policy",
        "epsilon": "experimental.epsilon",
        "stall_after": "experimental.stall_after",
        "stall_action": "experimental.stall_action",
    }

    model: str = "gp"  # gp | rf: the surrogate
    acquisition: str = "ei"  # ei | pi | lcb
    xi: float = 1e-4  # EI/PI improvement margin (latent units)
    kappa: float = 2.0  # LCB exploration weight
    max_training_points: int | None = (
        DEFAULT_MAX_TRAINING_POINTS  # cap on what the models learn from (models.training); None: all
    )
    gp: GPSettings = GPSettings()
    rf: RandomForestSettings = RandomForestSettings()
    experimental: ExperimentalSettings = ExperimentalSettings()

    @classmethod
    def translate(cls, owner: str, options: dict[str, Any], path: str = "") -> dict[str, Any]:
        """Old option values that became other options (``model: auto``, ``acquisition:
        portfolio``, ...) first, then the renamed keys."""
        options = dict(options)
        for key in ("acquisition", "exploration", "lengthscale_prior"):
            value = options.get(key)
            if not isinstance(value, str):
                continue
            if (key, value) in _REMOVED_VALUES:
                raise BayestuneError(
                    f"{owner}: {key}={value!r} was Kernel Tuner's method emulated inside bo and was "
                    "removed; its real counterpart is the benchmark peer kt_bayes_opt_multi_advanced"
                )
            if (key, value) in _LEGACY_VALUES:
                new, new_value = _LEGACY_VALUES[key, value]
                _renamed(owner, f"{key}={value!r}", f"{new}={new_value!r}")
                del options[key]
                if key == "lengthscale_prior":
                    options[key] = True
                put_option(options, new, new_value, owner)
            elif key == "exploration" and value == "constant":
                _renamed(owner, "exploration='constant'", "the default (no option)")
                del options[key]
        if isinstance(options.get("acquisition_search"), str):
            _renamed(owner, "acquisition_search=<method>", "acquisition_search.method")
            put_option(options, "acquisition_search.method", options.pop("acquisition_search"), owner)
        if options.get("model") == "auto":
            every = options.pop("model_select_every", 10)
            _renamed(owner, "model='auto'", f"experimental.model_selection_every={every!r}")
            options["model"] = "gp"
            put_option(options, "experimental.model_selection_every", every, owner)
        elif "model_select_every" in options:
            _renamed(owner, "model_select_every", "nothing (it only acted with model='auto')")
            options.pop("model_select_every")
        if "exploration" in options:
            raise BayestuneError(f"{owner}: exploration={options['exploration']!r} must be one of ['constant', 'cv']")
        return super().translate(owner, options, path)

    def rules(self) -> list[Rule]:
        return [
            *super().rules(),
            self.one_of("model", ("gp", "rf")),
            self.one_of("acquisition", ("ei", "pi", "lcb")),
            (
                "max_training_points",
                self.max_training_points is None or self.max_training_points >= 10,
                "`max_training_points >= 10`",
            ),
            (
                "gp.noise",
                self.gp.noise == "homoscedastic" or self.model == "gp",
                "`gp.noise='heteroscedastic'` needs model='gp'",
            ),
            (
                "experimental.arms.set",
                self.experimental.arms.set == "off"
                or (self.model == "gp" and self.experimental.model_selection_every == 0),
                "an arm hedge picks the model itself: it needs model='gp' and no experimental.model_selection_every",
            ),
            (
                "experimental.memory_policy",
                self.experimental.memory_policy == "mixed" or self.max_training_points is not None,
                "a memory policy other than 'mixed' needs `max_training_points` (its window)",
            ),
        ]


def _child_stream(rng: np.random.Generator) -> np.random.Generator:
    """An independent stream for a part that must not shift the run's own draws (spawning
    leaves ``rng``'s state as it was)."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator without a seed sequence: seed from its state
        return np.random.default_rng(zlib.crc32(repr(rng.bit_generator.state).encode()))


def _renamed(owner: str, old: str, new: str) -> None:
    warnings.warn(f"{owner}: option {old} is now spelled {new}", RenamedOptionWarning, stacklevel=5)


@register
class BayesianOptimization(Strategy):
    """The default strategy: see the module docstring."""

    name = "bo"
    settings_class = BOSettings
    settings: BOSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        s, x = self.settings, self.settings.experimental
        self.candidates = EnumeratedCandidates(space, s.acquisition_search.exhaustive_limit)
        self.surrogates = SurrogateFactory(
            space,
            rng,
            ModelChoice(
                model=s.model,
                gp=s.gp,
                rf=s.rf,
                log_transform=self._surrogate_log_transform,
                max_training_points=s.max_training_points,
                memory_policy=x.memory_policy,
                select_every=x.model_selection_every,
                lengthscale_prior_auto=x.lengthscale_prior_auto,
                ordinal_scale=x.ordinal_scale,
                permutation_metric=x.permutation_metric,
            ),
            self.objectives[0].name,
        )
        self.scorer = Scorer(
            space,
            rng,
            ScoringChoice(
                acquisition=s.acquisition,
                xi=s.xi,
                kappa=s.kappa,
                prior=s.prior,
                feasibility_threshold=s.feasibility.threshold,
                portfolio=x.portfolio,
                contextual_variance=x.contextual_variance,
            ),
            self.candidates,
        )
        self.schedule = ProposalSchedule(
            s.trust_region, epsilon=x.epsilon, stall_after=x.stall_after, stall_action=x.stall_action
        )
        self.step = BOStep(
            space,
            rng,
            target=self._targets,
            model=self.surrogates,
            scorer=self.scorer,
            schedule=self.schedule,
            feasibility=s.feasibility,
            search=s.acquisition_search,
            candidates=self.candidates,
            arms=ArmHedge(x.arms, _child_stream(rng)) if x.arms.arms else None,
        )

    def use_transfer(self, runs) -> None:
        """Learn with prior runs of the space (``bayestune.transfer.PriorRun``) as the GP's prior mean."""
        self.surrogates.use_transfer(runs)

    @property
    def encoder(self):
        """The input encoding the surrogate currently reads."""
        return self.surrogates.encoder

    def _targets(self, history: History) -> np.ndarray:
        """Per row of ``history``, the value the surrogate learns, to minimise (only feasible
        rows are read): the first objective."""
        return history.signed_Y()[:, 0]

    @property
    def _surrogate_log_transform(self) -> bool | str:
        """The surrogate's own log rule for the targets of :meth:`_targets`."""
        return self.settings.log_transform

    def suggest(self, history: History, n: int) -> np.ndarray:
        return self.step.suggest(history, n)


@dataclass(frozen=True)
class ScalarizationSettings(Settings):
    """ParEGO's random scalarisation (the ``scalarization`` option group of ``parego``)."""

    rho: float = 0.05  # weight of the linear term of the augmented Chebyshev function
    weights: str = "lattice"  # lattice | dirichlet: how each suggestion's weight vector is drawn
    lattice_steps: int | None = None  # s of the lattice (None: 10 for 2 objectives, 4 for 3, ...)

    def rules(self) -> list[Rule]:
        return [
            self.one_of("weights", WEIGHT_DRAWS),
            (
                "lattice_steps",
                self.lattice_steps is None or (isinstance(self.lattice_steps, int) and self.lattice_steps >= 1),
                "`lattice_steps >= 1` (an integer)",
            ),
            ("rho", self.rho >= 0, "`rho >= 0`"),
        ]


@dataclass(frozen=True)
class ParEGOSettings(BOSettings):
    """Options of the ``parego`` strategy: those of ``bo`` (``log_transform`` applies to each
    objective before normalising) plus the scalarisation's."""

    RENAMED: ClassVar[dict[str, str]] = {
        **BOSettings.RENAMED,
        "rho": "scalarization.rho",
        "weights": "scalarization.weights",
        "lattice_steps": "scalarization.lattice_steps",
    }

    # off: the incumbent of a scalarisation that changes every suggestion is no anchor
    trust_region: TrustRegionSettings = TrustRegionSettings(every=0)
    scalarization: ScalarizationSettings = ScalarizationSettings()

    def rules(self) -> list[Rule]:
        return [
            *super().rules(),
            (
                "gp.noise",
                self.gp.noise == "homoscedastic",
                "`gp.noise='homoscedastic'` (a scalarised target has no measured repeats)",
            ),
        ]


@register
class ParEGO(BayesianOptimization):
    """``bo`` on a Chebyshev scalarisation of several objectives: see the module docstring."""

    name = "parego"
    multi_objective = True
    settings_class = ParEGOSettings
    settings: ParEGOSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        s = self.settings.scalarization
        self.scalarization = ChebyshevScalarization(
            len(self.objectives),
            rho=s.rho,
            weights=s.weights,
            lattice_steps=s.lattice_steps,
            log_transform=self.settings.log_transform,
        )

    def _targets(self, history: History) -> np.ndarray:
        """The scalarised objectives of the feasible rows under a new weight vector (NaN elsewhere)."""
        targets = np.full(history.n, np.nan)
        targets[history.feasible] = self.scalarization(history.signed_Y()[history.feasible], self.rng)
        return targets

    @property
    def _surrogate_log_transform(self) -> bool | str:
        return False  # the objectives were logged before scalarising
