import warnings

import numpy as np
import pytest

from bayestune.bostep.proposers import Turn
from bayestune.bostep.stall import StallStep
from bayestune.exceptions import BayestuneError
from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.optimizer import Optimizer
from bayestune.scenario.records import DesignSpec
from bayestune.space import Categorical, Integer, Ordinal, Permutation, Real, Space
from bayestune.strategies.base import make_strategy
from bayestune.trial import Result


def mixed_space():
    return Space(
        [
            Ordinal("tx", [1, 2, 4, 8, 16, 32, 64], log=True),
            Ordinal("ty", [1, 2, 4, 8, 16, 32, 64], log=True),
            Real("r", 0.0, 1.0),
            Categorical("c", ["a", "b", "c"]),
            Permutation("p", 4),
        ],
        ["tx * ty <= 512"],
    )


def objective(cfg):
    return (
        1.0
        + (np.log2(cfg["tx"]) - 4) ** 2
        + (np.log2(cfg["ty"]) - 2) ** 2
        + 4 * (cfg["r"] - 0.3) ** 2
        + {"a": 0.5, "b": 0.0, "c": 1.0}[cfg["c"]]
        + 0.5 * cfg["p"][0]
    )


def run(strategy, seed, budget=30, **options):
    opt = Optimizer(mixed_space(), objectives=["t"], strategy=strategy, seed=seed, strategy_options=options)
    opt.optimize(objective, budget)
    return opt


def test_bo_is_seed_reproducible():
    a = [t.config for t in run("bo", 3, budget=16).trials]
    b = [t.config for t in run("bo", 3, budget=16).trials]
    c = [t.config for t in run("bo", 4, budget=16).trials]
    assert a == b and a != c


def test_bo_beats_random_on_a_smooth_mixed_problem():
    bo = np.mean([run("bo", s).best.values["t"] for s in range(3)])
    rnd = np.mean([run("random", s).best.values["t"] for s in range(3)])
    assert bo < rnd


def test_bo_never_repeats_and_stays_feasible():
    opt = run("bo", 0, budget=25)
    keys = [tuple(sorted(t.config.items())) for t in opt.trials]
    assert len(set(keys)) == len(keys)
    assert all(t.config["tx"] * t.config["ty"] <= 512 for t in opt.trials)


X = "experimental"


@pytest.mark.parametrize(
    "options",
    [
        {"model": "rf"},
        {"acquisition": "pi"},
        {"acquisition": "lcb"},
        {"acquisition_search": {"method": "random"}},
        {"gp": {"lengthscale_prior": False}},
        {"log_transform": False},
        {"max_training_points": 12},
        {"trust_region": {"every": 2}},
        {"trust_region": {"every": 1}, "acquisition_search": {"epsilon": 0.2}},
        {X: {"ordinal_scale": "auto"}},
        {X: {"ordinal_scale": "index"}},
        {X: {"ordinal_scale": "auto"}, "model": "rf"},
        {X: {"stall": {"after": 2}}},
        {X: {"stall": {"after": 2}}, "model": "rf"},
        {"max_training_points": 12, X: {"memory_policy": "lru"}},
    ],
)
@pytest.mark.filterwarnings("ignore::bayestune.settings.ExperimentalOptionWarning")
def test_bo_options_run(options):
    opt = run("bo", 1, budget=16, **options)
    assert opt.n_evaluated == 16 and opt.best is not None


def test_unknown_bo_option_is_rejected_with_allowed_list():
    with pytest.raises(BayestuneError, match="allowed"):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"kernel": "rbf"})


def test_every_model_suggestion_local_changes_few_parameters_of_the_incumbent():
    opt = Optimizer(
        mixed_space(),
        objectives=["t"],
        strategy="bo",
        seed=2,
        design=DesignSpec(size=8),
        strategy_options={"trust_region": {"every": 1, "fail_tolerance": 50}},
    )
    opt.optimize(objective, 8)
    for _ in range(4):  # with a large tolerance the ball keeps radius 1 around the incumbent (or a tie of it)
        best = opt.best.values["t"]
        incumbents = [t.config for t in opt.trials if t.values and t.values["t"] == best]
        cfg = opt.ask(1)[0]
        assert min(sum(cfg[k] != inc[k] for k in inc) for inc in incumbents) == 1
        opt.tell(cfg, objective(cfg))


def test_the_removed_trust_region_after_is_refused_with_the_reason():
    for options in ({"trust_region": {"after": 10}}, {"local_after": 10}):
        with pytest.raises(BayestuneError, match="trust_region.after was removed: it lost"):
            Optimizer(mixed_space(), strategy="bo", strategy_options=options)


