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
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bayestune.acquisition.functions import DEFAULT_KAPPA, DEFAULT_XI
from bayestune.bostep.escape import add_escape
from bayestune.bostep.proposers import ProposalSchedule
from bayestune.bostep.scorer import PeerPriorSettings, Scorer
from bayestune.bostep.stall import StallSettings, StallStep
from bayestune.bostep.step import BOStep, StepSettings
from bayestune.bostep.surrogates import ORDINAL_SCALE_CHOICES, GPSettings, SurrogateFactory
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.models.forest import RandomForestSettings
from bayestune.models.targets import WEIGHT_DRAWS, ChebyshevScalarization
from bayestune.models.training import DEFAULT_MAX_TRAINING_POINTS, MEMORY_POLICIES
from bayestune.search.candidates import EnumeratedCandidates
from bayestune.search.local_search import EXHAUSTIVE_LIMIT
from bayestune.search.trust_region import TrustRegionSettings
from bayestune.settings import EXIT_VERSION, RenamedOptionWarning, Rule, Settings, put_option
from bayestune.strategies.base import Strategy, register

#: Option values and flat options of earlier versions that were removed, and why (the
#: experiments among them lost in the benchmarks).
_REMOVED_VALUES = {
    ("acquisition", "advanced_multi"): "Kernel Tuner's method emulated inside bo; its real counterpart is "
    "the benchmark peer kt_bayes_opt_multi_advanced",
    ("exploration", "cv_paper"): "Kernel Tuner's method emulated inside bo; its real counterpart is "
    "the benchmark peer kt_bayes_opt_multi_advanced",
    ("acquisition", "portfolio"): "an experiment that lost; the benchmark contender bo_kt keeps the portfolio",
    ("exploration", "cv"): "an experiment that lost; the benchmark contender bo_kt keeps contextual variance",
    ("lengthscale_prior", "auto"): "an experiment that lost (benchmarks/results/ablations)",
    ("model", "auto"): "model selection by cross-validation, an experiment that lost",
}
_REMOVED_OPTIONS = {
    "model_select_every": "it only acted with model='auto', an experiment that lost",
    "permutation_metric": "BaCO Fig. 9's ablation, set by no benchmark",
    "failure_variance": "an ablation set by no benchmark; failed locations always shrink the GP's variance",
    "stall_action": "the stall step is the posterior draw's minimum (experimental.stall)",
}
#: Options of the ``experimental`` group that were removed, and why.
_REMOVED_EXPERIMENTS = {
    "model_selection_every": "model selection by cross-validation lost",
    "portfolio": "it lost; the benchmark contender bo_kt keeps the portfolio",
    "contextual_variance": "it lost; the benchmark contender bo_kt keeps contextual variance",
    "lengthscale_prior_auto": "it lost (benchmarks/results/ablations)",
    "permutation_metric": "BaCO Fig. 9's ablation, set by no benchmark",
    "stall_action": "the stall step is the posterior draw's minimum (experimental.stall)",
    "arms": "the arm hedge lost (benchmarks/results/search-quality/adaptive_loso.md)",
}


def _refuse(owner: str, options: dict[str, Any], removed: dict[str, str], path: str = "") -> None:
    """Raise for an option of ``removed`` (name -> why) in ``options``."""
    for key in options:
        if key in removed:
            raise BayestuneError(f"{owner}: option {path}{key} was removed: {removed[key]}")


def _is_quantile_or_none(q: Any) -> bool:
    return q is None or (isinstance(q, (int, float)) and not isinstance(q, bool) and 0.0 <= q <= 1.0)


