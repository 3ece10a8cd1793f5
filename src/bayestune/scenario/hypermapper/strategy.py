"""The strategy and its options for a HyperMapper 2.0 / BaCO file, with the defaults of the peer
the file is written for (:mod:`.peers`): what the peer's optimizer would do with the
same file is what ``bo`` is told to do, key by key."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bayestune.scenario.hypermapper.keys import KeyHandling, did_you_mean, is_default
from bayestune.scenario.hypermapper.peers import Peer
from bayestune.scenario.hypermapper.schemas import MODEL_KEYS
from bayestune.scenario.records import DEFAULT_MULTI_OBJECTIVE_STRATEGY
from bayestune.settings import put_option
from bayestune.space.inference import is_integral, is_number
from bayestune.space.spec import SpecContext, show

logger = logging.getLogger(__name__)

#: HyperMapper/BaCO ``optimization_method`` -> our strategy name.
HM_STRATEGIES = {
    "bayesian_optimization": "bo",
    "prior_guided_optimization": "bo",
    "random_scalarizations": "bo",
    "local_search": "local",
    "evolutionary_optimization": "genetic",
    "exhaustive": "cot_random",  # random order without repeats: every configuration, given the budget
}
#: HyperMapper/BaCO ``acquisition_function`` -> the ``acquisition`` option of ``bo`` (EI is its default).
HM_ACQUISITIONS = {"EI": "ei", "EI_PIBO": "ei", "UCB": "lcb"}
#: BaCO weights the acquisition by the priors only with this acquisition function (``bo/optimize.py``).
BACO_PRIOR_ACQUISITION = "EI_PIBO"
#: BaCO's wrappers of other tuners: run with our BO instead (logged).
FOREIGN_METHODS = ("opentuner", "ytopt", "ytopt_ccs")
#: Random-forest keys of ``models`` -> options of ``bo``, and bayestune's own defaults of them.
_RF_OPTIONS = {
    "number_of_trees": "rf.trees",
    "max_features": "rf.max_features",
    "bootstrap": "rf.bootstrap",
    "min_samples_split": "rf.min_samples_split",
}
_RF_BAYESTUNE = {"number_of_trees": 100, "max_features": 0.5, "bootstrap": True, "min_samples_split": 2}
#: Numeric top-level keys read onto options of the model-based strategies: key, option, check, rule.
_BO_NUMERIC_OPTIONS = (
    ("exploration_augmentation", "xi", lambda v: is_number(v) and v >= 0, "a number >= 0"),
    (
        "local_search_starting_points",
        "acquisition_search.n_starts",
        lambda v: is_integral(v) and v >= 1,
        "an integer >= 1",
    ),
    (
        "local_search_random_points",
        "acquisition_search.n_samples",
        lambda v: is_integral(v) and v >= 1,
        "an integer >= 1",
    ),
)


def set_option(options: dict[str, Any], dotted: str, value: Any) -> None:
    """``options["a"]["b"] = value`` for the option ``"a.b"`` of a strategy's option group (a
    later peer key replaces an earlier one, as in the peer)."""
    put_option(options, dotted, value, "a HyperMapper/BaCO file", replace_given=True)


def _strategy(data: Mapping[str, Any], ctx: SpecContext, n_objectives: int, handled: list[KeyHandling]) -> str:
    opt = data.get("optimization_method", "bayesian_optimization")
    if opt in FOREIGN_METHODS:
        logger.warning(
            "%s: optimization_method %r wraps another tuner; using bayestune's 'bo' instead", ctx.source, opt
        )
        handled.append(
            KeyHandling("optimization_method", "approximated", f"{opt!r} wraps another tuner; bayestune's 'bo'")
        )
        return "bo"
    if opt not in HM_STRATEGIES:
        ctx.fail(
            ("optimization_method",),
            f"must be one of {sorted(HM_STRATEGIES) + list(FOREIGN_METHODS)}, but got {show(opt)}",
        )
    strategy = HM_STRATEGIES[opt]
    # HyperMapper's BO scalarises several objectives at random
    return DEFAULT_MULTI_OBJECTIVE_STRATEGY if n_objectives > 1 and strategy == "bo" else strategy


def _model(data: Mapping[str, Any], ctx: SpecContext, peer: Peer, handled: list[KeyHandling]) -> str:
    models = data.get("models")
    if models is None:
        handled.append(KeyHandling("models", "mapped", f"absent: {peer.model} ({peer.title}'s default)"))
        return peer.model
    if not isinstance(models, Mapping):
        ctx.fail(("models",), f'expected an object such as {{"model": "random_forest"}}, but got {show(models)}')
    model = models.get("model")
    if model not in ("gaussian_process", "random_forest"):
        ctx.fail(("models", "model"), f"must be one of ['gaussian_process', 'random_forest'], but got {show(model)}")
    for sub in models:
        if sub == "model":
            continue
        if sub not in MODEL_KEYS:  # both schemas tolerate extra keys here
            logger.warning("%s: models: unknown key %r%s ignored", ctx.source, sub, did_you_mean(str(sub), MODEL_KEYS))
            handled.append(KeyHandling(f"models.{sub}", "ignored", "not a key of either schema"))
        elif sub in _RF_OPTIONS:
            handled.append(KeyHandling(f"models.{sub}", "mapped", f"strategy option {_RF_OPTIONS[sub]}"))
        else:
            handled.append(
                KeyHandling(
                    f"models.{sub}", "approximated", "bayestune's random forest fits mean and spread on its own samples"
                )
            )
            logger.warning(
                "%s: models.%s has no bayestune equivalent: bayestune's random forest fits "
                "mean and spread on its own samples",
                ctx.source,
                sub,
            )
    return model


def _forest(data: Mapping[str, Any], ctx: SpecContext, peer: Peer, options: dict[str, Any]) -> None:
    """The peer's forest: the file's settings, else the peer's defaults."""
    models = data.get("models")
    given = models if isinstance(models, Mapping) else {}
    options["model"] = "rf"
    for key, option in _RF_OPTIONS.items():
        value = given.get(key, peer.rf[key])
        ok = (
            isinstance(value, bool)
            if key == "bootstrap"
            else (
                is_number(value) and 0 < value <= 1
                if key == "max_features"
                else is_integral(value) and (1 <= value <= 1000 if key == "number_of_trees" else value >= 2)
            )
        )
        if not ok:
            ctx.fail(("models", key), f"out of the schema's range, got {show(value)}")
        if value != _RF_BAYESTUNE[key] or isinstance(value, bool) != isinstance(_RF_BAYESTUNE[key], bool):
            set_option(options, option, value if key in ("bootstrap", "max_features") else int(value))


