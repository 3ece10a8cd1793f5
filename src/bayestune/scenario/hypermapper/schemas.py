"""The keys the two published schemas allow (``hypermapper/schema.json``, ``baco/schema.json``):
which peer a key belongs to, and the keys of each nested object.

Kept apart from :mod:`bayestune.scenario.hypermapper.keys`, which says what bayestune does with
each key: these lists change only when a peer's schema does.
"""

from __future__ import annotations

#: Keys of one input parameter (additionalProperties: false in both schemas).
PARAMETER_KEYS = (
    "parameter_type",
    "values",
    "parameter_default",
    "prior",
    "prior_parameters",
    "transform",
    "parametrization",
    "constraints",
    "dependencies",
    "custom_gaussian_prior_means",
    "custom_gaussian_prior_stds",
)
#: Keys of ``design_of_experiment`` (additionalProperties: false).
DOE_KEYS = ("doe_type", "number_of_samples", "allow_repetitions")
#: Keys of ``feasible_output`` (additionalProperties: false).
FEASIBLE_KEYS = (
    "name",
    "true_value",
    "false_value",
    "enable_feasible_predictor",
    "feasibility_threshold",
    "enable_feasible_predictor_grid_search_on_recall_and_precision",
    "feasible_predictor_grid_search_validation_file",
)
#: Keys of ``models`` (extra keys tolerated by both schemas).
MODEL_KEYS = (
    "model",
    "number_of_trees",
    "max_features",
    "bootstrap",
    "min_samples_split",
    "use_all_data_to_fit_mean",
    "use_all_data_to_fit_variance",
)
#: Keys of ``baco_mode`` / ``hypermapper_mode`` (additionalProperties: false).
MODE_KEYS = ("mode", "exhaustive_search_file")

#: Top-level keys of BaCO's schema (baco/schema.json).
BACO_KEYS = frozenset(
    (
        "acquisition_function",
        "acquisition_function_optimizer",
        "allow_duplicate_samples",
        "application_name",
        "design_of_experiment",
        "epsilon_greedy_threshold",
        "evolution_crossover",
        "evolution_generations",
        "evolution_population_size",
        "exploration_augmentation",
        "feasible_output",
        "baco_mode",
        "input_parameters",
        "lengthscale_prior",
        "local_search_from_best",
        "local_search_improvement_threshold",
        "local_search_random_points",
        "local_search_starting_points",
        "local_search_step_size",
        "log_acq_value",
        "log_file",
        "log_transform_output",
        "model_good_quantile",
        "model_weight",
        "models",
        "multistart_hyperparameter_optimization",
        "hyperparameter_optimization_iterations",
        "GP_model",
        "mutation_rate",
        "naive_cot_rs",
        "noise",
        "noise_prior",
        "normalize_inputs",
        "number_of_repetitions",
        "objective_value_target",
        "optimization_iterations",
        "optimization_method",
        "optimization_objectives",
        "output_data_file",
        "outputscale_prior",
        "predict_noiseless",
        "prior_estimation_file",
        "prior_estimation_quantile",
        "prior_floor",
        "prior_limit_estimation_points",
        "regularize_evolution",
        "reoptimise_hyperparameters_interval",
        "resume_optimization",
        "resume_optimization_file",
        "reuse_gp_hyperparameters",
        "run_directory",
        "standardize_objectives",
        "time_budget",
        "timestamp",
        "use_STGP",
        "multistart_hyperparameter_optimization_initial_points",
        "multistart_hyperparameter_optimization_iterations",
    )
)
#: Top-level keys of HyperMapper 2.0's schema (hypermapper/schema.json).
HYPERMAPPER_KEYS = frozenset(
    (
        "application_name",
        "log_file",
        "verbose_logging",
        "profiling",
        "noise",
        "profiling_file",
        "append_profiles",
        "number_of_cpus",
        "max_number_of_predictions",
        "optimization_iterations",
        "time_budget",
        "number_of_repetitions",
        "hypermapper_mode",
        "models",
        "output_image",
        "optimization_objectives",
        "feasible_output",
        "timestamp",
        "evaluations_per_optimization_iteration",
        "run_directory",
        "output_data_file",
        "output_pareto_file",
        "design_of_experiment",
        "input_parameters",
        "acquisition_function",
        "scalarization_method",
        "weight_sampling",
        "bounding_box_limits",
        "optimization_method",
        "use_c_backend",
        "local_search_starting_points",
        "local_search_random_points",
        "local_search_evaluation_limit",
        "scalarization_key",
        "local_search_scalarization_weights",
        "print_parameter_importance",
        "normalize_inputs",
        "epsilon_greedy_threshold",
        "model_posterior_weight",
        "model_good_quantile",
        "prior_estimation_file",
        "prior_estimation_quantile",
        "estimate_multivariate_priors",
        "resume_optimization",
        "resume_optimization_data",
        "bandwidth_parameter",
        "bandwidth_n_factor",
        "prior_limit_estimation_points",
        "posterior_computation_lower_limit",
        "custom_gaussian_prior_means",
        "custom_gaussian_prior_stds",
        "acquisition_function_optimizer",
        "evolution_population_size",
        "evolution_generations",
        "mutation_rate",
        "evolution_crossover",
        "regularize_evolution",
        "batch_size",
        "print_best",
        "print_posterior_best",
        "prior_beta",
        "prior_method",
        "cma_es_sigma",
        "cma_es_starting_points",
        "cma_es_random_points",
        "prior_floor",
    )
)
#: bayestune's own top-level keys, in neither schema: which peer's defaults, bayestune's measurement
#: policy, and a top-level list of constraints (BaCO writes them under the parameters).
BAYESTUNE_KEYS = frozenset(("bayestune_read_as", "bayestune_measurement", "constraints"))
#: Parameter keys only BaCO knows (HyperMapper's parameters take type, values, default and prior).
BACO_PARAMETER_KEYS = frozenset(("prior_parameters", "transform", "parametrization", "constraints", "dependencies"))
#: Parameter keys only HyperMapper 2.0 knows (read with its custom_gaussian prior).
HYPERMAPPER_PARAMETER_KEYS = frozenset(("custom_gaussian_prior_means", "custom_gaussian_prior_stds"))