def test_coverage_growth_brings_the_escape_step_first():
    space, rng = mixed_space(), np.random.default_rng(0)
    covering = make_strategy("bo", space, [Objective("t")], rng, {"trust_region": {"fail_tolerance": "coverage"}})
    assert type(covering.schedule.turn_takers[0]).__name__ == "EscapeStep"
    assert covering.schedule.trust_region.region.coverage_cap is not None
    plain = make_strategy("bo", space, [Objective("t")], rng)
    assert [type(t).__name__ for t in plain.schedule.turn_takers] == ["TrustRegionTurn"]


def test_the_trust_region_is_bo_s_default_but_not_parego_s():
    space = mixed_space()
    rng = np.random.default_rng(0)
    assert make_strategy("bo", space, [Objective("t")], rng).schedule.trust_region.region is not None
    parego = make_strategy("parego", space, [Objective("a"), Objective("b")], rng)
    assert parego.schedule.trust_region.region is None
    off = make_strategy("bo", space, [Objective("t")], rng, {"trust_region": {"every": 0}})
    assert off.schedule.trust_region.region is None


@pytest.mark.parametrize("options", [{"every": -1}, {"fail_tolerance": 0}, {"fail_tolerance": "always"}])
def test_bad_trust_region_options_are_refused(options):
    with pytest.raises(BayestuneError, match=f"trust_region.{next(iter(options))}"):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"trust_region": options})


@pytest.mark.parametrize(
    "options, match", [({"stall": {"after": -1}}, "stall.after"), ({"stall_action": "random"}, "was removed")]
)
def test_bad_stall_options_are_refused(options, match):
    with pytest.raises(BayestuneError, match=match):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"experimental": options})


def test_a_stalled_run_takes_its_exploration_step_instead_of_the_acquisition(monkeypatch):
    opt = Optimizer(
        mixed_space(),
        objectives=["t"],
        strategy="bo",
        seed=5,
        design=DesignSpec(size=6),
        strategy_options={"experimental": {"stall": {"after": 3}}},
    )
    for i in range(9):  # the first value is the best: the run stalls at once
        cfg = opt.ask(1)[0]
        opt.tell(cfg, 1.0 if i == 0 else 10.0 + i)
    calls = []
    (stall,) = [p for p in opt.strategy.schedule.turn_takers if isinstance(p, StallStep)]
    original = stall.pick
    monkeypatch.setattr(stall, "pick", lambda *a: calls.append(1) or original(*a))
    picks = []
    for i in range(6):  # 3, 4, ..., 8 model suggestions into the stall (the design does not count): steps at 3 and 6
        cfg = opt.ask(1)[0]
        picks.append(cfg)
        opt.tell(cfg, 20.0 + i)
    assert len(calls) == 2
    keys = [tuple(sorted((k, str(v)) for k, v in t.config.items())) for t in opt.trials]
    assert len(set(keys)) == len(keys)


def test_the_initial_design_does_not_count_as_a_stall():
    opt = Optimizer(
        mixed_space(),
        objectives=["t"],
        strategy="bo",
        seed=5,
        design=DesignSpec(size=8),
        strategy_options={"experimental": {"stall": {"after": 4}}},
    )
    for i in range(8):  # the design's first value stays the best
        cfg = opt.ask(1)[0]
        opt.tell(cfg, 1.0 if i == 0 else 10.0 + i)
    (stall,) = [p for p in opt.strategy.schedule.turn_takers if isinstance(p, StallStep)]
    targets = np.array([1.0] + [10.0 + i for i in range(1, 8)])
    # eight evaluations after the best, but the first model suggestion: no stalled suggestion yet
    assert not stall.takes_turn(Turn(targets, np.ones(8, bool), 8, 1, index=1))