def _acquisition(
    data: Mapping[str, Any], ctx: SpecContext, options: dict[str, Any], handled: list[KeyHandling]
) -> None:
    acquisition = data.get("acquisition_function")
    if acquisition is None:
        return
    if acquisition in HM_ACQUISITIONS:
        if HM_ACQUISITIONS[acquisition] != "ei":
            options["acquisition"] = HM_ACQUISITIONS[acquisition]
    elif acquisition == "EI_BOPRO":  # in BaCO's schema, but its optimize.py raises on it
        ctx.fail(
            ("acquisition_function",),
            "'EI_BOPRO' is refused by BaCO's own optimizer ('Invalid acquisition function specified'); "
            "use 'EI_PIBO' for the priors",
        )
    elif acquisition == "TS":  # HyperMapper's Thompson sampling for random scalarisations
        logger.warning("%s: acquisition_function 'TS' has no bayestune counterpart; using EI", ctx.source)
        handled.append(KeyHandling("acquisition_function", "approximated", "'TS' (Thompson sampling): EI instead"))
    else:
        ctx.fail(
            ("acquisition_function",), f"must be one of {sorted(HM_ACQUISITIONS) + ['TS']}, but got {show(acquisition)}"
        )


def _epsilon(
    data: Mapping[str, Any], ctx: SpecContext, peer: Peer, options: dict[str, Any], handled: list[KeyHandling]
) -> None:
    epsilon = data.get("epsilon_greedy_threshold", peer.epsilon)
    if not (is_number(epsilon) and 0 <= epsilon <= 1):
        ctx.fail(("epsilon_greedy_threshold",), f"`0 <= value <= 1` must hold, but got {show(epsilon)}")
    if epsilon:
        set_option(options, "acquisition_search.epsilon", float(epsilon))
        source = "the file's" if "epsilon_greedy_threshold" in data else f"absent: {peer.title}'s default"
        handled.append(
            KeyHandling(
                "epsilon_greedy_threshold",
                "mapped",
                f"{source} {epsilon}: a random step with that chance (acquisition_search.epsilon)",
            )
        )


def _prior(
    data: Mapping[str, Any],
    ctx: SpecContext,
    peer: Peer,
    n_doe: int,
    options: dict[str, Any],
    handled: list[KeyHandling],
) -> None:
    """piBO as the peer runs it: its strength key (absent: its default) and n counting model steps."""
    key = peer.prior_weight_key
    beta = data.get(key, -1 if key == "prior_beta" else None)
    if beta is not None and not (is_number(beta) and (beta >= 0 or (key == "prior_beta" and beta == -1))):
        ctx.fail(
            (key,),
            f"expected a number >= 0{' (or -1: 0.1 x optimization_iterations)' if key == 'prior_beta' else ''}, "
            f"but got {show(beta)}",
        )
    if beta is None or beta == -1:
        beta = peer.prior_beta(data)
        handled.append(KeyHandling(key, "mapped", f"absent: {peer.title}'s piBO strength {beta:g}: prior.beta"))
    set_option(options, "prior.beta", float(beta))
    set_option(options, "prior.count", "model_steps")
    set_option(options, "prior.design", int(n_doe))
    per_iteration = data.get("evaluations_per_optimization_iteration", 1)
    if is_integral(per_iteration) and per_iteration > 1:  # bo.py: one iteration_number for the batch's picks
        set_option(options, "prior.batch", int(per_iteration))
        handled.append(
            KeyHandling(
                "evaluations_per_optimization_iteration",
                "mapped",
                f"batches of {per_iteration} "
                "evaluations asked together; their picks share piBO's n, as HyperMapper's "
                "iteration_number (prior.batch)",
            )
        )


