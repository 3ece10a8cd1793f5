"""Running the peers' own Python programs with only their import line changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

PEER_FILES = Path(__file__).parents[1] / "data" / "peers"
HM_ROOT = PEER_FILES / "hypermapper-3dfa8a7"
BACO_AUX = PEER_FILES / "baco-167b196" / "tests" / "aux"

#: The one line each program changes, and what it becomes.
IMPORT_LINES = {
    "from hypermapper import optimizer  # noqa": "from bayestune.peers import hypermapper as optimizer  # noqa",
    "from baco import optimizer  # noqa": "from bayestune.peers import baco as optimizer  # noqa",
    "from baco import run  # noqa": "from bayestune.peers import baco as run  # noqa",
}


def with_import_changed(text: str) -> str:
    """The program with its peer import line replaced, and nothing else changed."""
    lines = text.splitlines(keepends=True)
    changed = [i for i, line in enumerate(lines) if line.strip() in IMPORT_LINES]
    assert len(changed) == 1, "a peer program imports its peer on exactly one line"
    i = changed[0]
    lines[i] = lines[i].replace(lines[i].strip(), IMPORT_LINES[lines[i].strip()])
    return "".join(lines)


def copy_hypermapper_tree(dest: Path, **changes: object) -> Path:
    """HyperMapper's examples under ``dest`` (the programs name their files from the repository
    root), every scenario with ``changes`` applied (a smaller budget)."""
    root = dest / "hypermapper-tree"
    shutil.copytree(HM_ROOT, root)
    for scenario in root.rglob("*_scenario.json"):
        data = json.loads(scenario.read_text())
        data.update(changes)
        scenario.write_text(json.dumps(data, indent=2))
    return root


def run_program(path: Path) -> None:
    """Run the program at ``path`` as ``python path`` would, its import line changed."""
    code = compile(with_import_changed(path.read_text()), str(path), "exec")
    exec(code, {"__name__": "__main__", "__file__": str(path)})
