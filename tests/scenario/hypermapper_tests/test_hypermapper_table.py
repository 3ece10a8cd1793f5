"""docs/peers.md is generated from the mapping code and has a row for every key of both schemas."""

from pathlib import Path

from bayestune.scenario.hypermapper.keys import NESTED
from bayestune.scenario.hypermapper.schemas import (
    BACO_KEYS,
    DOE_KEYS,
    FEASIBLE_KEYS,
    HYPERMAPPER_KEYS,
    MODE_KEYS,
    MODEL_KEYS,
    PARAMETER_KEYS,
)
from bayestune.scenario.hypermapper.table import peers_markdown

DOCS = Path(__file__).parents[3] / "docs" / "peers.md"


def test_docs_peers_md_is_the_generated_table():
    assert DOCS.read_text() == peers_markdown(), "run: python -m bayestune.scenario.hypermapper.table > docs/peers.md"


def test_every_key_of_both_schemas_has_a_row():
    text = peers_markdown()
    missing = [k for k in sorted(BACO_KEYS | HYPERMAPPER_KEYS) if f"| `{k}` |" not in text]
    nested = (
        [f"input_parameters.{k}" for k in PARAMETER_KEYS]
        + [f"design_of_experiment.{k}" for k in DOE_KEYS]
        + [f"feasible_output.{k}" for k in FEASIBLE_KEYS]
        + [f"models.{k}" for k in MODEL_KEYS]
        + [f"*_mode.{k}" for k in MODE_KEYS]
    )
    missing += [k for k in nested if k not in NESTED or f"| `{k}` |" not in text]
    assert not missing, f"schema keys without a row in docs/peers.md: {missing}"