def peer_options(
    data: Mapping[str, Any],
    ctx: SpecContext,
    peer: Peer,
    *,
    n_objectives: int,
    n_doe: int,
    has_prior: bool,
    handled: list[KeyHandling],
) -> tuple[str, dict[str, Any]]:
    """The strategy and its options for ``data`` read as ``peer``'s file."""
    strategy = _strategy(data, ctx, n_objectives, handled)
    model = _model(data, ctx, peer, handled)
    options: dict[str, Any] = {}
    model_based = strategy in ("bo", DEFAULT_MULTI_OBJECTIVE_STRATEGY)
    other = [k for k, *_ in _BO_NUMERIC_OPTIONS if k in data] + [
        k for k in ("log_transform_output", "acquisition_function", peer.prior_weight_key) if k in data
    ]
    if not model_based:
        for key in other:
            handled.append(KeyHandling(key, "ignored", f"only read by the model-based strategies, not {strategy!r}"))
        return strategy, options
    if model == "random_forest":
        _forest(data, ctx, peer, options)
    _acquisition(data, ctx, options, handled)
    _epsilon(data, ctx, peer, options, handled)
    fo = data.get("feasible_output")
    threshold = fo.get("feasibility_threshold") if isinstance(fo, Mapping) else None
    if threshold is not None and not is_default(threshold, 0.1):
        set_option(options, "feasibility.threshold", float(threshold))
    log_output = data.get("log_transform_output", False)
    if not isinstance(log_output, bool):
        ctx.fail(("log_transform_output",), f"expected true or false, but got {show(log_output)}")
    options["log_transform"] = log_output
    if "log_transform_output" not in data:
        handled.append(
            KeyHandling(
                "log_transform_output", "mapped", f"absent: {peer.title} models the raw values (log_transform false)"
            )
        )
    for key, option, check, rule in _BO_NUMERIC_OPTIONS:
        if key in data:
            if not check(data[key]):
                ctx.fail((key,), f"expected {rule}, but got {show(data[key])}")
            set_option(options, option, float(data[key]) if option == "xi" else int(data[key]))
    if has_prior and _uses_priors(data, peer, handled):
        _prior(data, ctx, peer, n_doe, options, handled)
    return strategy, options


def _uses_priors(data: Mapping[str, Any], peer: Peer, handled: list[KeyHandling]) -> bool:
    """HyperMapper runs piBO whenever a prior is not uniform; BaCO only with ``EI_PIBO``."""
    acquisition = data.get("acquisition_function", "EI")
    if peer.key == "hypermapper" or acquisition == BACO_PRIOR_ACQUISITION:
        return True
    handled.append(
        KeyHandling(
            "input_parameters.prior",
            "ignored",
            f"BaCO uses the priors only with acquisition_function {BACO_PRIOR_ACQUISITION!r}, "
            f"not {acquisition!r}: uniform, as in BaCO",
        )
    )
    return False


def describe(peer: Peer, why: str, strategy: str, options: Mapping[str, Any]) -> str:
    """One line for ``bayestune validate``: whose file, and the defaults that follow."""
    parts = [f"strategy {strategy}"]
    if options.get("model") == "rf":
        trees = options.get("rf", {}).get("trees", _RF_BAYESTUNE["number_of_trees"])
        parts.append(f"random forest ({trees} trees)")
    elif strategy in ("bo", DEFAULT_MULTI_OBJECTIVE_STRATEGY):
        parts.append("Gaussian process")
    if strategy in ("bo", DEFAULT_MULTI_OBJECTIVE_STRATEGY):
        parts.append(f"ε = {options.get('acquisition_search', {}).get('epsilon', 0)} random steps")
        parts.append("log of the output" if options.get("log_transform") else "raw output values")
        prior = options.get("prior")
        if prior:
            parts.append(f"piBO beta {prior['beta']:g} decaying over model steps")
    return f"{peer.title} ({why}): " + ", ".join(parts)


def repetitions(data: Mapping[str, Any], ctx: SpecContext, handled: list[KeyHandling]) -> None:
    """``number_of_repetitions``: in both schemas, read by neither peer's optimizer."""
    value = data.get("number_of_repetitions", 1)
    if not (is_integral(value) and value >= 1):
        ctx.fail(("number_of_repetitions",), f"`value >= 1` (an integer) must hold, but got {show(value)}")
    if "number_of_repetitions" in data:
        handled.append(
            KeyHandling(
                "number_of_repetitions",
                "ignored",
                "neither peer's optimizer reads it: each configuration runs once "
                "(repeats in bayestune: a measurement policy)",
            )
        )
