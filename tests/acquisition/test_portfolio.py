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
