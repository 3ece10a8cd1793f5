"""The offline surrogate comparison: its leave-one-out density is the textbook one."""

import numpy as np
import pytest
from scipy.stats import norm

from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.space import Ordinal, Space
from benchmarks.surrogate_fit import SURROGATES, fit_scores, gp_loo_density, rf_cv_density


def data(n=14, seed=0):
    space = Space([Ordinal("a", [1, 2, 4, 8, 16, 32], log=True), Ordinal("b", list(range(10)))])
    X = space.enumerate()
    cols = space.columns(X)
    y = 1.0 + (np.log2(cols["a"]) - 3) ** 2 + 0.3 * (cols["b"] - 6) ** 2
    rng = np.random.default_rng(seed)
    return space, X, y, rng.choice(len(X), size=n, replace=False)


def test_closed_form_leave_one_out_matches_the_explicit_one():
    space, X, y, train = data()
    encoder = FeatureEncoder(space)
    gp = GaussianProcess(encoder.blocks, seed=0, n_restarts_sample=8).fit(encoder.transform(X[train]), y[train])
    K = gp.L_ @ gp.L_.T
    z = gp.y_latent_
    dens = []
    for i in range(len(z)):
        o = np.arange(len(z)) != i
        w = np.linalg.solve(K[np.ix_(o, o)], K[o, i])
        mean, var = w @ z[o], K[i, i] - w @ K[o, i]
        dens.append(norm.logpdf(z[i], mean, np.sqrt(var)) - np.log(gp.y_std_))
    assert gp_loo_density(gp) == pytest.approx(float(np.mean(dens)), rel=1e-6)


@pytest.mark.slow
def test_scores_are_finite_and_a_good_model_ranks_positively():
    space, X, y, _ = data()

    class Problem:  # the two attributes fit_scores reads
        pass

    problem = Problem()
    problem.space = space
    out = fit_scores(problem, X, y, 20, seed=1)
    assert set(out) == set(SURROGATES)
    for r in out.values():
        assert np.isfinite(r["rho"]) and r["pick"] >= 1.0 and np.isfinite(r["cv"])
    assert out["gp (space's rule)"]["rho"] > 0.5
    assert np.isfinite(rf_cv_density(FeatureEncoder(space).transform(X[:20]), y[:20], seed=0))
