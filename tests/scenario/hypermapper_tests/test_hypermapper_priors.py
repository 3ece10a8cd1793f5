"""HyperMapper/BaCO priors and transforms read with the peers' own densities.

Each expected value below is the peer's formula written out: BaCO's ``RealParameter.pdf``
(a normal truncated to [min, max], a probability list interpolated on an even grid),
HyperMapper 2.0's named Beta shapes (``densities_alphas/betas`` in its ``space.py``), and
BaCO's ordinal/integer lists (one probability per sorted value)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayestune.design.initial import initial_design
from bayestune.history import History
from bayestune.scenario import scenario_from_dict

P_MIN = 1e-3


def load_hm(params, **top):
    return scenario_from_dict(
        {"application_name": "app", "optimization_objectives": ["v"], "input_parameters": params, **top},
        source="hm.json",
    )


def raw_density(param, x):
    """Our prior as a density over the parameter's values (prior_weight is relative to uniform)."""
    return param.prior_weight(np.asarray(x, dtype=float).reshape(-1, 1)) / (param.high - param.low)


@pytest.mark.parametrize(
    "lo, hi, mean, std, transform",
    [
        (0.0, 100.0, 50.0, 200.0, "none"),  # wide: flat-ish, never U-shaped
        (0.0, 100.0, 10.0, 5.0, "none"),  # narrow, near the lower bound
        (1.0, 1000.0, 100.0, 50.0, "log"),  # transform: log leaves the prior on the value scale
    ],
)
def test_baco_gaussian_prior_is_a_normal_truncated_to_the_range(lo, hi, mean, std, transform):
    s = load_hm(
        {
            "x": {
                "parameter_type": "real",
                "values": [lo, hi],
                "prior": "gaussian",
                "prior_parameters": [mean, std],
                "transform": transform,
            }
        }
    )
    x = s.space["x"]
    grid = np.linspace(lo, hi, 41)
    baco = stats.norm(mean, std).pdf(grid) / (stats.norm(mean, std).cdf(hi) - stats.norm(mean, std).cdf(lo))
    np.testing.assert_allclose(raw_density(x, grid), baco, rtol=1e-9)
    draws = x.sample(np.random.default_rng(0), 3000, use_prior=True)[:, 0]
    a, b = (lo - mean) / std, (hi - mean) / std
    assert stats.kstest(draws, stats.truncnorm(a, b, loc=mean, scale=std).cdf).pvalue > P_MIN


@pytest.mark.parametrize("shape, alpha, beta", [("decay", 0.8, 1.0), ("exponential", 1.0, 0.8), ("gaussian", 3.0, 3.0)])
def test_hypermapper_named_shapes_are_its_beta_densities(shape, alpha, beta):
    s = load_hm({"x": {"parameter_type": "real", "values": [2.0, 10.0], "prior": shape}})
    x = s.space["x"]
    grid = np.linspace(2.5, 9.5, 15)
    hm = stats.beta.pdf((grid - 2.0) / 8.0, alpha, beta) / 8.0
    np.testing.assert_allclose(raw_density(x, grid), hm, rtol=1e-6)
    draws = x.sample(np.random.default_rng(1), 3000, use_prior=True)[:, 0]
    assert stats.kstest((draws - 2.0) / 8.0, stats.beta(alpha, beta).cdf).pvalue > P_MIN


def test_real_probability_list_is_the_interpolated_density():
    density = [1.0, 4.0, 0.5, 2.0]
    s = load_hm({"x": {"parameter_type": "real", "values": [0.0, 30.0], "prior": density}})
    x = s.space["x"]
    grid = np.linspace(0.0, 30.0, 61)
    peer = np.interp(grid, np.linspace(0.0, 30.0, len(density)), np.asarray(density) / sum(density))
    ours = raw_density(x, grid)
    np.testing.assert_allclose(ours / peer, np.full(len(grid), ours[0] / peer[0]), rtol=1e-9)  # same shape
    assert np.trapezoid(ours, grid) == pytest.approx(1.0, rel=1e-9)  # and a density
    draws = x.sample(np.random.default_rng(2), 4000, use_prior=True)[:, 0]
    assert stats.kstest(draws / 30.0, x.prior.cdf_unit).pvalue > P_MIN


def test_unsorted_ordinal_prior_pairs_with_the_sorted_values_as_in_baco(caplog):
    with caplog.at_level("WARNING", logger="bayestune.scenario"):
        s = load_hm(
            {"t": {"parameter_type": "ordinal", "values": [16, 1, 4, 2, 8], "prior": [0.1, 0.1, 0.2, 0.3, 0.3]}}
        )
    t = s.space["t"]
    assert t.values == [1, 2, 4, 8, 16] and "pairs with the sorted values" in caplog.text
    # BaCO: values = sorted(values); pdf(v) = distribution[index of v in the sorted values]
    expected = np.array([0.1, 0.1, 0.2, 0.3, 0.3])
    weights = t.prior_weight(t.grid()) / len(t.values)
    np.testing.assert_allclose(weights, expected)
    counts = np.bincount(t.index_of(t.sample(np.random.default_rng(3), 20000, use_prior=True)), minlength=5)
    assert stats.chisquare(counts, expected * 20000).pvalue > P_MIN


def test_integer_probability_list_is_one_probability_per_integer():
    s = load_hm({"k": {"parameter_type": "integer", "values": [3, 6], "prior": [4, 3, 2, 1], "transform": "log"}})
    k = s.space["k"]
    np.testing.assert_allclose(k.prior_weight(k.grid()) / 4, [0.4, 0.3, 0.2, 0.1])