@dataclass(frozen=True)
class ExperimentalSettings(Settings):
    """Options measured against the default that lost and stay off (benchmarks/RESULTS.md); setting
    one warns. Each goes in 0.3.0 unless a benchmark picks it by then (CHANGELOG.md)."""

    EXPERIMENTAL: ClassVar[bool] = True
    RENAMED: ClassVar[dict[str, str]] = {"stall_after": "stall.after"}

    ordinal_scale: str | None = None  # ordinals' warping: None (the space's rule) | log | linear | index | auto
    memory_policy: str = "mixed"  # which rows max_training_points keeps: mixed | lru | best | reset (models.training)
    stall: StallSettings = StallSettings()  # a stalled run's exploration step (bostep.stall)
    failure_quantile: float | None = (
        None  # failed configurations enter the model's mean at this quantile of the observed values (bostep.surrogates)
    )

    @classmethod
    def translate(cls, owner: str, options: dict[str, Any], path: str = "") -> dict[str, Any]:
        """Removed experiments are refused with the reason, then the renamed keys move."""
        _refuse(owner, options, _REMOVED_EXPERIMENTS, path)
        return super().translate(owner, options, path)

    def rules(self) -> list[Rule]:
        return [
            self.one_of("ordinal_scale", ORDINAL_SCALE_CHOICES),
            self.one_of("memory_policy", MEMORY_POLICIES),
            ("failure_quantile", _is_quantile_or_none(self.failure_quantile), "`0 <= failure_quantile <= 1` or null"),
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
        "lengthscale_prior": "gp.lengthscale_prior",
        "ordinal_scale": "experimental.ordinal_scale",
        "memory_policy": "experimental.memory_policy",
        "epsilon": "acquisition_search.epsilon",
        "stall_after": "experimental.stall.after",
    }

    prior: PeerPriorSettings = PeerPriorSettings()
    model: str = "gp"  # gp | rf: the surrogate
    acquisition: str = "ei"  # ei | pi | lcb
    xi: float = DEFAULT_XI  # EI/PI improvement margin (latent units)
    kappa: float = DEFAULT_KAPPA  # LCB exploration weight
    max_training_points: int | None = (
        DEFAULT_MAX_TRAINING_POINTS  # cap on what the models learn from (models.training); None: all
    )
    gp: GPSettings = GPSettings()
    rf: RandomForestSettings = RandomForestSettings()
    experimental: ExperimentalSettings = ExperimentalSettings()

    @classmethod
    def translate(cls, owner: str, options: dict[str, Any], path: str = "") -> dict[str, Any]:
        """Removed options and values are refused with the reason; ``acquisition_search:
        <method>`` and ``experimental.epsilon`` (peer behaviour, not an experiment) move to their
        places; then the renamed keys."""
        options = dict(options)
        _refuse(owner, options, _REMOVED_OPTIONS)
        for key in ("acquisition", "exploration", "lengthscale_prior", "model"):
            value = options.get(key)
            if isinstance(value, str) and (key, value) in _REMOVED_VALUES:
                raise BayestuneError(f"{owner}: {key}={value!r} was removed: {_REMOVED_VALUES[key, value]}")
        if options.get("exploration") == "constant":
            _renamed(owner, "exploration='constant'", "the default (no option)")
            del options["exploration"]
        if isinstance(options.get("acquisition_search"), str):
            _renamed(owner, "acquisition_search=<method>", "acquisition_search.method")
            put_option(options, "acquisition_search.method", options.pop("acquisition_search"), owner)
        experimental = options.get("experimental")
        if isinstance(experimental, dict) and "epsilon" in experimental:
            _renamed(owner, "experimental.epsilon", "acquisition_search.epsilon")
            experimental = dict(experimental)
            put_option(options, "acquisition_search.epsilon", experimental.pop("epsilon"), owner)
            options["experimental"] = experimental
        if "exploration" in options:
            raise BayestuneError(f"{owner}: exploration={options['exploration']!r} must be one of ['constant']")
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
                "experimental.memory_policy",
                self.experimental.memory_policy == "mixed" or self.max_training_points is not None,
                "a memory policy other than 'mixed' needs `max_training_points` (its window)",
            ),
        ]


def _renamed(owner: str, old: str, new: str) -> None:
    warnings.warn(
        f"{owner}: option {old} is now spelled {new} (the old spelling goes in {EXIT_VERSION})",
        RenamedOptionWarning,
        stacklevel=5,
    )


@register
class BayesianOptimization(Strategy):
    """The default strategy: see the module docstring."""

    name = "bo"
    settings_class = BOSettings
    settings: BOSettings

    def __init__(self, space, objectives, rng, **options: Any) -> None:
        super().__init__(space, objectives, rng, **options)
        s = self.settings
        self.candidates = EnumeratedCandidates(space, EXHAUSTIVE_LIMIT)
        self.surrogates = SurrogateFactory(space, rng, s, self._surrogate_log_transform, self.objectives[0].name)
        self.scorer = Scorer(
            space,
            rng,
            self.candidates,
            prior=s.prior,
            feasibility=s.feasibility,
            acquisition=s.acquisition,
            xi=s.xi,
            kappa=s.kappa,
        )
        stall = s.experimental.stall
        self.schedule = ProposalSchedule(
            s.acquisition_search, s.trust_region, *([StallStep(stall)] if stall.after else [])
        )
        add_escape(self.schedule, s.trust_region)
        self.step = BOStep(
            space,
            rng,
            target=self._targets,
            model=self.surrogates,
            scorer=self.scorer,
            schedule=self.schedule,
            feasibility=s.feasibility,
            candidates=self.candidates,
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

    def rules(self) -> list[Rule]:
        return [self.one_of("weights", WEIGHT_DRAWS), ("rho", self.rho >= 0, "`rho >= 0`")]


@dataclass(frozen=True)
class ParEGOSettings(BOSettings):
    """Options of the ``parego`` strategy: those of ``bo`` (``log_transform`` applies to each
    objective before normalising) plus the scalarisation's."""

    RENAMED: ClassVar[dict[str, str]] = {
        **BOSettings.RENAMED,
        "rho": "scalarization.rho",
        "weights": "scalarization.weights",
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