def test_auto_ordinal_scale_keeps_the_warping_with_the_higher_marginal_likelihood(monkeypatch):
    from types import SimpleNamespace

    strategy = make_strategy(
        "bo", mixed_space(), [Objective("t")], np.random.default_rng(0), {"experimental": {"ordinal_scale": "auto"}}
    ).surrogates
    assert [e.ordinal_scale for e in strategy.encoders] == [None, "linear"]  # log is the space's own rule here
    lml = {None: -3.0, "linear": -1.0}
    monkeypatch.setattr(
        strategy,
        "_fit",
        lambda F, y, noise=None: SimpleNamespace(
            log_marginal_likelihood_value_=lml[strategy.encoder.ordinal_scale],
            hyperparameters_=strategy.encoder.ordinal_scale,
        ),
    )
    X = mixed_space().sample(6, np.random.default_rng(1))
    gp = strategy._choose_warping(X, np.arange(6.0), None)
    assert strategy.encoder.ordinal_scale == "linear" and gp.hyperparameters_ == "linear"
    assert strategy._n_fits == 1 and strategy._theta == "linear"
    lml["linear"] = -5.0
    strategy._choose_warping(X, np.arange(6.0), None)
    assert strategy.encoder.ordinal_scale is None and strategy._n_fits == 2


def test_auto_ordinal_scale_is_the_default_behaviour_where_no_warping_differs():
    space = Space([Ordinal("e", [0, 2, 4, 6, 8]), Real("r", 0.0, 1.0)])

    def f(c):
        return (c["e"] - 4) ** 2 + c["r"]

    runs = [
        Optimizer(space, objectives=["t"], strategy="bo", seed=5, strategy_options=o)
        for o in ({}, {"experimental": {"ordinal_scale": "auto"}})
    ]
    for o in runs:
        o.optimize(f, 12)
    assert [t.config for t in runs[0].trials] == [t.config for t in runs[1].trials]


def test_bad_ordinal_scale_is_refused():
    with pytest.raises(BayestuneError, match="ordinal_scale"):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"experimental": {"ordinal_scale": "sqrt"}})


def test_batch_ask_returns_distinct_feasible_configs():
    opt = Optimizer(mixed_space(), objectives=["t"], strategy="bo", seed=0, design=DesignSpec(size=6))
    for cfg in opt.ask(6):
        opt.tell(cfg, objective(cfg))
    batch = opt.ask(4)
    assert len(batch) == 4
    assert len({tuple(sorted(c.items())) for c in batch}) == 4
    for cfg in batch:
        opt.tell(cfg, objective(cfg))


def test_hidden_constraints_reduce_failures():
    # Large tiles crash (x * y > 40, ~60% of the space); the optimum lies inside the feasible
    # region. After the design, the feasibility model should steer clear of the crashes.
    space = Space([Integer("x", 0, 15), Integer("y", 0, 15), Categorical("k", ["u", "v"])])

    def box(cfg):
        if cfg["x"] * cfg["y"] > 40:
            return Result.failure("too many registers", "runtime")
        return 1.0 + abs(cfg["x"] - 4) + 0.5 * abs(cfg["y"] - 5) + (cfg["k"] == "v")

    def failures(strategy, seed):
        opt = Optimizer(space, objectives=["t"], strategy=strategy, seed=seed)
        opt.optimize(box, 30)
        return sum(1 for t in opt.trials[10:] if not t.feasible)

    bo = np.mean([failures("bo", s) for s in range(3)])
    rnd = np.mean([failures("random", s) for s in range(3)])
    assert bo < 0.6 * rnd


def test_heteroscedastic_noise_reads_the_repeats_of_the_first_objective():
    space = mixed_space()
    rng = np.random.default_rng(0)
    X = space.sample(12, rng)
    Y = np.array([[objective(space.to_config(x))] for x in X])
    repeats = [{"t": (y[0] * 0.9, y[0] * 1.1)} if i % 2 else {} for i, y in enumerate(Y)]
    history = History(space, [Objective("t")], X, Y, np.ones(12, bool), np.empty((0, space.width)), repeats=repeats)
    bo = make_strategy("bo", space, [Objective("t")], rng, {"gp": {"noise": "heteroscedastic"}})
    v = bo.surrogates._noise_variances(history, np.arange(12))
    np.testing.assert_allclose(v[1::2], (0.1 * Y[1::2, 0]) ** 2)
    assert np.isnan(v[::2]).all()
    assert make_strategy("bo", space, [Objective("t")], rng).surrogates._noise_variances(history, np.arange(12)) is None
    (row,) = bo.suggest(history, 1)
    assert space.is_feasible(row.reshape(1, -1))[0]


@pytest.mark.parametrize(
    "strategy, options",
    [
        ("bo", {"gp": {"noise": "loud"}}),
        ("bo", {"gp": {"noise": "heteroscedastic"}, "model": "rf"}),
        ("parego", {"gp": {"noise": "heteroscedastic"}}),
    ],
)
def test_heteroscedastic_noise_is_refused_where_it_cannot_apply(strategy, options):
    with pytest.raises(BayestuneError, match="noise"):
        Optimizer(
            mixed_space(),
            objectives=["t", "u"] if strategy == "parego" else ["t"],
            strategy=strategy,
            strategy_options=options,
        )


