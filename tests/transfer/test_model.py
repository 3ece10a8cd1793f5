import numpy as np
import pytest

from bayestune.exceptions import BayestuneError
from bayestune.models.encoding import FeatureEncoder
from bayestune.models.gp import GaussianProcess
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import TransferSpec
from bayestune.transfer.model import SourceMean, TransferModel, TransferSurrogate
from tests.transfer.conftest import all_configs, target


def fit_gp(encoder):
    def fit(F, y, log):
        return GaussianProcess(encoder.blocks, log_transform_y=log, seed=0, n_restarts_sample=10, max_iter=30).fit(F, y)

    return fit


def observations(space, n, seed=0):
    configs = all_configs(space)
    pick = np.random.default_rng(seed).choice(len(configs), n, replace=False)
    X = space.to_matrix([configs[i] for i in pick])
    return X, np.array([target(configs[i]) for i in pick])


def test_source_mean_looks_up_measured_configurations(space, related):
    encoder = FeatureEncoder(space)
    source = SourceMean(related, encoder)
    assert np.allclose(source(encoder.transform(related.X)), np.log(related.y))


def test_a_related_source_is_used_and_predicts_the_target(space, related):
    encoder = FeatureEncoder(space)
    model = TransferModel([related], encoder)
    X, y = observations(space, 10)
    surrogate = model.fit(encoder.transform(X), y, fit_gp(encoder))
    assert isinstance(surrogate, TransferSurrogate)
    assert model.weights_[0][1] > 0.5
    configs = all_configs(space)
    mu, sd = surrogate.predict_latent(encoder.transform(space.to_matrix(configs)))
    best = configs[int(np.argmin(mu))]
    assert target(best) == min(target(c) for c in configs)
    assert np.all(sd >= 0) and np.isfinite(mu).all()


def test_an_unrelated_source_falls_back_to_the_cold_gp(space, unrelated):
    encoder = FeatureEncoder(space)
    model = TransferModel([unrelated], encoder)
    X, y = observations(space, 15, seed=2)
    F = encoder.transform(X)
    surrogate = model.fit(F, y, fit_gp(encoder))
    assert model.weights_[0][1] == 0.0
    cold = fit_gp(encoder)(F, y, "auto")
    assert isinstance(surrogate, GaussianProcess)
    assert np.allclose(surrogate.predict_latent(F)[0], cold.predict_latent(F)[0])


def test_a_transfer_model_needs_a_source(space):
    with pytest.raises(BayestuneError, match="at least one prior run"):
        TransferModel([], FeatureEncoder(space))


def test_optimizer_warm_start_design_opens_with_the_sources_best(space, related):
    opt = Optimizer(space, objectives=["t"], seed=0, transfer=TransferSpec((related,), mode="design", top=3))
    asked = [opt.ask()[0] for _ in range(4)]
    best = [space.to_config(r) for r in related.X[np.argsort(related.y, kind="stable")[:3]]]
    assert asked[0] == space.default_config()
    assert all(b in asked for b in best)


def test_optimizer_with_a_related_source_finds_the_optimum_early(space, related):
    opt = Optimizer(space, objectives=["t"], seed=0, transfer=TransferSpec((related,), mode="both"))
    opt.optimize(target, 6)
    assert opt.best.values["t"] == 1.0


def test_optimizer_with_an_unrelated_source_still_optimises(space, unrelated):
    opt = Optimizer(space, objectives=["t"], seed=0, transfer=TransferSpec((unrelated,), mode="model"))
    opt.optimize(target, 25)
    assert opt.best.values["t"] <= 2.0
    assert opt.strategy.surrogates.transfer.weight_history_


def test_optimizer_refuses_bad_transfer_input(space, related, tmp_path):
    bad = tmp_path / "other.csv"
    bad.write_text("x,y,t\n1,2,3\n")
    with pytest.raises(BayestuneError, match="does not match the space"):
        Optimizer(space, objectives=["t"], transfer=[bad])
    with pytest.raises(BayestuneError, match="cannot use a transfer model"):
        Optimizer(space, objectives=["t"], strategy="random", transfer=[related])
    Optimizer(space, objectives=["t"], strategy="random", transfer=TransferSpec((related,), mode="design"))
    with pytest.raises(BayestuneError, match="one objective"):
        Optimizer(space, objectives=["t", "u"], transfer=[related])
    with pytest.raises(BayestuneError, match="transfer mode"):
        TransferSpec((related,), mode="sometimes")
    with pytest.raises(BayestuneError, match="list of files"):
        TransferSpec("a.db")
    with pytest.raises(BayestuneError, match="list of files"):
        Optimizer(space, objectives=["t"], transfer="a.db")


def test_a_transfer_model_refuses_the_auto_ordinal_warping(space, related):
    with pytest.raises(BayestuneError, match="one input encoding"):
        Optimizer(
            space, objectives=["t"], strategy_options={"experimental": {"ordinal_scale": "auto"}}, transfer=[related]
        )
