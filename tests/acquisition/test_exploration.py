import numpy as np
import pytest

from bayestune.acquisition.exploration import ContextualVariance, latent_unit


def test_first_call_calibrates_to_one_times_the_improvement_ratio():
    cv = ContextualVariance("cv")
    # σ̄ = σ̄_s on the first call; f⁺/μ_s = 2/4
    assert cv.factor(0.3, best=2.0, mean_observed=4.0) == pytest.approx(0.5)
    assert cv.spread_initial == pytest.approx(0.3) and cv.mean_initial == pytest.approx(4.0)


def test_code_variant_uses_std_paper_variant_uses_variance():
    code, paper = ContextualVariance("cv"), ContextualVariance("cv_paper")
    for c in (code, paper):
        c.factor(1.0, best=4.0, mean_observed=4.0)  # calibrate: σ̄_s = 1, μ_s = 4
    # later: σ̄ halves and the incumbent halves relative to μ_s
    assert code.factor(0.5, best=2.0, mean_observed=3.0) == pytest.approx(0.5 * 0.5)
    assert paper.factor(0.5, best=2.0, mean_observed=3.0) == pytest.approx(0.25 * 0.5)


def test_lambda_shrinks_as_the_model_grows_sure_and_the_incumbent_improves():
    cv = ContextualVariance("cv")
    lams = [cv.factor(s, best=b, mean_observed=5.0) for s, b in [(1.0, 3.0), (0.8, 2.5), (0.5, 2.0), (0.2, 1.5)]]
    assert all(a > b for a, b in zip(lams, lams[1:]))


def test_non_positive_objectives_drop_the_ratio():
    cv = ContextualVariance("cv")
    assert cv.factor(2.0, best=-1.0, mean_observed=-0.5) == pytest.approx(1.0)
    assert cv.factor(1.0, best=-3.0, mean_observed=-0.5) == pytest.approx(0.5)


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError):
        ContextualVariance("constant")


def test_spread_is_measured_in_target_units_not_latent_units():
    class GP:  # a standardising model: one latent unit = y_std_ target units
        log_y_, y_std_ = False, 2.0

    cv = ContextualVariance("cv")
    y = np.array([1.0, 3.0, 5.0])
    assert cv(GP(), np.full(4, 0.5), y) == pytest.approx(1.0 / 3.0)  # calibrates σ̄_s = 1.0 target units
    GP.y_std_ = 4.0  # a refit that doubles the standardisation leaves the same latent sd twice as wide
    assert cv(GP(), np.full(4, 0.5), y) == pytest.approx(2.0 / 3.0)
    assert latent_unit(GP(), y) == pytest.approx(np.std(y) / 4.0)