def test_gaussian_on_an_integer_weights_each_value_by_the_normal_density():
    s = load_hm(
        {"k": {"parameter_type": "integer", "values": [0, 10], "prior": "gaussian", "prior_parameters": [2, 3]}}
    )
    k = s.space["k"]
    dens = stats.norm(2, 3).pdf(np.arange(11))
    np.testing.assert_allclose(k.prior_weight(k.grid()) / 11, dens / dens.sum())


@pytest.mark.parametrize("kind, values", [("real", [1.0, 10000.0]), ("integer", [1, 10000])])
def test_baco_log_transform_draws_uniformly_and_log_scales_the_model_input(kind, values):
    s = load_hm({"x": {"parameter_type": kind, "values": values, "transform": "log"}})
    x = s.space["x"]
    lo, hi = values
    draws = x.sample(np.random.default_rng(4), 3000)[:, 0]
    assert stats.kstest((draws - lo) / (hi - lo), "uniform").pvalue > P_MIN  # BaCO samples uniformly
    assert x.unit(np.array([[100.0]]))[0, 0] == pytest.approx(0.5)  # the model sees log(x)
    # The initial designs draw on the same uniform scale: LHS puts 1 of 10 points per tenth.
    history = History.empty(s.space, list(s.objectives))
    X = initial_design(s.space, 10, np.random.default_rng(5), history, "lhs")
    strata = np.floor((s.space.columns(X)["x"] - lo) / (hi - lo) * 10).clip(0, 9)
    assert sorted(strata.astype(int).tolist()) == list(range(10))


def test_native_log_parameters_still_draw_log_uniformly():
    s = scenario_from_dict(
        {"parameters": [{"name": "x", "type": "real", "bounds": [1, 10000], "log": True}], "objectives": ["t"]},
        source="n.json",
    )
    x = s.space["x"]
    assert x.sampling == "log-uniform" and "sampling" not in x.to_spec()
    draws = x.sample(np.random.default_rng(6), 3000)[:, 0]
    assert stats.kstest(np.log10(draws) / 4, "uniform").pvalue > P_MIN


def test_native_sampling_key_round_trips():
    from bayestune.scenario import scenario_to_dict

    s = scenario_from_dict(
        {
            "parameters": [
                {
                    "name": "x",
                    "type": "real",
                    "bounds": [1, 100],
                    "log": True,
                    "sampling": "uniform",
                    "prior": {"mean": 0.2, "std": 0.1},
                }
            ],
            "objectives": ["t"],
        },
        source="n.json",
    )
    spec = scenario_to_dict(s)["parameters"][0]
    assert spec["sampling"] == "uniform" and spec["prior"] == {"mean": 0.2, "std": 0.1}
    assert scenario_from_dict(scenario_to_dict(s)).space["x"] == s.space["x"]


def test_prior_file_designs_uniformly_and_the_prior_weights_the_acquisition():
    """A published-style file whose prior piles onto one value: BaCO's design is uniform (not
    95 % at that value), HyperMapper's follows the prior, and the prior reaches the BO
    acquisition (piBO)."""
    from bayestune.strategies.bo import BayesianOptimization

    s = load_hm(
        {
            "t": {
                "parameter_type": "ordinal",
                "values": [1, 2, 4, 8, 16, 32, 64, 128],
                "prior": [0.93, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01],
            },
            "k": {"parameter_type": "integer", "values": [0, 63]},
        },
        design_of_experiment={"number_of_samples": 40},
        bayestune_read_as="baco",
    )
    assert s.design.method == "cot"
    history = History.empty(s.space, list(s.objectives))
    X = initial_design(s.space, s.design.size, np.random.default_rng(7), history, s.design.method)
    assert np.mean(s.space.columns(X)["t"] == 1) < 0.4  # uniform: 1/8; prior-weighted: ~0.93
    Xp = initial_design(s.space, s.design.size, np.random.default_rng(7), history, "hypermapper")  # HyperMapper's
    assert np.mean(s.space.columns(Xp)["t"] == 1) > 0.7
    bo = BayesianOptimization(s.space, list(s.objectives), np.random.default_rng(0))
    weight = s.space.prior_weight(s.space.to_matrix([{"t": 1, "k": 5}, {"t": 64, "k": 5}]))
    assert weight[0] > 50 * weight[1] and bo.settings.prior.beta > 0


@pytest.mark.parametrize("shape", ["gaussian", "decay", "exponential"])
def test_hypermapper_named_prior_on_an_ordinal_is_its_beta_mass_by_rank(shape):
    from scipy import stats

    from bayestune.space.priors import BETA_SHAPES

    values = [1, 2, 4, 8, 16, 32, 64]
    s = scenario_from_dict(
        {
            "application_name": "a",
            "optimization_objectives": ["v"],
            "input_parameters": {"x": {"parameter_type": "ordinal", "values": values, "prior": shape}},
            "bayestune_read_as": "hypermapper",
        },
        source="hm.json",
    )
    a, b = BETA_SHAPES[shape]
    # HyperMapper's OrdinalParameter.pdf: Beta cdf((i + 1) / n) - cdf(i / n) for the i-th sorted value
    expected = [stats.beta.cdf((i + 1) / 7, a, b) - stats.beta.cdf(i / 7, a, b) for i in range(7)]
    np.testing.assert_allclose(s.space["x"].prior.to_spec()["probabilities"], expected, rtol=1e-9)
