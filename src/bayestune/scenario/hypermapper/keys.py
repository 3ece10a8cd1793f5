"""Every key of the HyperMapper 2.0 and BaCO scenario schemas, and what bayestune does with it.

Both published schemas (``hypermapper/schema.json``, ``baco/schema.json``) set
``additionalProperties: false`` on the top level, on each input parameter, on
``design_of_experiment``, ``feasible_output`` and the ``*_mode`` objects; only the ``models``
object tolerates extra keys. So a key outside the schemas is an error with a "did you mean"
suggestion (a warning inside ``models``), as the peers' own validation would reject it.

A known key is handled one of four ways (:data:`HANDLINGS`):

* ``mapped``: read onto the equivalent bayestune setting;
* ``ignored``: no effect on which configurations are evaluated (log and output files, plots,
  printing), or the key holds the peer's default;
* ``approximated``: a setting of the peer's own model or search internals; bayestune uses its
  own algorithm, and warns when the file sets a value other than the peer's default;
* ``refused``: a real effect bayestune cannot reproduce from a scenario file; a value other
  than the peer's default is an error naming the bayestune way to get the effect.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bayestune.scenario.hypermapper.schemas import BACO_KEYS, HYPERMAPPER_KEYS

HANDLINGS = ("mapped", "ignored", "approximated", "refused")
#: bayestune's own top-level key: which peer's defaults a file gets ("hypermapper" or "baco").
OVERRIDE_KEY = "bayestune_read_as"
#: bayestune's own top-level key: its measurement policy (a native ``measurement`` section) for a peer's file.
MEASUREMENT_KEY = "bayestune_measurement"


@dataclass(frozen=True)
class KeyHandling:
    """What became of one key of a HyperMapper/BaCO scenario (``key`` is a JSON path such as
    ``models.number_of_trees``)."""

    key: str
    handling: str  # one of HANDLINGS
    detail: str


#: Top-level keys: key -> (handling, what bayestune does, the peer's default or None).
#: For ``approximated`` and ``refused`` keys the default is the value that needs no action.
_NO_DEFAULT = object()
TOP_LEVEL: dict[str, tuple[str, str, Any]] = {
    # ---- the problem
    "application_name": ("mapped", "the scenario's name", _NO_DEFAULT),
    "optimization_objectives": ("mapped", "the objectives (minimised)", _NO_DEFAULT),
    "input_parameters": ("mapped", "the search space", _NO_DEFAULT),
    "constraints": (
        "mapped",
        "bayestune's own key (in neither schema; BaCO writes its constraints under the parameters): "
        "known constraints of the space; no evidence of whose file it is",
        _NO_DEFAULT,
    ),
    "feasible_output": ("mapped", "feasible_output: the name of the black box's validity flag", _NO_DEFAULT),
    "design_of_experiment": ("mapped", "design: method and size of the initial design", _NO_DEFAULT),
    "optimization_iterations": (
        "mapped",
        "budget = number_of_samples + optimization_iterations x evaluations_per_optimization_iteration",
        _NO_DEFAULT,
    ),
    "evaluations_per_optimization_iteration": (
        "mapped",
        "batch (evaluations asked for together, in lock-step) and the budget; with priors, a batch's "
        "picks share piBO's n (prior.batch), as HyperMapper's iteration_number",
        _NO_DEFAULT,
    ),
    "optimization_method": ("mapped", "strategy", _NO_DEFAULT),
    OVERRIDE_KEY: (
        "mapped",
        "bayestune's own key: read the file with the defaults of 'hypermapper' (HyperMapper "
        "2.0) or 'baco' (absent: from the keys only one schema allows; neither: HyperMapper); "
        "the peers' schemas refuse it, so the environment variable BAYESTUNE_READ_AS says the same "
        "and leaves the file as it is",
        _NO_DEFAULT,
    ),
    MEASUREMENT_KEY: (
        "mapped",
        "bayestune's own key: a measurement section (racing, repeats, the confirmation; {} for bayestune's "
        "defaults); absent: one black-box run per configuration, no confirmation, as both peers run",
        _NO_DEFAULT,
    ),
    "models": (
        "mapped",
        "strategy option model: gp | rf (HyperMapper's default is a random forest, "
        "BaCO's a Gaussian process); number_of_trees, max_features, bootstrap, "
        "min_samples_split -> rf.trees, rf.max_features, rf.bootstrap, rf.min_samples_split "
        "(absent: the peer's defaults)",
        _NO_DEFAULT,
    ),
    "acquisition_function": (
        "mapped",
        "strategy option acquisition (EI -> ei, UCB -> lcb; TS: ei with a warning); BaCO weights by the priors only with EI_PIBO (ei with the priors) and its optimizer refuses EI_BOPRO, so bayestune does too; HyperMapper with any non-uniform prior",
        _NO_DEFAULT,
    ),
    "exploration_augmentation": ("mapped", "strategy option xi (EI's improvement margin)", _NO_DEFAULT),
    "model_weight": (
        "mapped",
        "BaCO's piBO strength: strategy option prior.beta, with n counting model steps "
        "(prior.count model_steps; absent: 10)",
        _NO_DEFAULT,
    ),
    "prior_beta": (
        "mapped",
        "HyperMapper's piBO strength: strategy option prior.beta, with n counting model steps "
        "(prior.count model_steps; absent or -1: 0.1 x optimization_iterations)",
        _NO_DEFAULT,
    ),
    "prior_method": (
        "approximated",
        "bayestune weights the acquisition by the prior (piBO); 'bopro' "
        "(HyperMapper's BOPrO posterior) is read as piBO too",
        "pibo",
    ),
    "model_posterior_weight": (
        "approximated",
        "read only by HyperMapper's BOPrO posterior (prior_method 'bopro'); bayestune runs piBO",
        10,
    ),
    "cma_es_sigma": (
        "approximated",
        "read only with acquisition_function_optimizer 'cma_es'; bayestune's local search maximises the acquisition",
        0.2,
    ),
    "cma_es_starting_points": (
        "approximated",
        "read only with acquisition_function_optimizer 'cma_es'; bayestune's local search maximises the acquisition",
        1,
    ),
    "cma_es_random_points": (
        "approximated",
        "read only with acquisition_function_optimizer 'cma_es'; bayestune's local search maximises the acquisition",
        10000,
    ),
    "local_search_starting_points": ("mapped", "strategy option acquisition_search.n_starts", _NO_DEFAULT),
    "local_search_random_points": ("mapped", "strategy option acquisition_search.n_samples", _NO_DEFAULT),
    # ---- no effect on the search
    "log_file": (
        "mapped",
        "`bayestune serve` logs there, under run_directory (absent: hypermapper_logfile.log "
        "/ baco_logfile.log); other commands log to stderr (`--debug`)",
        _NO_DEFAULT,
    ),
    "verbose_logging": ("ignored", "bayestune logs through Python's logging (`--debug`)", _NO_DEFAULT),
    "profiling": ("ignored", "profiling output of HyperMapper", _NO_DEFAULT),
    "profiling_file": ("ignored", "profiling output of HyperMapper", _NO_DEFAULT),
    "append_profiles": ("ignored", "profiling output of HyperMapper", _NO_DEFAULT),
    "output_image": ("ignored", "plots: `bayestune plot`", _NO_DEFAULT),
    "output_pareto_file": (
        "mapped",
        "several objectives: the feasible Pareto front of the samples, in their "
        "layout, under run_directory (absent: <application_name>_output_pareto.csv, "
        "as hm-compute-pareto writes it)",
        _NO_DEFAULT,
    ),
    "output_data_file": (
        "mapped",
        "the peer's sample CSV, in its header (absent or 'output_samples.csv': "
        "<application_name>_output_samples.csv, as both peers name it)",
        _NO_DEFAULT,
    ),
    "run_directory": (
        "mapped",
        "the directory of the output files (samples, Pareto front, log), from the "
        "working directory as in both peers; created if missing",
        _NO_DEFAULT,
    ),
    "timestamp": (
        "mapped",
        "the timestamp column of HyperMapper's sample CSV (BaCO's is always 'timestamp')",
        _NO_DEFAULT,
    ),
    "print_best": (
        "mapped",
        "the best point written before the end line, as HyperMapper writes it ('auto': in its Python mode, "
        "not in client-server mode; true: in both)",
        _NO_DEFAULT,
    ),
    "print_posterior_best": ("ignored", "printing only", _NO_DEFAULT),
    "print_parameter_importance": ("ignored", "`bayestune report` shows the parameter importance", _NO_DEFAULT),
    "number_of_cpus": ("ignored", "bayestune caps its BLAS threads itself", _NO_DEFAULT),
    "use_c_backend": ("ignored", "an implementation choice of HyperMapper", _NO_DEFAULT),
    "acquisition_function_optimizer": (
        "approximated",
        "bayestune's local search maximises the acquisition (HyperMapper's 'cma_es' too)",
        "local_search",
    ),
    # ---- the peer's internals: bayestune uses its own (warning when not the peer's default)
    "epsilon_greedy_threshold": (
        "mapped",
        "a random step with that chance: strategy option acquisition_search.epsilon (absent: 0 in BaCO, 0.1 in HyperMapper)",
        _NO_DEFAULT,
    ),
    "local_search_step_size": ("approximated", "bayestune's local search has its own neighbourhoods", 0.03),
    "local_search_from_best": ("approximated", "bayestune's local search also starts from the best points", True),
    "local_search_improvement_threshold": ("approximated", "bayestune's local search has its own stop rule", 0),
    "local_search_evaluation_limit": ("approximated", "bayestune's local search has its own stop rule", -1),
    "local_search_scalarization_weights": ("approximated", "ParEGO draws its own weights", [1]),
    "scalarization_method": ("approximated", "ParEGO uses the augmented Chebyshev scalarisation", "tchebyshev"),
    "weight_sampling": ("approximated", "ParEGO draws its weights on a lattice (option weights)", "flat"),
    "bounding_box_limits": ("approximated", "no bounding-box weights in ParEGO", [0, 1]),
    "scalarization_key": ("ignored", "a column name of HyperMapper's output", _NO_DEFAULT),
    "max_number_of_predictions": ("approximated", "bayestune sizes its candidate pools itself", 1000000),
    "noise": ("approximated", "bayestune's GP always fits a noise term", True),
    "predict_noiseless": ("approximated", "bayestune's acquisition uses the latent (noiseless) posterior", True),
    "normalize_inputs": (
        "approximated",
        "bayestune's GP always works on [0, 1] inputs (HyperMapper's default false is accepted silently too)",
        True,
    ),
    "standardize_objectives": ("approximated", "bayestune's GP always standardises its targets", True),
    "log_transform_output": (
        "mapped",
        "strategy option log_transform (absent: false, the raw values, as in both peers)",
        _NO_DEFAULT,
    ),
    "log_acq_value": ("approximated", "bayestune maximises the acquisition itself", False),
    "GP_model": ("approximated", "bayestune's own GP (BaCO section 3.2-3.3)", "botorch"),
    "use_STGP": ("approximated", "bayestune's own GP", True),
    "lengthscale_prior": (
        "approximated",
        "strategy option lengthscale_prior: Gamma(1.3, 0.1) is on by default",
        {"name": "none"},
    ),
    "outputscale_prior": ("approximated", "bayestune's own GP hyperparameter priors", {"name": "none"}),
    "noise_prior": ("approximated", "bayestune's own GP hyperparameter priors", {"name": "none"}),
    "multistart_hyperparameter_optimization": ("approximated", "bayestune's GP always uses random restarts", False),
    "hyperparameter_optimization_iterations": ("approximated", "bayestune's GP fit has its own limits", 5),
    # later BaCO versions (seen in BaCO's published benchmark scenarios, not in its schema file)
    "multistart_hyperparameter_optimization_initial_points": (
        "approximated",
        "bayestune's GP fit chooses its own random restarts",
        _NO_DEFAULT,
    ),
    "multistart_hyperparameter_optimization_iterations": (
        "approximated",
        "bayestune's GP fit has its own limits",
        _NO_DEFAULT,
    ),
    "reoptimise_hyperparameters_interval": ("approximated", "bayestune refits the GP every iteration", 1),
    "reuse_gp_hyperparameters": ("approximated", "bayestune refits the GP every iteration", False),
    "allow_duplicate_samples": (
        "approximated",
        "bayestune never evaluates a configuration twice (false asks for exactly that: mapped)",
        True,
    ),
    "naive_cot_rs": ("approximated", "bayestune samples the Chain-of-Trees uniformly", False),
    "objective_value_target": ("approximated", "no target value in bayestune's EI", -9999),
    "model_good_quantile": ("approximated", "bayestune has no good/bad density model", 0.05),
    "prior_limit_estimation_points": ("approximated", "bayestune normalises priors exactly", 10000),
    "prior_floor": ("approximated", "bayestune normalises priors exactly", 1e-6),
    "posterior_computation_lower_limit": ("approximated", "bayestune normalises priors exactly", 1e-8),
    "evolution_population_size": ("approximated", "the genetic strategy's own population size", 50),
    "evolution_generations": ("approximated", "the genetic strategy runs until the budget is spent", 150),
    "mutation_rate": ("approximated", "the genetic strategy's own mutation", 1),
    "evolution_crossover": ("approximated", "the genetic strategy's own crossover", False),
    "regularize_evolution": ("approximated", "the genetic strategy's own selection", False),
    "batch_size": ("approximated", "the genetic strategy's own tournament", 2),
    # ---- real effects bayestune cannot take from a scenario file
    "time_budget": (
        "mapped",
        "time_limit = 60 x time_budget seconds (minutes in BaCO and HyperMapper); -1: no limit",
        _NO_DEFAULT,
    ),
    "number_of_repetitions": (
        "ignored",
        "neither peer's optimizer reads it: each configuration runs once (repeats in bayestune: a measurement policy)",
        _NO_DEFAULT,
    ),
    "resume_optimization": (
        "mapped",
        "the evaluations of the sample CSV named by resume_optimization_file "
        "(BaCO) / resume_optimization_data (HyperMapper) are told to the optimizer "
        "before it asks for more",
        _NO_DEFAULT,
    ),
    "resume_optimization_file": (
        "mapped",
        "BaCO's CSV to resume from (absent: <application_name>_output_samples.csv)",
        _NO_DEFAULT,
    ),
    "resume_optimization_data": (
        "mapped",
        "HyperMapper's CSV to resume from (absent: <application_name>_output_samples.csv)",
        _NO_DEFAULT,
    ),
    "baco_mode": (
        "mapped",
        "default: bayestune calls the black box; client-server: `bayestune serve FILE` "
        "speaks the peer's protocol; exhaustive: the usual search with exhaustive_search_file "
        "as the black box (BaCO's schema allows it, its code never reads the file; "
        "optimization_method 'exhaustive' is BaCO's evaluate-everything)",
        {"mode": "default"},
    ),
    "hypermapper_mode": (
        "mapped",
        "default: bayestune calls the black box; client-server: `bayestune serve FILE` "
        "speaks the peer's protocol; exhaustive: the usual search with "
        "exhaustive_search_file as the black box, as HyperMapper's bo.py runs it (it "
        "does not evaluate every configuration)",
        {"mode": "default"},
    ),
    "prior_estimation_file": ("ignored", "read only with the 'estimate' prior, which is refused", _NO_DEFAULT),
    "prior_estimation_quantile": ("ignored", "read only with the 'estimate' prior, which is refused", _NO_DEFAULT),
    "estimate_multivariate_priors": ("refused", "no KDE priors in bayestune", False),
    "bandwidth_parameter": ("ignored", "read only with the 'estimate' prior, which is refused", _NO_DEFAULT),
    "bandwidth_n_factor": ("ignored", "read only with the 'estimate' prior, which is refused", _NO_DEFAULT),
    "custom_gaussian_prior_means": (
        "ignored",
        "read only with the 'custom_gaussian' prior, which is refused",
        _NO_DEFAULT,
    ),
    "custom_gaussian_prior_stds": (
        "ignored",
        "read only with the 'custom_gaussian' prior, which is refused",
        _NO_DEFAULT,
    ),
}


#: Keys whose default is the peer's own: (key -> peer -> default), where it differs from TOP_LEVEL's.
PEER_DEFAULTS: dict[str, dict[str, Any]] = {"normalize_inputs": {"hypermapper": False}}
#: Values bayestune reproduces exactly although the key is approximated in general: key -> (value, detail).
EXACT_VALUES: dict[str, tuple[Any, str]] = {
    "allow_duplicate_samples": (False, "no configuration is evaluated twice, as bayestune always does"),
}


def did_you_mean(key: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest allowed key, or an empty string."""
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key_message(key: str, allowed: Iterable[str], where: str) -> str:
    allowed = sorted(allowed)
    return (
        f"unknown key {key!r}{did_you_mean(key, allowed)}; the HyperMapper and BaCO schemas allow no other keys {where}"
    )


