"""ClassificationForest: learns hidden-constraint shapes, splits discrete features exactly, is seeded."""

import numpy as np
import pytest

from bayestune.models.trees import MAX_BINS, ClassificationForest


def constraint_problem(n: int, seed: int):
    """A diagonal boundary in two reals plus one forbidden value of a 5-level ordinal."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 6))
    X[:, 3] = rng.integers(0, 5, n)
    y = ((X[:, 0] + X[:, 1] < 1.1) & (X[:, 3] != 2)).astype(float)
    return X, y


def test_learns_a_hidden_constraint():
    X, y = constraint_problem(300, 0)
    Xt, yt = constraint_problem(2000, 1)
    p = ClassificationForest(seed=0).fit(X, y).predict(Xt)
    assert np.all((p >= 0) & (p <= 1))
    assert np.mean((p > 0.5) == (yt == 1)) > 0.9
    # The forbidden ordinal value is learned as a whole: its rows get a low probability.
    assert p[Xt[:, 3] == 2].mean() < 0.15


def test_fits_its_training_data_and_splits_discrete_values_exactly():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]] * 4)
    y = np.array([1, 1, 0, 1, 1] * 4, dtype=float)
    forest = ClassificationForest(n_trees=30, max_features=1.0, seed=3).fit(X, y)
    assert forest.threshold_table_[0, :4].tolist() == [0.5, 1.5, 2.5, 3.5]
    p = forest.predict(X)
    # A tree whose bootstrap missed value 2 cannot know it: only those few trees err.
    assert p[y == 0].max() < 0.1 and p[y == 1].min() == 1.0


def test_continuous_features_use_at_most_max_bins_thresholds():
    rng = np.random.default_rng(0)
    X = rng.random((500, 2))
    forest = ClassificationForest(n_trees=5, seed=0).fit(X, (X[:, 0] > 0.3).astype(float))
    assert np.isfinite(forest.threshold_table_).sum(axis=1).max() <= MAX_BINS - 1
    assert forest.predict(np.array([[0.1, 0.5], [0.9, 0.5]])).tolist() == [0.0, 1.0]


def test_identical_rows_with_both_labels_end_in_a_mixed_leaf():
    X = np.zeros((6, 3))
    y = np.array([1, 0, 1, 0, 1, 0], dtype=float)
    p = ClassificationForest(n_trees=50, seed=0).fit(X, y).predict(X[:1])
    assert 0.2 < p[0] < 0.8


def test_same_seed_same_forest_other_seed_other_forest():
    X, y = constraint_problem(100, 2)
    Xt, _ = constraint_problem(50, 3)
    a = ClassificationForest(seed=7).fit(X, y).predict(Xt)
    b = ClassificationForest(seed=7).fit(X, y).predict(Xt)
    c = ClassificationForest(seed=8).fit(X, y).predict(Xt)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_close_to_scikit_learn_on_held_out_log_loss():
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = constraint_problem(200, 4)
    Xt, yt = constraint_problem(3000, 5)

    def log_loss(p):
        return -np.mean(np.log(np.clip(np.where(yt == 1, p, 1 - p), 1e-3, 1)))

    ours = log_loss(ClassificationForest(seed=0).fit(X, y).predict(Xt))
    reference = ensemble.RandomForestClassifier(100, max_features=0.5, random_state=0).fit(X, y == 1)
    theirs = log_loss(reference.predict_proba(Xt)[:, 1])
    assert ours < theirs * 1.1 + 0.01


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.zeros(5), np.zeros(5), "shape"),
        (np.zeros((5, 2)), np.zeros(4), "shape"),
        (np.zeros((0, 2)), np.zeros(0), "shape"),
        (np.zeros((3, 2)), np.array([0.0, 2.0, 1.0]), "0 or 1"),
    ],
)
def test_bad_training_data_is_rejected(X, y, match):
    with pytest.raises(ValueError, match=match):
        ClassificationForest().fit(X, y)


def test_bad_settings_and_prediction_width_are_rejected():
    with pytest.raises(ValueError, match="n_trees"):
        ClassificationForest(n_trees=0)
    with pytest.raises(ValueError, match="max_features"):
        ClassificationForest(max_features=0.0)
    forest = ClassificationForest(n_trees=3, seed=0).fit(np.eye(4), np.array([1.0, 0, 1, 0]))
    with pytest.raises(ValueError, match=r"shape \(M, 4\)"):
        forest.predict(np.zeros((2, 3)))


def test_walk_that_drops_finished_paths_reaches_the_same_leaves_as_the_full_walk():
    r = np.random.default_rng(5)
    X = r.random((80, 6))
    y = ((X[:, 0] > 0.6) | ((X[:, 1] < 0.2) & (X[:, 2] > 0.3))).astype(float)
    forest = ClassificationForest(n_trees=30, seed=1).fit(X, y)
    Xs = r.random((700, 6))

    def full_walk(flat, offset, node):
        for _ in range(forest.depth_):
            node = forest._step_left[node] + (flat[offset + forest._step_feature[node]] > forest._step_threshold[node])
        return forest.value_[node]

    flat, m, d = Xs.ravel(), 700, 6
    offset, node = np.repeat(np.arange(m) * d, forest.n_trees), np.tile(np.arange(forest.n_trees), m)
    np.testing.assert_array_equal(forest._leaves(flat, offset, node), full_walk(flat, offset, node))
    offset, node = np.arange(m) * d, np.full(m, 3)
    np.testing.assert_array_equal(forest._leaves(flat, offset, node), full_walk(flat, offset, node))
