"""The one options checker: typed fields, rules, nested groups, renamed and experimental options."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.settings import ExperimentalOptionWarning, RenamedOptionWarning, Rule, Settings


@dataclass(frozen=True)
class Inner(Settings):
    size: int = 3  # how big
    name: str = "a"  # what it is called

    def rules(self) -> list[Rule]:
        return [self.at_least("size", 1)]


@dataclass(frozen=True)
class Lab(Settings):
    EXPERIMENTAL: ClassVar[bool] = True

    trick: bool = False


@dataclass(frozen=True)
class Outer(Settings):
    RENAMED: ClassVar[dict[str, str]] = {"inner_size": "inner.size", "old_trick": "lab.trick"}

    rate: float = 0.5
    inner: Inner = Inner()
    other: Inner = Inner(size=7)
    lab: Lab = Lab()

    def rules(self) -> list[Rule]:
        return [("rate", 0 <= self.rate <= 1, "`0 <= rate <= 1`")]


def load(options):
    return Outer.from_options("thing 'x'", options)


def test_a_group_is_a_mapping_over_the_owners_defaults():
    s = load({"inner": {"name": "b"}, "other": {"name": "c"}})
    assert s.inner == Inner(3, "b") and s.other == Inner(7, "c")  # other keeps its owner's size 7
    assert load({}) == Outer()


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"inner": {"sise": 2}},
            r"unknown option\(s\) \['inner.sise'\] for thing 'x' \(did you mean 'inner.size'\?\); allowed: \['inner.name', 'inner.size'\]",
        ),
        ({"inner": {"size": 0}}, r"`size >= 1` \(an integer\) must hold, but got inner.size=0"),
        ({"inner": {"size": "2"}}, r"wrong type: inner.size='2'"),
        ({"inner": 3}, r"option group inner must be a mapping"),
        ({"rate": 2.0}, r"`0 <= rate <= 1` must hold, but got rate=2.0"),
        ({"inner_size": 2, "inner": {"size": 4}}, r"inner.size is given twice \(also by its old name 'inner_size'\)"),
    ],
)
def test_bad_options_are_refused_by_their_dotted_name(options, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BayestuneError, match=message):
            load(options)


def test_an_old_name_loads_where_the_new_one_lives_and_says_so():
    with pytest.warns(RenamedOptionWarning, match="'inner_size' is now spelled 'inner.size'"):
        assert load({"inner_size": 5}).inner.size == 5


def test_setting_an_experimental_option_warns_and_leaving_it_does_not():
    with pytest.warns(ExperimentalOptionWarning, match=r"\['lab.trick'\]"):
        assert load({"lab": {"trick": True}}).lab.trick
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load({"lab": {"trick": False}, "rate": 0.2})