def is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` is the peer's default (numbers compared by value, not type)."""
    if default is _NO_DEFAULT:
        return False
    if isinstance(default, bool) or isinstance(value, bool):
        return value is default
    if isinstance(default, (int, float)) and isinstance(value, (int, float)):
        return float(value) == float(default)
    return bool(value == default)


def format_key_handling(records: Iterable[KeyHandling]) -> list[str]:
    """Lines for people (``bayestune validate``): the keys of a HyperMapper/BaCO file grouped
    by what became of them, e.g. ``mapped: models -> absent: random_forest (...)``."""
    records = list(records)
    lines = [f"read as {r.detail}" for r in records if r.handling == "read as"]
    for handling in HANDLINGS:
        for r in records:
            if r.handling == handling:
                lines.append(f"{handling}: {r.key} -> {r.detail}")
    return lines


def key_table() -> list[tuple[str, str, str, str]]:
    """Every top-level key of both schemas: (key, peers, handling, what bayestune does); the
    table of ``docs/scenario.md``."""
    rows = []
    for key, (handling, detail, default) in sorted(TOP_LEVEL.items(), key=lambda kv: kv[0].lower()):
        peers = (
            "both"
            if key in BACO_KEYS and key in HYPERMAPPER_KEYS
            else ("BaCO" if key in BACO_KEYS else "HyperMapper" if key in HYPERMAPPER_KEYS else "bayestune")
        )
        if handling in ("approximated", "refused") and default is not _NO_DEFAULT:
            detail = f"{detail} (the peer's default {default!r} is accepted silently)"
        rows.append((key, peers, handling, detail))
    return rows


def review_keys(data: Any) -> list[KeyHandling]:
    """What would become of each top-level key of a HyperMapper/BaCO mapping, without raising:
    ``unknown`` keys (with a suggestion) and ``refused`` values are listed beside the others, so
    a tool can show every problem of a file at once (loading stops at the first)."""
    out: list[KeyHandling] = []
    if not hasattr(data, "items"):
        return out
    for key, value in data.items():
        key = str(key)
        if key not in TOP_LEVEL:
            out.append(KeyHandling(key, "unknown", f"not a key of either schema{did_you_mean(key, TOP_LEVEL)}"))
            continue
        handling, detail, default = TOP_LEVEL[key]
        if handling in ("approximated", "refused") and is_default(value, default):
            handling, detail = "ignored", f"the peer's default {value!r}"
        out.append(KeyHandling(key, handling, detail))
    return out


#: Nested keys (``parent.key``) -> (handling, what bayestune does): the rows of docs/peers.md
#: below the top level; :mod:`.hypermapper` applies them.
NESTED: dict[str, tuple[str, str]] = {
    "input_parameters.parameter_type": ("mapped", "real, integer, ordinal, categorical, permutation: the same kinds"),
    "input_parameters.values": ("mapped", "bounds [min, max], the ordinal/categorical values, or [n] of a permutation"),
    "input_parameters.parameter_default": ("mapped", "the default; all given: the design evaluates it first"),
    "input_parameters.prior": (
        "mapped",
        "the parameter's prior (HyperMapper's Beta shapes, by rank on an ordinal "
        "of a HyperMapper file; probability lists; BaCO's truncated normal); "
        "estimate and custom_gaussian are refused",
    ),
    "input_parameters.prior_parameters": ("mapped", "BaCO's [mean, std] of a gaussian prior"),
    "input_parameters.transform": ("mapped", "log: the model sees log(x); values are still drawn uniformly"),
    "input_parameters.parametrization": ("mapped", "a permutation's metric (naive is read as hamming)"),
    "input_parameters.constraints": ("mapped", "known constraints, BaCO's permutation names translated"),
    "input_parameters.dependencies": ("ignored", "the Chain-of-Trees finds the dependencies itself"),
    "input_parameters.custom_gaussian_prior_means": (
        "ignored",
        "HyperMapper's: read only with the custom_gaussian prior, which is refused",
    ),
    "input_parameters.custom_gaussian_prior_stds": (
        "ignored",
        "HyperMapper's: read only with the custom_gaussian prior, which is refused",
    ),
    "design_of_experiment.doe_type": (
        "mapped",
        "design method: random sampling -> hypermapper (HyperMapper 2.0: drawn from the priors, its "
        "default-or-random point first) or cot (BaCO: uniform), latin hypercubes -> lhs, grid_search -> grid "
        "(HyperMapper 2.0: every grid configuration, a real at 10 points, and no optimization iterations)",
    ),
    "design_of_experiment.number_of_samples": ("mapped", "the design's size (default 10)"),
    "design_of_experiment.allow_repetitions": ("approximated", "the design never repeats a configuration"),
    "feasible_output.name": ("mapped", "feasible_output: the flag's column (default Valid)"),
    "feasible_output.true_value": ("mapped", "a flag in true, 1, yes, y (any case) is feasible"),
    "feasible_output.false_value": ("mapped", "must not read as feasible"),
    "feasible_output.enable_feasible_predictor": (
        "mapped",
        "the flag is read and bo's feasibility classifier learns it",
    ),
    "feasible_output.feasibility_threshold": ("mapped", "strategy option feasibility.threshold"),
    "feasible_output.enable_feasible_predictor_grid_search_on_recall_and_precision": (
        "ignored",
        "a development aid of HyperMapper",
    ),
    "feasible_output.feasible_predictor_grid_search_validation_file": ("ignored", "a development aid of HyperMapper"),
    "models.model": ("mapped", "strategy option model: random_forest -> rf, gaussian_process -> gp"),
    "models.number_of_trees": ("mapped", "strategy option rf.trees"),
    "models.max_features": ("mapped", "strategy option rf.max_features"),
    "models.bootstrap": ("mapped", "strategy option rf.bootstrap"),
    "models.min_samples_split": ("mapped", "strategy option rf.min_samples_split"),
    "models.use_all_data_to_fit_mean": ("approximated", "bayestune's forest fits mean and spread on its own samples"),
    "models.use_all_data_to_fit_variance": (
        "approximated",
        "bayestune's forest fits mean and spread on its own samples",
    ),
    "*_mode.mode": (
        "mapped",
        "default: bayestune calls the black box; client-server: `bayestune serve FILE`; "
        "exhaustive: the table below answers",
    ),
    "*_mode.exhaustive_search_file": (
        "mapped",
        "the black box of the exhaustive mode (kind 'table'): a CSV of "
        "every configuration's outputs, looked up by parameter values, its "
        "path from the working directory; a configuration it lacks is an "
        "'invalid' failure",
    ),
}
