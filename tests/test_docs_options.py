"""Hand-written pages name only options that exist: a dotted option (`trust_region.every`) must be
one of a strategy's, and an old flat name (`prior_beta`) appears only where the page says it is
an old spelling or a peer's own key. The generated pages (strategies.md, peers.md) are checked
against the code elsewhere."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from bayestune.options_reference import option_rows
from bayestune.strategies.base import _REGISTRY

ROOT = Path(__file__).parents[1]
GENERATED = {"strategies.md", "peers.md"}
PAGES = [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in GENERATED)]
#: Words that mark a line as about old spellings or a peer's own keys.
CONTEXT = re.compile(r"old|earlier|still load|HyperMapper|BaCO|was |were |renamed|spelled|Kernel Tuner", re.I)
TICKED = re.compile(r"`([a-z_]+(?:\.[a-z_]+)+)`")


@cache
def _options() -> tuple[set[str], set[str], set[str]]:
    """Every dotted option, every group name, and every old flat name whose new spelling has
    another last part (``prior_beta`` -> ``prior.beta``; not ``recall_alpha`` ->
    ``notears.recall_alpha``, which a page may name inside its group) of the registered strategies."""
    dotted, groups, renamed = set(), set(), set()
    for strategy in _REGISTRY.values():
        cls = strategy.settings_class
        rows = [option for option, _, _ in option_rows(cls)]
        dotted.update(r for r in rows if "." in r)
        groups.update(r.split(".")[0] for r in rows if "." in r)
        renamed.update(k for k, new in cls.RENAMED.items() if "." not in k and new.split(".")[-1] != k)
    return dotted, groups, renamed


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_dotted_options_named_in_a_page_exist(page):
    dotted, groups, _ = _options()
    unknown = [
        (i + 1, name)
        for i, line in enumerate(page.read_text().splitlines())
        for name in TICKED.findall(line)
        if name.split(".")[0] in groups and name not in dotted
    ]
    assert not unknown, f"{page.name}: options that no strategy has (line, name): {unknown}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_old_flat_names_appear_only_as_old_spellings(page):
    _, _, renamed = _options()
    stale = [
        (i + 1, name)
        for i, line in enumerate(page.read_text().splitlines())
        for name in re.findall(r"`([a-z_]+)`", line)
        if name in renamed and not CONTEXT.search(line)
    ]
    assert not stale, f"{page.name}: old option names outside a line about old names (line, name): {stale}"
