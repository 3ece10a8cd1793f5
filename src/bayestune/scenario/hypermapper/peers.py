"""Which peer a HyperMapper-style file is written for, HyperMapper 2.0 or BaCO, and what that
peer does when a key is absent.

The two schemas share most keys but not their meaning when left out (HyperMapper: a random
forest with ε = 0.1 random steps; BaCO: a Gaussian process, no random steps), so the reader must
know whose file it is. The evidence is the keys and values only one schema allows; a file with
neither is read as HyperMapper's (its examples are written that way, BaCO's almost always carry a
BaCO-only key); the environment variable :data:`OVERRIDE_ENV` or the key :data:`OVERRIDE_KEY`
settles it by hand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bayestune.scenario.hypermapper.keys import OVERRIDE_KEY, KeyHandling
from bayestune.scenario.hypermapper.schemas import (
    BACO_KEYS,
    BACO_PARAMETER_KEYS,
    HYPERMAPPER_KEYS,
    HYPERMAPPER_PARAMETER_KEYS,
)
from bayestune.space.spec import SpecContext, show
from bayestune.storage.csv_io import FlagWords, PeerSamples


@dataclass(frozen=True)
class Peer:
    """One peer's name and the defaults its optimizer applies to an absent key."""

    key: str  # hypermapper | baco
    title: str  # as people know it
    model: str  # models.model when absent
    epsilon: float  # epsilon_greedy_threshold when absent
    rf: Mapping[str, Any]  # its random forest's settings when absent
    prior_weight_key: str  # the key of the piBO strength

    def prior_beta(self, data: Mapping[str, Any]) -> float:
        """The piBO strength when the file does not set it: BaCO's model_weight 10;
        HyperMapper's prior_beta -1, which its code reads as 0.1 x optimization_iterations."""
        if self.key == "baco":
            return 10.0
        return 0.1 * float(data.get("optimization_iterations", 50))


PEERS = {
    "hypermapper": Peer(
        "hypermapper",
        "HyperMapper 2.0",
        "random_forest",
        0.1,
        {"number_of_trees": 10, "max_features": 0.5, "bootstrap": False, "min_samples_split": 5},
        "prior_beta",
    ),
    "baco": Peer(
        "baco",
        "BaCO",
        "gaussian_process",
        0.0,
        {"number_of_trees": 200, "max_features": 0.5, "bootstrap": True, "min_samples_split": 2},
        "model_weight",
    ),
}

#: The environment variable that settles whose file it is, leaving the file as the peer's schema wants it.
OVERRIDE_ENV = "BAYESTUNE_READ_AS"

#: Values only one schema's enums allow: (dotted key, values).
_ONLY_VALUES = {
    "baco": {
        "design_of_experiment.doe_type": ("embedding random sampling",),
        "acquisition_function": ("EI_BOPRO", "EI_PIBO"),
        "optimization_method": ("exhaustive", "opentuner", "ytopt", "ytopt_ccs"),
    },
    "hypermapper": {
        "design_of_experiment.doe_type": ("standard latin hypercube", "k latin hypercube", "grid_search"),
        "acquisition_function": ("TS",),
        "acquisition_function_optimizer": ("cma_es",),
        "optimization_method": ("random_scalarizations", "local_search", "prior_guided_optimization"),
    },
}


#: Keys of the nested objects only one schema allows.
_ONLY_NESTED = {
    "baco": ("design_of_experiment.allow_repetitions", "feasible_output.feasibility_threshold"),
    "hypermapper": (
        "feasible_output.enable_feasible_predictor_grid_search_on_recall_and_precision",
        "feasible_output.feasible_predictor_grid_search_validation_file",
    ),
}
#: BaCO's GP models whose black box returns a standard deviation after the objectives (and the
#: flag); BaCO writes it as the ``std_estimate`` column after the timestamp.
BACO_STD_MODELS = ("botorch_fixed", "botorch_heteroskedastic")
#: BaCO's schema caps optimization_iterations here; HyperMapper's has no cap.
BACO_MAX_ITERATIONS = 5000


def _value(data: Mapping[str, Any], dotted: str) -> Any:
    head, _, tail = dotted.partition(".")
    value = data.get(head)
    return value.get(tail) if tail and isinstance(value, Mapping) else (None if tail else value)


