from bayestune.search.candidates import EnumeratedCandidates
from bayestune.space import Integer, Real, Space


def test_small_spaces_are_enumerated_once_and_filtered_by_seen():
    space = Space([Integer("a", 0, 3), Integer("b", 0, 3)], ["a <= b"])
    pool = EnumeratedCandidates(space, limit=100)
    everything = pool.unseen(set())
    assert len(everything) == 10 and space.is_feasible(everything).all()
    seen = set(space.row_keys(everything[:4]))
    rest = pool.unseen(seen)
    assert len(rest) == 6 and not seen & set(space.row_keys(rest))
    assert pool.unseen(set(space.row_keys(everything))).shape == (0, space.width)


def test_large_or_continuous_spaces_give_none():
    assert EnumeratedCandidates(Space([Integer("a", 0, 99), Integer("b", 0, 99)]), limit=100).unseen(set()) is None
    assert EnumeratedCandidates(Space([Real("r", 0.0, 1.0)]), limit=100).unseen(set()) is None