@pytest.mark.parametrize(
    "options",
    [
        {"model": "svm"},
        {"exploration": "cooling"},
        {"experimental": {"model_selection_every": 3}},
        {"experimental": {"portfolio": True}},
        {"acquisition": "portfolio"},
        {"model": "auto"},
        {"failure_variance": False},
        {"acquisition": "multi"},
        {"acquisition": "advanced_multi"},
        {"exploration": "cv_paper"},
        {"trust_region": 3},
        {"trust_region": {"evry": 3}},
    ],
)
def test_new_options_are_checked(options):
    with pytest.raises(BayestuneError):
        Optimizer(mixed_space(), objectives=["t"], strategy="bo", seed=0, strategy_options=options)


def test_old_option_names_load_with_a_warning_naming_the_new_spelling():
    space = mixed_space()
    with pytest.warns(FutureWarning, match="'local_every' is now spelled 'trust_region.every'"):
        old = make_strategy(
            "bo",
            space,
            [Objective("t")],
            np.random.default_rng(0),
            {"local_every": 0, "rf_trees": 20, "n_samples": 300, "noise": "homoscedastic"},
        )
    new = make_strategy(
        "bo",
        space,
        [Objective("t")],
        np.random.default_rng(0),
        {"trust_region": {"every": 0}, "rf": {"trees": 20}, "acquisition_search": {"n_samples": 300}},
    )
    assert old.settings == new.settings


@pytest.mark.filterwarnings("ignore::bayestune.settings.ExperimentalOptionWarning")
@pytest.mark.parametrize(
    "old, new",
    [
        ({"exploration": "constant"}, {}),
        ({"acquisition_search": "random"}, {"acquisition_search": {"method": "random"}}),
        (
            {"epsilon": 0.1, "stall_after": 4},
            {"acquisition_search": {"epsilon": 0.1}, "experimental": {"stall": {"after": 4}}},
        ),
        ({"experimental": {"epsilon": 0.1}}, {"acquisition_search": {"epsilon": 0.1}}),
        ({"experimental": {"stall_after": 4}}, {"experimental": {"stall": {"after": 4}}}),
    ],
)
def test_old_option_values_become_their_new_options(old, new):
    def settings(options):
        return make_strategy("bo", mixed_space(), [Objective("t")], np.random.default_rng(0), options).settings

    with pytest.warns(FutureWarning):
        assert settings(old) == settings(new)


def test_an_option_given_under_both_names_is_refused():
    with pytest.raises(BayestuneError, match="trust_region.every is given twice"):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"local_every": 2, "trust_region": {"every": 3}})


def test_experimental_options_warn():
    with pytest.warns(UserWarning, match=r"experimental option\(s\) \['experimental.stall'\]"):
        Optimizer(mixed_space(), strategy="bo", strategy_options={"experimental": {"stall": {"after": 5}}})


def test_the_peers_epsilon_is_no_experiment_and_does_not_warn():
    """epsilon 0.1 is what every HyperMapper file without epsilon_greedy_threshold means."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Optimizer(mixed_space(), strategy="bo", strategy_options={"acquisition_search": {"epsilon": 0.1}})


def test_a_group_keeps_the_defaults_of_the_keys_left_out():
    bo = make_strategy(
        "bo", mixed_space(), [Objective("t")], np.random.default_rng(0), {"acquisition_search": {"n_starts": 4}}
    )
    assert bo.settings.acquisition_search.n_starts == 4 and bo.settings.acquisition_search.n_samples == 5000


def test_a_journal_written_with_old_option_names_resumes_with_the_same_settings(tmp_path):
    from bayestune.storage.journal import Journal

    old = {"local_every": 0, "rf_trees": 20, "model": "rf"}
    with Journal(tmp_path / "old.db") as journal, pytest.warns(FutureWarning):
        Optimizer(
            mixed_space(), objectives=["t"], strategy="bo", strategy_options=old, seed=3, journal=journal
        ).optimize(objective, 8)
    with Journal(tmp_path / "old.db") as journal, pytest.warns(FutureWarning, match="trust_region.every"):
        resumed = Optimizer(mixed_space(), objectives=["t"], journal=journal, resume=True)
    assert resumed.strategy.settings.trust_region.every == 0 and resumed.strategy.settings.rf.trees == 20