def _evidence(data: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per peer, what in ``data`` only its schema allows."""
    keys = {str(k) for k in data} - {OVERRIDE_KEY}
    found = {
        "baco": sorted(keys & BACO_KEYS - HYPERMAPPER_KEYS),
        "hypermapper": sorted(keys & HYPERMAPPER_KEYS - BACO_KEYS),
    }
    params = data.get("input_parameters")
    for name, spec in params.items() if isinstance(params, Mapping) else ():
        if isinstance(spec, Mapping):
            found["baco"] += [f"input_parameters.{name}.{k}" for k in sorted(set(spec) & BACO_PARAMETER_KEYS)]
            found["hypermapper"] += [
                f"input_parameters.{name}.{k}" for k in sorted(set(spec) & HYPERMAPPER_PARAMETER_KEYS)
            ]
            if spec.get("parameter_type") == "permutation":
                found["baco"].append(f"input_parameters.{name}.parameter_type = 'permutation'")
    for peer, nested in _ONLY_NESTED.items():
        for dotted in nested:
            head, _, tail = dotted.partition(".")
            if isinstance(data.get(head), Mapping) and tail in data[head]:
                found[peer].append(dotted)
    iterations = data.get("optimization_iterations")
    if isinstance(iterations, int) and iterations > BACO_MAX_ITERATIONS:
        found["hypermapper"].append(f"optimization_iterations > {BACO_MAX_ITERATIONS}")
    for peer, values in _ONLY_VALUES.items():
        for dotted, allowed in values.items():
            value = _value(data, dotted)
            if isinstance(value, str) and value in allowed:
                found[peer].append(f"{dotted} = {value!r}")
    return found


def detect_peer(data: Mapping[str, Any], ctx: SpecContext) -> tuple[Peer, str]:
    """The peer ``data`` is written for and why, e.g. ``(PEERS["baco"], "BaCO-only baco_mode")``.

    Stated by hand, the file's :data:`OVERRIDE_KEY` wins over the environment variable
    :data:`OVERRIDE_ENV` (which leaves a file valid for its peer's schema), and both over the keys."""
    chosen_env = os.environ.get(OVERRIDE_ENV, "").strip()
    if chosen_env and OVERRIDE_KEY not in data:
        if chosen_env not in PEERS:
            ctx.fail(
                (), f"the environment variable {OVERRIDE_ENV} must be one of {sorted(PEERS)}, but got {chosen_env!r}"
            )
        return PEERS[chosen_env], f"{OVERRIDE_ENV}={chosen_env}"
    if OVERRIDE_KEY in data:
        chosen = data[OVERRIDE_KEY]
        if chosen not in PEERS:
            ctx.fail((OVERRIDE_KEY,), f"must be one of {sorted(PEERS)}, but got {show(chosen)}")
        return PEERS[chosen], f"{OVERRIDE_KEY} = {chosen!r}"
    found = _evidence(data)
    mode = next((key for key in ("baco", "hypermapper") if f"{key}_mode" in data), None)
    if found["baco"] or found["hypermapper"]:
        # a file mixing the schemas (neither peer accepts it) goes to its mode key, else the majority
        key = mode or ("baco" if len(found["baco"]) > len(found["hypermapper"]) else "hypermapper")
        title, other = PEERS[key].title, "hypermapper" if key == "baco" else "baco"
        why = f"{title}-only " + ", ".join(found[key][:3]) + (" ..." if len(found[key]) > 3 else "")
        if found[other]:
            why += f"; also {PEERS[other].title}-only " + ", ".join(found[other][:3])
        return PEERS[key], why
    return PEERS["hypermapper"], (
        f"only keys both schemas share; {OVERRIDE_ENV}=baco (or the key {OVERRIDE_KEY}) for BaCO's defaults"
    )


def _name(data: Mapping[str, Any], ctx: SpecContext, key: str, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or not value.strip():
        ctx.fail((key,), f"expected a non-empty file or column name, but got {show(value)}")
    return value


def _run_file(data: Mapping[str, Any], ctx: SpecContext, key: str, default: str) -> str:
    """An output file as the peers place it: ``output_samples.csv``-style defaults prefixed with
    the application's name, then under ``run_directory`` unless absolute."""
    name = _name(data, ctx, key, default)
    if name == default and default.startswith("output_"):  # both peers prefix these defaults with the name
        name = f"{data.get('application_name', 'application')}_{name}"
    run_directory = _name(data, ctx, "run_directory", ".")
    return name if os.path.isabs(name) or run_directory == "." else os.path.join(run_directory, name)


def peer_samples(
    data: Mapping[str, Any],
    ctx: SpecContext,
    peer: Peer,
    *,
    parameter_names: list[str],
    objectives: list[str],
    feasible: str | None,
    flags: FlagWords | None = None,
    handled: list[KeyHandling],
) -> PeerSamples:
    """The sample CSV the peer writes for ``data`` (and the one it resumes from), as the peer
    names them, its Pareto front file (several objectives) and its log file."""
    app = str(data.get("application_name", "application"))
    path = _run_file(data, ctx, "output_data_file", "output_samples.csv")
    column = _name(data, ctx, "timestamp", "Timestamp") if peer.key == "hypermapper" else "timestamp"
    handled.append(
        KeyHandling(
            "output_data_file",
            "mapped",
            f"the samples are written to {path} in {peer.title}'s header ({column!r} column)",
        )
    )
    pareto = None
    if len(objectives) > 1:
        pareto = _run_file(data, ctx, "output_pareto_file", "output_pareto.csv")
        handled.append(
            KeyHandling(
                "output_pareto_file",
                "mapped",
                f"the feasible Pareto front of the samples is written to {pareto} (as hm-compute-pareto writes it)",
            )
        )
    log = _run_file(data, ctx, "log_file", f"{peer.key}_logfile.log")
    resume = data.get("resume_optimization", False)
    if not isinstance(resume, bool):
        ctx.fail(("resume_optimization",), f"expected true or false, but got {show(resume)}")
    resume_from = None
    if resume:
        key = "resume_optimization_data" if peer.key == "hypermapper" else "resume_optimization_file"
        resume_from = _name(data, ctx, key, "output_samples.csv")
        if resume_from == "output_samples.csv":
            resume_from = f"{app}_output_samples.csv"
        if not resume_from.endswith(".csv"):
            ctx.fail((key,), f"the file to resume from must be a CSV, but got {show(resume_from)}")
        handled.append(
            KeyHandling(
                "resume_optimization",
                "mapped",
                f"its evaluations in {resume_from} are told to the optimizer before the run asks for more",
            )
        )
    print_best = data.get("print_best", "auto")
    if print_best not in (True, False, "auto"):
        ctx.fail(("print_best",), f"must be true, false or 'auto', but got {show(print_best)}")
    extra = ("std_estimate",) if peer.key == "baco" and data.get("GP_model") in BACO_STD_MODELS else ()
    return PeerSamples(
        path,
        tuple(parameter_names),
        tuple(objectives),
        feasible,
        column,
        resume_from,
        pareto_path=pareto,
        log_path=log,
        flags=flags if feasible else None,
        peer=peer.key,
        extra_columns=extra,
        print_best=None if print_best == "auto" else bool(print_best),
    )
