import numpy as np

from bayestune.acquisition.portfolio import AcquisitionPortfolio


def test_round_robin_then_drops_a_laggard():
    p = AcquisitionPortfolio(skip_threshold=2)
    keys, values = [], []
    for t in range(30):
        member = p.next_member()
        key = bytes([t])
        p.record_proposal(key, member)
        keys.append(key)
        # "pi" proposals are always bad, the others good
        values.append(10.0 + t if member == "pi" else 1.0 + 0.01 * t)
        p.update(keys, np.array(values), np.ones(len(values), bool))
    assert "pi" not in p.members and len(p.members) >= 1


def test_failed_proposals_count_as_median():
    p = AcquisitionPortfolio()
    for i, m in enumerate(["ei", "pi", "lcb"]):
        p.record_proposal(bytes([i]), m)
    s = p.scores([bytes([0]), bytes([1]), bytes([2])], np.array([1.0, np.nan, 3.0]), np.array([True, False, True]))
    assert s["ei"] == 0.0 and s["pi"] == 0.5 and s["lcb"] == 1.0


def test_promotes_a_clear_leader():
    p = AcquisitionPortfolio(skip_threshold=2)
    keys, values = [], []
    for t in range(30):
        member = p.next_member()
        key = bytes([t])
        p.record_proposal(key, member)
        keys.append(key)
        values.append({"ei": 1.0, "pi": 5.0, "lcb": 5.5}[member] + 0.001 * t)
        p.update(keys, np.array(values), np.ones(len(values), bool))
    assert p.members == ["ei"]


def _play(p, quality, rounds=30):
    keys, values = [], []
    judged = []
    for t in range(rounds):
        member = p.next_member()
        key = t.to_bytes(2, "big")
        p.record_proposal(key, member)
        keys.append(key)
        values.append(quality[member] + 0.001 * t)
        before = list(p.members)
        p.update(keys, np.array(values), np.ones(len(values), bool))
        judged.append(before != p.members)
    return judged


def test_kt_rounds_judges_once_per_round():
    p = AcquisitionPortfolio(kt_rounds=True, skip_threshold=2)
    seen_counts = []
    for t in range(9):
        member = p.next_member()
        p.record_proposal(bytes([t]), member)
        p.update([bytes([i]) for i in range(t + 1)], np.arange(t + 1, dtype=float), np.ones(t + 1, bool))
        seen_counts.append(sum(p._behind.values()) + sum(p._ahead.values()))
    # counts only move after the 3rd, 6th and 9th proposal (once every member has proposed again)
    assert seen_counts[0] == seen_counts[1] == 0 and seen_counts[3] == seen_counts[2] == seen_counts[4]


def test_kt_rounds_counts_are_cumulative_and_laggard_dropped_before_leader_promoted():
    p = AcquisitionPortfolio(kt_rounds=True, skip_threshold=3)
    _play(p, {"ei": 1.0, "pi": 5.0, "lcb": 9.0}, rounds=60)
    # lcb trails most and is dropped first; then, of ei and pi, ei leads and is promoted
    assert p.members == ["ei"]


def test_kt_rounds_drop_resets_counts():
    p = AcquisitionPortfolio(kt_rounds=True, skip_threshold=2)
    _play(p, {"ei": 1.0, "pi": 1.0, "lcb": 9.0}, rounds=6)  # dropped at the end of round 2
    assert "lcb" not in p.members and p._behind == {} and p._ahead == {}
