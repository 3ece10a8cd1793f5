"""GaussianProcess: agreement with scikit-learn, analytic gradients, fitting, degenerate data."""

import numpy as np
import pytest
from scipy import stats

from bayestune.models import FeatureBlock, GaussianProcess


def numeric_blocks(d: int) -> list[FeatureBlock]:
    return [FeatureBlock(f"x{i}", "numeric", i) for i in range(d)]


def mixed_problem(n: int, seed: int = 0):
    """Two numeric, one categorical and one 4-element permutation parameter."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 2))
    c = rng.integers(0, 3, (n, 1))
    p = np.argsort(rng.random((n, 4)), axis=1)
    F = np.hstack([x, c, p]).astype(float)
    blocks = [
        FeatureBlock("x0", "numeric", 0),
        FeatureBlock("x1", "numeric", 1),
        FeatureBlock("c", "categorical", 2),
        FeatureBlock("p", "permutation", 3, 4, "spearman"),
    ]
    y = np.sin(5 * x[:, 0]) + 0.5 * c[:, 0] + 0.4 * p[:, 0] + 0.01 * rng.normal(size=n)
    return F, y, blocks


# ---- (1) agreement with scikit-learn ---------------------------------------------------------


def test_fixed_hyperparameters_match_sklearn():
    sk = pytest.importorskip("sklearn.gaussian_process")
    kernels = pytest.importorskip("sklearn.gaussian_process.kernels")
    rng = np.random.default_rng(1)
    X, Xs = rng.random((30, 3)), rng.random((17, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=30)
    ls, s2, noise = [0.3, 0.7, 2.0], 1.7, 0.01

    gp = GaussianProcess(
        numeric_blocks(3),
        log_transform_y=False,
        fixed_hyperparameters={"lengthscales": ls, "outputscale": s2, "noise": noise},
    ).fit(X, y)
    y_std = (y - y.mean()) / y.std()
    np.testing.assert_allclose(gp.y_latent_, y_std)

    kernel = kernels.ConstantKernel(s2, "fixed") * kernels.Matern(
        length_scale=ls, nu=2.5, length_scale_bounds="fixed"
    ) + kernels.WhiteKernel(noise, "fixed")
    ref = sk.GaussianProcessRegressor(kernel=kernel, optimizer=None, normalize_y=False, alpha=0.0).fit(X, y_std)
    assert gp.log_marginal_likelihood() == pytest.approx(ref.log_marginal_likelihood_value_, abs=1e-6)

    mu_ref, sd_ref = ref.predict(Xs, return_std=True)  # sklearn's std includes the white noise
    mu, sd_noisy = gp.predict_latent(Xs, noiseless=False)
    np.testing.assert_allclose(mu, mu_ref, atol=1e-6)
    np.testing.assert_allclose(sd_noisy, sd_ref, atol=1e-6)
    _, sd = gp.predict_latent(Xs)
    np.testing.assert_allclose(sd**2, sd_ref**2 - noise, atol=1e-6)

    # Original units: the standardisation is undone.
    mean, std = gp.predict(Xs, return_std=True)
    np.testing.assert_allclose(mean, mu_ref * y.std() + y.mean(), atol=1e-6)
    np.testing.assert_allclose(std, sd * y.std(), atol=1e-9)

    # Same parametrisation (log σ², log ℓ, log noise), so the gradients must agree too;
    # sklearn only differentiates non-fixed hyperparameters, so rebuild the kernel with bounds.
    free_kernel = kernels.ConstantKernel(s2) * kernels.Matern(length_scale=ls, nu=2.5) + kernels.WhiteKernel(noise)
    theta_ref = free_kernel.theta  # [log σ², log ℓ_1..3, log noise]
    ref_free = sk.GaussianProcessRegressor(kernel=free_kernel, optimizer=None, alpha=0.0).fit(X, y_std)
    _, g_ref = ref_free.log_marginal_likelihood(theta_ref, eval_gradient=True)
    _, g = gp.log_marginal_likelihood(eval_gradient=True)
    np.testing.assert_allclose(g, np.r_[g_ref[1:4], g_ref[0], g_ref[4]], atol=1e-6)


# ---- (2) analytic gradients ------------------------------------------------------------------


def central_differences(f, theta, h=1e-5):
    out = np.empty_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = h
        out[i] = (f(theta + e) - f(theta - e)) / (2 * h)
    return out


@pytest.mark.parametrize("which", ["log_marginal_likelihood", "log_posterior"])
def test_analytic_gradient_matches_finite_differences(which):
    F, y, blocks = mixed_problem(25)
    gp = GaussianProcess(blocks, seed=0).fit(F, y)
    f = getattr(gp, which)
    rng = np.random.default_rng(3)
    # Noise >= e^-6 keeps K well conditioned, so the finite differences themselves are accurate.
    thetas = [np.r_[rng.uniform(-1.5, 1.5, 4), rng.uniform(-1, 1), rng.uniform(-6, -1)] for _ in range(4)]
    for theta in thetas:
        _, grad = f(theta, eval_gradient=True)
        fd = central_differences(lambda t: f(t), theta)
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(fd).max()))


def test_prior_is_the_gamma_density_of_log_lengthscale():
    """log_posterior − LML = Σ_j [log Gamma(ℓ_j; 1.3, rate 0.1) + log ℓ_j] (Jacobian of θ = log ℓ)."""
    F, y, blocks = mixed_problem(15)
    gp = GaussianProcess(blocks, seed=0).fit(F, y)
    theta = np.r_[np.log([0.2, 1.0, 3.0, 30.0]), 0.3, -4.0]
    ls = np.exp(theta[:4])
    expected = np.sum(stats.gamma.logpdf(ls, a=1.3, scale=1 / 0.1) + np.log(ls))
    assert gp.log_posterior(theta) - gp.log_marginal_likelihood(theta) == pytest.approx(expected, rel=1e-12)
    flat = GaussianProcess(blocks, lengthscale_prior=None, seed=0).fit(F, y)
    assert flat.log_posterior(theta) == pytest.approx(flat.log_marginal_likelihood(theta))


# ---- (4)/(5) what the fit learns -------------------------------------------------------------


def test_fit_gives_relevant_parameters_shorter_lengthscales():
    rng = np.random.default_rng(2)
    n = 60
    x = rng.random((n, 2))
    c = rng.integers(0, 3, (n, 1))
    p = np.argsort(rng.random((n, 4)), axis=1)
    F = np.hstack([x, c, p]).astype(float)
    blocks = [
        FeatureBlock("relevant", "numeric", 0),
        FeatureBlock("irrelevant", "numeric", 1),
        FeatureBlock("cat_irrelevant", "categorical", 2),
        FeatureBlock("perm", "permutation", 3, 4),
    ]
    y = np.sin(6 * x[:, 0]) + 0.8 * (p[:, 0] - 1.5) + 0.01 * rng.normal(size=n)
    gp = GaussianProcess(blocks, seed=0).fit(F, y)
    ls = gp.lengthscales_
    assert ls["relevant"] < ls["irrelevant"] / 3
    assert ls["perm"] < ls["cat_irrelevant"]
    imp = gp.feature_importance()
    assert sum(imp.values()) == pytest.approx(1.0)
    assert max(imp, key=imp.get) == "relevant"
    renamed = gp.feature_importance(["a", "b", "c", "d"])
    assert list(renamed.values()) == list(imp.values()) and list(renamed) == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="one name per block"):
        gp.feature_importance(["a"])
    fixed = GaussianProcess(blocks, fixed_hyperparameters=gp.fitted_hyperparameters()).fit(F, y)
    assert np.allclose(fixed.hyperparameters_, gp.hyperparameters_)


def test_predictions_at_training_points_reproduce_y():
    F, y, blocks = mixed_problem(40, seed=4)
    y = y + 3.0  # positive → log transform under "auto"
    gp = GaussianProcess(blocks, seed=0, fixed_hyperparameters={"noise": 1e-6}).fit(F, y)
    assert gp.log_y_
    mean, std = gp.predict(F, return_std=True)
    np.testing.assert_allclose(mean, y, rtol=1e-3)
    assert np.all(std < 0.01 * np.abs(y))
    mu, sd = gp.predict_latent(F)
    np.testing.assert_allclose(mu, gp.y_latent_, atol=1e-3)
    assert gp.best_y_latent_ == pytest.approx(gp.y_latent_.min())
    assert gp.y_latent_.argmin() == y.argmin()


def test_log_transform_choice():
    F, y, blocks = mixed_problem(12)
    assert not GaussianProcess(blocks, seed=0).fit(F, y - 10).log_y_  # negative values: never logged
    gp = GaussianProcess(blocks, seed=0, log_transform_y=False).fit(F, np.exp(y))
    assert not gp.log_y_
    np.testing.assert_allclose(gp.y_to_latent(np.exp(y)), gp.y_latent_)
    with pytest.raises(ValueError, match="every y > 0"):
        GaussianProcess(blocks, log_transform_y=True).fit(F, y - 10)


def test_fixed_hyperparameters_are_respected_and_the_rest_fitted():
    F, y, blocks = mixed_problem(20)
    gp = GaussianProcess(blocks, seed=0, fixed_hyperparameters={"lengthscales": {"c": 0.5}, "noise": 1e-3}).fit(F, y)
    assert gp.lengthscales_["c"] == pytest.approx(0.5)
    assert gp.noise_ == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="unknown key"):
        GaussianProcess(blocks, fixed_hyperparameters={"lengthscale": 1.0}).fit(F, y)
    with pytest.raises(ValueError, match="unknown length-scale name"):
        GaussianProcess(blocks, fixed_hyperparameters={"lengthscales": {"zz": 1.0}}).fit(F, y)


# ---- fitting procedure -----------------------------------------------------------------------


def test_same_seed_same_model_and_warm_start():
    F, y, blocks = mixed_problem(30)
    a = GaussianProcess(blocks, seed=7).fit(F, y)
    b = GaussianProcess(blocks, seed=7).fit(F, y)
    np.testing.assert_array_equal(a.hyperparameters_, b.hyperparameters_)
    np.testing.assert_array_equal(a.predict(F[:5]), b.predict(F[:5]))
    # Refitting twice with the same object and seed is also reproducible.
    np.testing.assert_array_equal(a.fit(F, y).hyperparameters_, b.hyperparameters_)
    # A warm start from the optimum can only help.
    c = GaussianProcess(blocks, seed=8).fit(F, y, warm_start=a.hyperparameters_)
    assert c.log_posterior() >= a.log_posterior() - 1e-6
    with pytest.raises(ValueError, match="warm_start must be a finite vector of 6"):
        GaussianProcess(blocks).fit(F, y, warm_start=np.zeros(3))


def test_large_n_uses_subset_screening_and_still_finds_the_optimum():
    F, y, blocks = mixed_problem(80, seed=5)
    full = GaussianProcess(blocks, seed=0, screen_max_points=1000).fit(F, y)
    coarse = GaussianProcess(blocks, seed=0, screen_max_points=30).fit(F, y)
    assert coarse.log_posterior() >= full.log_posterior() - 0.5
    assert np.isfinite(coarse.predict(F)).all()


# ---- (7) degenerate inputs -------------------------------------------------------------------


@pytest.mark.parametrize("case", ["constant", "duplicates", "n1", "n2"])
def test_degenerate_inputs_give_finite_outputs(case):
    F, y, blocks = mixed_problem(12)
    if case == "constant":
        y = np.full_like(y, 4.2)
    elif case == "duplicates":
        F = np.vstack([F, F, F[:3]])
        y = np.r_[y, y + 1e-3, y[:3]]
    elif case == "n1":
        F, y = F[:1], y[:1]
    else:
        F, y = F[:2], y[:2]
    gp = GaussianProcess(blocks, seed=0).fit(F, y)
    Fs, _, _ = mixed_problem(9, seed=9)
    mean, std = gp.predict(Fs, return_std=True)
    mu, sd = gp.predict_latent(Fs)
    for arr in (mean, std, mu, sd, gp.hyperparameters_):
        assert np.all(np.isfinite(arr))
    assert np.isfinite(gp.log_marginal_likelihood())
    if case == "constant":
        np.testing.assert_allclose(mean, 4.2, rtol=1e-6)


def test_bad_inputs_raise_clear_errors():
    F, y, blocks = mixed_problem(10)
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values at row\(s\) \[3\]"):
        GaussianProcess(blocks).fit(F, y_nan)
    with pytest.raises(ValueError, match="same number of rows"):
        GaussianProcess(blocks).fit(F, y[:-1])
    with pytest.raises(ValueError, match="zero observations"):
        GaussianProcess(blocks).fit(F[:0], y[:0])
    with pytest.raises(ValueError, match="1-D"):
        GaussianProcess(blocks).fit(F, y[:, None])
    F_bad = F.copy()
    F_bad[2, 0] = np.inf
    with pytest.raises(ValueError, match="row 2"):
        GaussianProcess(blocks).fit(F_bad, y)
    with pytest.raises(RuntimeError, match="not fitted"):
        GaussianProcess(blocks).predict(F)
    with pytest.raises(ValueError, match="log_transform_y"):
        GaussianProcess(blocks, log_transform_y="yes").fit(F, y)


# ---- heteroscedastic noise -------------------------------------------------------------------

HETERO_X = np.array([[0.1], [0.3], [0.5], [0.5], [0.7], [0.9]])
HETERO_Y = np.array([0.0, 0.0, 1.0, -1.0, 0.0, 0.0])
HETERO_FIXED = {"lengthscales": 0.2, "outputscale": 1.0, "noise": 1e-6}


def hetero_gp(variances, fixed=HETERO_FIXED):
    return GaussianProcess(numeric_blocks(1), log_transform_y=False, fixed_hyperparameters=fixed, seed=0).fit(
        HETERO_X, HETERO_Y, noise_variances=variances
    )


def test_heteroscedastic_posterior_trusts_low_noise_points_more():
    # Two observations at x = 0.5 disagree (+1 and -1); the one measured precisely wins.
    x = np.array([[0.5]])
    trust_plus = hetero_gp(np.array([1e-4, 1e-4, 1e-4, 1.0, 1e-4, 1e-4])).predict(x)[0]
    trust_minus = hetero_gp(np.array([1e-4, 1e-4, 1.0, 1e-4, 1e-4, 1e-4])).predict(x)[0]
    equal = hetero_gp(np.full(6, 1e-4)).predict(x)[0]
    assert trust_plus > 0.8 and trust_minus < -0.8 and abs(equal) < 0.05
    # Posterior uncertainty follows the measurements too: a noisy lone point pins f down less.
    lone = np.array([[0.1]])
    quiet = hetero_gp(np.full(6, 1e-4)).predict_latent(lone)[1][0]
    noisy = hetero_gp(np.array([0.5, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4])).predict_latent(lone)[1][0]
    assert noisy > 3 * quiet


def test_heteroscedastic_fit_learns_the_nugget_on_top_and_falls_back_for_unknown_noise():
    rng = np.random.default_rng(0)
    X = rng.random((40, 1))
    sd = np.where(X[:, 0] < 0.5, 0.01, 0.3)  # known per-point noise: quiet left half, loud right half
    y = np.sin(6 * X[:, 0]) + sd * rng.normal(size=40)
    gp = GaussianProcess(numeric_blocks(1), log_transform_y=False, seed=0).fit(X, y, noise_variances=sd**2)
    np.testing.assert_allclose(gp.noise_variances_, np.maximum(sd**2 / y.std() ** 2, 1e-6))
    assert gp.noise_ < 0.01  # the measured variances explain the noise: little nugget needed
    grid = np.array([[0.25], [0.75]])
    truth = np.sin(6 * grid[:, 0])
    err = np.abs(gp.predict(grid) - truth)
    assert err[0] < 0.05 and err[0] < err[1] + 0.05
    # Unknown noise (NaN) is the median of the known; repeats that agree are floored.
    v = np.array([np.nan, 0.0, 0.04, 0.04, 0.09, np.nan])
    fitted = hetero_gp(v)
    latent = np.array([0.04, 0.0, 0.04, 0.04, 0.09, 0.04]) / HETERO_Y.std() ** 2
    np.testing.assert_allclose(fitted.noise_variances_, np.maximum(latent, 1e-6))
    # Nothing measured at all: the homoscedastic model, exactly.
    unknown = hetero_gp(np.full(6, np.nan))
    assert unknown.noise_variances_ is None
    np.testing.assert_array_equal(unknown.predict(HETERO_X), hetero_gp(None).predict(HETERO_X))


def test_heteroscedastic_noise_goes_through_the_log_by_the_delta_method():
    X = np.linspace(0, 1, 8).reshape(-1, 1)
    y = np.exp(X[:, 0])
    v = (0.1 * y) ** 2  # 10 % relative noise everywhere: constant on the log scale
    gp = GaussianProcess(numeric_blocks(1), log_transform_y=True, seed=0).fit(X, y, noise_variances=v)
    np.testing.assert_allclose(gp.noise_variances_, np.full(8, 0.01 / np.log(y).std() ** 2))


def test_heteroscedastic_gradient_matches_finite_differences():
    F, y, blocks = mixed_problem(25)
    v = np.random.default_rng(1).uniform(0.0, 0.05, 25)
    gp = GaussianProcess(blocks, seed=0, log_transform_y=False).fit(F, y, noise_variances=v)
    theta = gp.hyperparameters_ + 0.3
    _, grad = gp.log_posterior(theta, eval_gradient=True)
    fd = central_differences(lambda t: gp.log_posterior(t), theta)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize(
    "v, match",
    [
        (np.zeros(5), "one entry per observation"),
        (np.array([0.1, -0.1, 0, 0, 0, 0]), ">= 0"),
        (np.array([0.1, np.inf, 0, 0, 0, 0]), ">= 0"),
    ],
)
def test_bad_noise_variances_are_rejected(v, match):
    with pytest.raises(ValueError, match=match):
        hetero_gp(v)


def test_light_refit_keeps_a_good_warm_start_with_fewer_polishes():
    F, y, blocks = mixed_problem(60, seed=2)
    full = GaussianProcess(blocks, seed=0, screen_max_points=30).fit(F, y)
    y2 = y + 0.01 * np.random.default_rng(9).normal(size=y.size)

    def refit(light_refit):
        gp = GaussianProcess(blocks, seed=1, screen_max_points=30, light_refit=light_refit)
        polishes = []
        polish = gp._polish
        gp._polish = lambda *args: polishes.append(args[-1].y.size) or polish(*args)
        return gp.fit(F, y2, warm_start=full.hyperparameters_), polishes

    light, light_polishes = refit(True)
    normal, normal_polishes = refit(False)
    assert light_polishes.count(60) == 1 < normal_polishes.count(60)  # one polish on all points
    assert len(light_polishes) < len(normal_polishes)
    assert light.log_posterior() >= normal.log_posterior() - 0.5


def test_predictions_in_chunks_of_whole_row_groups_equal_one_block(monkeypatch):
    """Chunking exists for speed (cache) only: rows come in whole BLAS row groups, so every
    prediction has the bits of an unchunked one, and a search's trajectory cannot move."""
    import bayestune.models.gp as gp_module

    F, y, blocks = mixed_problem(40)
    gp = GaussianProcess(blocks, seed=0, n_restarts_sample=10).fit(F, y)
    Fs, _, _ = mixed_problem(12001, seed=1)
    chunks = gp.prediction_chunks(len(Fs))
    assert len(chunks) > 1 and all((c.stop - c.start) % gp_module._PREDICT_CHUNK_ROWS == 0 for c in chunks)
    mu, sd = gp.predict_latent(Fs)
    monkeypatch.setattr(gp_module, "_PREDICT_CHUNK_ENTRIES", 10**9)
    assert len(gp.prediction_chunks(len(Fs))) == 1
    mu1, sd1 = gp.predict_latent(Fs)
    np.testing.assert_array_equal(mu, mu1)
    np.testing.assert_array_equal(sd, sd1)
