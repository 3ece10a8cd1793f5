"""The Python block of examples/tvm/README.md, run as printed for every strategy it names
(fewer trials; skipped without TVM)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "examples" / "tvm" / "README.md"
needs_tvm = pytest.mark.skipif(
    importlib.util.find_spec("tvm") is None,
    reason="Apache TVM is not installed (pip install -e '.[tvm]' in the bayestune checkout)",
)


def python_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) == 1, "the TVM README should have one Python block"
    return blocks[0]


def named_strategies(block: str) -> list[str]:
    """The strategy names the block mentions (in code or comment), bayestune's and TVM's."""
    from bayestune.integrations.tvm import TVM_STRATEGIES
    from bayestune.strategies import available_strategies

    known = set(TVM_STRATEGIES) | set(available_strategies())
    return [n for n in dict.fromkeys(re.findall(r'"([\w-]+)"', block)) if n in known]


STRATEGIES = named_strategies(python_block())


def test_the_block_names_bayestunes_and_tvms_strategies():
    assert {"bo", "evolutionary"} <= set(STRATEGIES)


@needs_tvm
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_readme_block_runs_for_every_strategy_it_names(strategy, tmp_path):
    block = python_block()
    code = (
        block.replace('strategy="bo"', f'strategy="{strategy}"')
        .replace('"work", 64,', '"work", 4,')
        .replace("num_trials_per_iter=16", "num_trials_per_iter=2")
    )
    assert '"work", 4,' in code and "num_trials_per_iter=2" in code
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=900
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(r"^best \d+\.\d{3} ms of 4: \[", out.stdout, flags=re.MULTILINE), out.stdout[-2000:]
    assert re.search(r"^\{'design': \d, 'tile_i': \(", out.stdout, flags=re.MULTILINE), out.stdout[-2000:]
    journal = tmp_path / "work" / "bayestune.journal.db"
    assert journal.is_file()
