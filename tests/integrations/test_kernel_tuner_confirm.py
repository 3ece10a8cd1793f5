"""The Kernel Tuner strategy's confirmation: the luckiest sample does not win, the rounds are
counted, the winner reaches Kernel Tuner's results and the journal, a finished run is not re-confirmed."""

from __future__ import annotations

import itertools

import pytest
from kt_toy import TUNE_PARAMS, recorded_time, restriction_callable, restriction_string

from bayestune.integrations.kernel_tuner import BayestuneStrategy
from bayestune.integrations.kernel_tuner.confirm import CONFIRMED, SPEEDUP, WINNER
from bayestune.run import META_CONFIRMATION
from bayestune.storage import Journal

kernel_tuner = pytest.importorskip("kernel_tuner", reason="kernel_tuner is not installed")

LUCKY = (2, 2, 0, 80)  # the default: its first run is a load-free fluke, 0.1 against a true 4.6


class _Searchspace:
    def __init__(self) -> None:
        self.tune_params = dict(TUNE_PARAMS)
        self.list = [
            v
            for v in itertools.product(*TUNE_PARAMS.values())
            if restriction_string(dict(zip(TUNE_PARAMS, v))) and restriction_callable(*v)
        ]


class _LuckyRunner:
    """Kernel Tuner's runner contract; the default's first measurement is the luckiest sample of the run."""

    simulation_mode = False

    def __init__(self) -> None:
        self.ran: list[tuple] = []

    def run(self, elements, tuning_options):
        (element,) = elements
        tuning_options.budget.add_evaluations(1)
        assert not tuning_options.cache or ",".join(map(str, element)) not in tuning_options.cache
        lucky = element == LUCKY and LUCKY not in self.ran
        self.ran.append(element)
        bx, by, unroll, arch = element
        time = 0.1 if lucky else recorded_time(bx, by, unroll)
        return [{"bx": bx, "by": by, "unroll": unroll, "arch": arch, "time": time}]


def _options(tmp_path, max_fevals: int):
    from kernel_tuner import util
    from kernel_tuner.interface import Options

    return Options(
        objective="time",
        objective_higher_is_better=False,
        cache={},
        cachefile=str(tmp_path / "live.json"),
        budget=util.TuningBudget(None, max_fevals),
    )


def _strategy(journal, **kwargs):
    return BayestuneStrategy(seed=0, journal=journal, defaults={"bx": 2, "by": 2, "unroll": 0}, **kwargs)


def test_the_luckiest_sample_does_not_win_and_the_winner_reaches_the_results_and_the_journal(tmp_path):
    runner, path = _LuckyRunner(), tmp_path / "run.sqlite"
    strategy = _strategy(path, confirm_top=2, confirm_rounds=4)
    results = strategy.tune(_Searchspace(), runner, _options(tmp_path, 12))
    assert strategy.optimizer_.best.values["time"] == 0.1  # the search's best is the fluke
    outcome = strategy.confirmation_
    assert outcome is not None and outcome.rounds == 4
    assert len(runner.ran) == 12 + 2 * 4  # the best 2 (the default among them), 4 rounds each, after the budget
    winner = outcome.winner
    assert tuple(strategy.winner_.values()) != LUCKY
    assert winner.value == recorded_time(strategy.winner_["bx"], strategy.winner_["by"], strategy.winner_["unroll"])
    lucky = next(r for r in results if (r["bx"], r["by"], r["unroll"], r["arch"]) == LUCKY)
    assert lucky["time"] == 0.1 and lucky[CONFIRMED]["value"] == pytest.approx(recorded_time(2, 2, 0))
    assert WINNER not in lucky  # Kernel Tuner's own pick (the lowest sample) stays what it measured
    (best,) = [r for r in results if r.get(WINNER)]
    assert best[CONFIRMED]["value"] == winner.value and best[SPEEDUP][0] > 1
    assert best[CONFIRMED]["rounds"] == 4 and len(best[CONFIRMED]["samples"]) == 4
    journal = Journal(path)
    assert len(journal.remeasurements()) == 8
    assert journal.get_meta(META_CONFIRMATION)["winner"]["trial_id"] == winner.trial_id


def test_a_finished_run_resumed_is_not_confirmed_again(tmp_path):
    path = tmp_path / "run.sqlite"
    _strategy(path, confirm_top=2, confirm_rounds=3).tune(_Searchspace(), _LuckyRunner(), _options(tmp_path, 8))
    again = _LuckyRunner()
    strategy = _strategy(path, confirm_top=2, confirm_rounds=3)
    spent = _options(tmp_path, 1)
    spent.budget.add_evaluations(1)  # the budget was used up by the run resumed
    strategy.tune(_Searchspace(), again, spent)
    assert again.ran == [] and strategy.confirmation_.winner is not None


def test_confirm_top_zero_turns_it_off_and_bad_settings_are_refused(tmp_path):
    runner = _LuckyRunner()
    strategy = _strategy(None, confirm_top=0)
    strategy.tune(_Searchspace(), runner, _options(tmp_path, 5))
    assert len(runner.ran) == 5 and strategy.confirmation_ is None
    with pytest.raises(Exception, match="confirm_rounds must be an integer >= 1"):
        BayestuneStrategy(confirm_rounds=0)
