"""How well each surrogate ranks a recorded GPU space from ``n`` random observations.

Why: issue 17 asks whether ``bo`` should choose its model (GP or random forest) and its ordinal
input scale (the fixed log/linear rule, or one learned by marginal likelihood). Both choices only
help if the candidates differ in how well they *rank* a real tuning space, and (for a learned
choice) if the GP's marginal likelihood points at the better one. This measures exactly that,
offline, with no optimisation loop: per space and seed, ``n`` feasible configurations drawn
uniformly from the recorded cache are the training set, every other recorded configuration the
test set, and for each surrogate

* ``rho``: Spearman correlation of the predicted mean with the log of the recorded time;
* ``pick``: recorded time / optimum of the test configuration the model predicts best (what a
  purely exploiting step would get);
* ``lml``: the GP's log marginal likelihood per observation (GP encodings only);
* ``cv``: the cross-validated log predictive density of log(time) per observation — the GP's
  closed-form leave-one-out (Rasmussen & Williams eq. 5.10-5.12, at the fitted hyperparameters),
  the forest's 5-fold — the quantity a model choice "by cross-validated likelihood" would
  compare; the last column says which of the GP (space's rule) and the forest it picks.

``python -m benchmarks.surrogate_fit --problems gpu --n 20,50 --seeds 3`` prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy.linalg import solve_triangular
from scipy.stats import norm, spearmanr

from bayestune.models.encoding import FeatureEncoder
from bayestune.models.forest import RandomForestSurrogate
from bayestune.models.gp import GaussianProcess
from bayestune.models.linalg import limit_blas_threads
from benchmarks.problems import get_problem, resolve_problems

#: The surrogates compared: (model, ordinal scale override of the encoder).
SURROGATES = {
    "gp (space's rule)": ("gp", None),
    "gp log": ("gp", "log"),
    "gp linear": ("gp", "linear"),
    "gp index": ("gp", "index"),
    "rf": ("rf", None),
}


def recorded(problem_name: str) -> tuple[object, np.ndarray, np.ndarray]:
    """The problem, its feasible configurations with a recorded value, and those values."""
    problem = get_problem(problem_name)
    X = problem.space.enumerate(limit=10**6)
    configs = problem.space.to_configs(X)
    values = np.full(len(X), np.nan)
    for i, cfg in enumerate(configs):
        result = problem.evaluate(cfg)
        if result.feasible and problem.objective in result.values:
            values[i] = float(result.values[problem.objective])
    ok = np.isfinite(values)
    return problem, X[ok], values[ok]


#: Folds of the forest's cross-validation; sd floor of its predictive density (a forest whose trees
#: all agree claims zero spread).
CV_FOLDS = 5
RF_SD_FLOOR = 1e-3


def gp_loo_density(gp: GaussianProcess) -> float:
    """Mean leave-one-out log density of log(y) under a fitted GP (its hyperparameters kept)."""
    L = np.asarray(gp.L_)
    L_inv = solve_triangular(L, np.eye(len(L)), lower=True)
    diag = np.sum(L_inv * L_inv, axis=0)  # diag of K^-1 = L^-T L^-1
    z = np.asarray(gp.y_latent_)
    mean = z - np.asarray(gp.alpha_) / diag
    return float(np.mean(norm.logpdf(z, mean, np.sqrt(1.0 / diag)) - np.log(gp.y_std_)))


def rf_cv_density(F: np.ndarray, y: np.ndarray, seed: int) -> float:
    """Mean k-fold log density of log(y) under the random forest."""
    folds = np.random.default_rng(seed).permutation(len(y)) % CV_FOLDS
    dens = np.empty(len(y))
    for k in range(CV_FOLDS):
        test = folds == k
        forest = RandomForestSurrogate(seed=seed).fit(F[~test], y[~test])
        mu, sd = forest.predict_latent(F[test])
        dens[test] = norm.logpdf(np.log(y[test]), mu, np.maximum(sd, RF_SD_FLOOR))
    return float(np.mean(dens))


def fit_scores(problem, X: np.ndarray, y: np.ndarray, n: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    train = rng.choice(len(X), size=n, replace=False)
    test = np.setdiff1d(np.arange(len(X)), train)
    out = {}
    for label, (model, scale) in SURROGATES.items():
        encoder = FeatureEncoder(problem.space, ordinal_scale=scale)
        F = encoder.transform(X)
        if model == "gp":
            surrogate = GaussianProcess(encoder.blocks, seed=seed, blas_threads=None).fit(F[train], y[train])
            lml = float(surrogate.log_marginal_likelihood_value_) / n
            cv = gp_loo_density(surrogate)
        else:
            surrogate = RandomForestSurrogate(seed=seed).fit(F[train], y[train])
            lml = float("nan")
            cv = rf_cv_density(F[train], y[train], seed)
        mu, _ = surrogate.predict_latent(F[test])
        out[label] = {
            "rho": float(spearmanr(mu, np.log(y[test])).statistic),
            "pick": float(y[test][int(np.argmin(mu))] / y.min()),
            "lml": lml,
            "cv": cv,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.surrogate_fit", description=__doc__)
    parser.add_argument("--problems", default="gpu")
    parser.add_argument("--n", default="20,50", help="training-set sizes")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = [int(v) for v in args.n.split(",")]
    print(
        "| space | n | "
        + " | ".join(f"{k}: rho / pick / lml / cv" for k in SURROGATES)
        + " | lml's encoding | cv's model |"
    )
    print("|---|---|" + "---|" * (len(SURROGATES) + 2))
    with limit_blas_threads(1):
        for name in resolve_problems(args.problems):
            problem, X, y = recorded(name)
            for n in sizes:
                runs = [fit_scores(problem, X, y, n, seed) for seed in range(args.seeds)]
                cells = []
                for label in SURROGATES:
                    rho = np.mean([r[label]["rho"] for r in runs])
                    pick = np.exp(np.mean([np.log(r[label]["pick"]) for r in runs]))
                    lml = np.mean([r[label]["lml"] for r in runs])
                    cv = np.mean([r[label]["cv"] for r in runs])
                    cells.append(f"{rho:.2f} / {pick:.2f} / {'–' if np.isnan(lml) else f'{lml:.2f}'} / {cv:.2f}")
                gp_labels = [k for k, (m, _) in SURROGATES.items() if m == "gp"]
                encoding = max(gp_labels, key=lambda k: np.mean([r[k]["lml"] for r in runs]))
                model = max((gp_labels[0], "rf"), key=lambda k: np.mean([r[k]["cv"] for r in runs]))
                print(f"| {name} | {n} | " + " | ".join(cells) + f" | {encoding} | {model} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
