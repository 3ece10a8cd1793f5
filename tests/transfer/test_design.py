import numpy as np

from bayestune.history import History
from bayestune.objectives import Objective
from bayestune.transfer.design import warm_start_rows
from bayestune.transfer.runs import PriorRun


def empty_history(space):
    return History(
        space,
        [Objective("t")],
        np.empty((0, space.width)),
        np.empty((0, 1)),
        np.zeros(0, bool),
        np.empty((0, space.width)),
        set(),
    )


def test_the_sources_best_come_first_in_rank_order(space, related):
    rows = warm_start_rows(space, [related], 3, empty_history(space))
    order = np.argsort(related.y, kind="stable")
    assert np.array_equal(rows, related.X[order[:3]])


def test_seen_rows_are_skipped_and_sources_alternate(space, related, unrelated):
    history = empty_history(space)
    best = related.X[np.argsort(related.y)[:1]]
    history.seen.update(space.row_keys(best))
    rows = warm_start_rows(space, [related, unrelated], 4, history)
    keys = space.row_keys(rows)
    assert len(set(keys)) == 4 and space.row_keys(best)[0] not in keys
    assert keys[0] == space.row_keys(unrelated.X[np.argsort(unrelated.y, kind="stable")[:1]])[0]


def test_failures_are_never_proposed(space):
    run = PriorRun.from_configs(space, [{"bx": 1, "by": 1, "c": "a"}, {"bx": 2, "by": 1, "c": "a"}], [None, 3.0])
    rows = warm_start_rows(space, [run], 5, empty_history(space))
    assert len(rows) == 1 and space.to_config(rows[0])["bx"] == 2
