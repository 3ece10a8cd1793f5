"""The options reference in docs/ is the one the settings classes generate."""

from __future__ import annotations

from pathlib import Path

from bayestune.options_reference import field_comments, option_rows, reference
from bayestune.strategies.bo import BOSettings, ParEGOSettings
from bayestune.strategies.bograph import BoGraphSettings

DOCS = Path(__file__).parents[1] / "docs" / "strategies.md"


def test_docs_strategies_md_is_the_generated_reference():
    assert DOCS.read_text() == reference(), "regenerate: python -m bayestune.options_reference > docs/strategies.md"


def test_every_option_of_the_model_based_strategies_says_what_it_does():
    for cls in (BOSettings, ParEGOSettings, BoGraphSettings):
        missing = [option for option, _, doc in option_rows(cls) if not doc]
        assert not missing, f"{cls.__name__}: options without a comment: {missing}"


def test_at_most_fourteen_top_level_options_each():
    for cls in (BOSettings, ParEGOSettings, BoGraphSettings):
        assert sum("." not in option for option, _, _ in option_rows(cls)) <= 14, cls.__name__


def leaves(cls) -> list[str]:
    """The options a user can set: every row that is not a group."""
    rows = [option for option, _, _ in option_rows(cls)]
    return [r for r in rows if not any(o.startswith(r + ".") for o in rows)]


def test_at_most_thirty_settable_leaves_each():
    """Optimiser constants stay module privates unless a test, benchmark or example sets them:
    a new option has to make room (review 3: bo 43, parego 46, bograph 46 before)."""
    for cls in (BOSettings, ParEGOSettings, BoGraphSettings):
        assert len(leaves(cls)) <= 30, (cls.__name__, leaves(cls))


def test_a_group_shows_its_owners_defaults():
    rows = {option: default for option, default, _ in option_rows(BoGraphSettings)}
    assert rows["acquisition_search.n_samples"] == "`2000`"
    assert {option: default for option, default, _ in option_rows(ParEGOSettings)}["trust_region.every"] == "`0`"


def test_a_comment_above_a_field_counts_as_its_comment():
    assert "no anchor" in field_comments(ParEGOSettings)["trust_region"]
