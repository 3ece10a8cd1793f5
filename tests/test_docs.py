"""The README and the documentation pages say only what is true: every code block runs or says why not.

Every fenced block of ``README.md`` and ``docs/**/*.md``:

* ``json`` / ``yaml`` blocks must parse (a fragment such as ``"measurement": {...}`` is read
  inside braces), and a block that is a whole native scenario must load as one;
* ``python`` blocks run in a fresh interpreter, from a scratch directory that sees the
  repository's ``examples/``, unless a marker follows them;
* every other block is followed by ``<!-- not run: REASON -->`` or
  ``<!-- run by: tests/FILE.py::TEST -->``, and the named test must exist.

Pages that others own or that code generates cannot carry markers: the generated ones
(``strategies.md``, ``peers.md``) are checked whole by the test that regenerates them, and the
few blocks of ``scenario.md`` and ``architecture.md`` that need one have it in ``MARKED_ELSEWHERE``.
The site itself (links, anchors, the navigation, API names) is built with
``mkdocs build --strict`` by ``.ci/run``; here are the checks a build does not make.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bayestune.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 250

#: Pages generated from the code: the named test checks each is exactly what the code writes.
GENERATED = {
    "docs/strategies.md": "tests/test_options_reference.py::test_docs_strategies_md_is_the_generated_reference",
    "docs/peers.md": "tests/scenario/hypermapper_tests/test_hypermapper_table.py::test_docs_peers_md_is_the_generated_table",
}

#: Blocks of pages other people own, by page and first line: the marker the page cannot carry.
MARKED_ELSEWHERE = {
    (
        "docs/scenario.md",
        "from bayestune.scenario import load_scenario, save_scenario, scenario_from_dict, scenario_to_dict",
    ): "not run: reads blur.yaml, a file of the reader's; tests/scenario/ round-trips every format",
    (
        "docs/scenario.md",
        "examples/x.json: $.parameters[1].bounds: `low < high` must hold, but got [5, 2]",
    ): "not run: error messages, not code",
    (
        "docs/scenario.md",
        "((p_i2 < p_i4) & (p_i0 < p_i2) & (p_i1 < p_i2)) | ((p_i4 < p_i2) & (p_i0 < p_i4) & (p_i1 < p_i4))",
    ): "not run: a constraint and its rewriting, not code",
    (
        "docs/architecture.md",
        "__main__ · __init__                                     python -m bayestune; the public names",
    ): "run by: tests/test_architecture.py::test_every_import_points_down_the_layer_picture",
    (
        "docs/architecture.md",
        "strategies/__init__.py -> bayestune.strategies.*        the registry imports every strategy module, so a strategy registers itself by living in strategies/",
    ): "run by: tests/test_architecture.py::test_every_import_points_down_the_layer_picture",
}

MARKER = re.compile(r"<!--\s*(not run:\s*\S.*?|run by:\s*(\S+?)::(\w+))\s*-->")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
PARSED = {"json", "yaml", "yml"}


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text and the marker after it."""

    page: str  # repository-relative path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    marker: str | None

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.language or 'no language'})"


def pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` with the marker on the first non-blank line after each."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, start = opening.group(1), i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), None)
        assert end is not None, f"{page}:{i + 1}: a code block that is never closed"
        after = next((line for line in lines[end + 1 :] if line.strip()), "")
        marker = MARKER.search(after) if after.lstrip().startswith("<!--") else None
        text = "\n".join(lines[start + 1 : end])
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        found.append(
            Block(
                page,
                start + 1,
                opening.group(2).lower(),
                text,
                marker.group(1) if marker else MARKED_ELSEWHERE.get((page, first)),
            )
        )
        i = end + 1
    return found


ALL_BLOCKS = [block for path in pages() for block in blocks_of(path)]


def _id(block: Block) -> str:
    return f"{block.page}:{block.line}"


def test_the_pages_have_code_blocks_to_check():
    """A parser that found nothing would make every test below pass for nothing."""
    assert len(ALL_BLOCKS) >= 40, [str(b) for b in ALL_BLOCKS]
    assert {b.language for b in ALL_BLOCKS} >= {"json", "yaml", "python", "console", "bash"}


def _parse(block: Block) -> object:
    text = block.text.strip()
    if block.language == "json":
        return json.loads("{" + text + "}" if text.startswith('"') else text)
    return yaml.safe_load(text)


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.language in PARSED], ids=_id)
def test_json_and_yaml_blocks_parse_and_whole_scenarios_load(block):
    try:
        data = _parse(block)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        pytest.fail(f"{block} does not parse: {exc}")
    if isinstance(data, dict) and "parameters" in data and "objectives" in data:
        scenario_from_dict(data, source=str(block))  # a stale key or type is an error naming it


RUN = [b for b in ALL_BLOCKS if b.language == "python" and b.marker is None and b.page not in GENERATED]


@pytest.mark.parametrize("block", RUN, ids=_id)
def test_python_blocks_run_in_a_fresh_interpreter(block, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", block.text], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stderr[-3000:]}"


def test_some_python_blocks_really_run():
    assert len(RUN) >= 3, [str(b) for b in RUN]


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.language not in PARSED], ids=_id)
def test_every_other_block_runs_in_a_test_or_says_why_not(block):
    if block.page in GENERATED:
        return  # checked whole by its generator's test (test_generated_pages_name_existing_tests)
    if block.language == "python" and block.marker is None:
        return  # run by test_python_blocks_run_in_a_fresh_interpreter
    assert block.marker, (
        f"{block}: follow the block with <!-- not run: REASON --> or "
        f"<!-- run by: tests/FILE.py::TEST --> (first line: {block.first_line[:80]!r})"
    )
    named = MARKER.fullmatch(f"<!-- {block.marker} -->")
    if named and named.group(2):
        _assert_test_exists(named.group(2), named.group(3), str(block))


def _assert_test_exists(file: str, test: str, where: str) -> None:
    path = ROOT / file
    assert path.is_file(), f"{where}: {file} does not exist"
    assert re.search(rf"^def {re.escape(test)}\(", path.read_text(encoding="utf-8"), re.M), (
        f"{where}: {file} has no test {test}"
    )


def test_generated_pages_name_existing_tests():
    for page, test in GENERATED.items():
        assert (ROOT / page).is_file(), page
        _assert_test_exists(*test.split("::"), where=page)


def test_blocks_marked_elsewhere_still_exist():
    """An entry of MARKED_ELSEWHERE whose block was edited away would hide nothing and mislead."""
    present = {(b.page, b.first_line) for b in ALL_BLOCKS}
    assert not set(MARKED_ELSEWHERE) - present, sorted(set(MARKED_ELSEWHERE) - present)


# ---- the README ----------------------------------------------------------------------------------


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}): move details to docs/"


def test_readme_quickstart_keeps_its_two_commands():
    """A newcomer check runs exactly these two lines."""
    text = README.read_text(encoding="utf-8")
    assert "pip install -e . && bayestune optimize examples/quickstart/scenario.json --budget 30\n" in text
    assert 'pip install -e ".[test]" && python -m pytest\n' in text


def _slug(heading: str) -> str:
    """The anchor Python-Markdown's ``toc`` (and so MkDocs and GitHub, for these headings) gives a heading."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(m.group(1).replace("`", "")) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*$", text, re.M)}


def test_readme_links_point_to_files_and_anchors_that_exist():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 20, local
    for link in local:
        target, _, anchor = link.partition("#")
        path = (README.parent / target) if target else README
        assert path.exists(), f"README.md links to {link}, which does not exist"
        if anchor:
            assert anchor in _anchors(path), f"README.md links to {link}: {target} has no heading with that anchor"


# ---- the site's navigation and the command table ---------------------------------------------------


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    return []


def test_every_docs_page_is_in_the_navigation_and_every_entry_exists():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    on_disk = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert not on_disk - set(nav), f"pages missing from mkdocs.yml's nav: {sorted(on_disk - set(nav))}"
    assert not set(nav) - on_disk, f"nav entries without a page: {sorted(set(nav) - on_disk)}"
    assert len(nav) == len(set(nav)), "a page stands twice in the nav"


def test_every_command_has_a_row_in_the_command_table():
    from bayestune.cli import cli

    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `bayestune ([a-z-]+)", text, re.M))
    assert set(cli.commands) <= rows, f"commands without a row in docs/cli.md: {sorted(set(cli.commands) - rows)}"
    assert rows <= set(cli.commands), f"rows of docs/cli.md for no command: {sorted(rows - set(cli.commands))}"


# ---- the Quickstart, as a newcomer runs it -----------------------------------------------------------


def _bayestune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "bayestune", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


NUMBER = r"[-+0-9.e]+"
INTERVAL = rf"\[{NUMBER}, {NUMBER}\] \(95% CI"


def test_quickstart_runs_and_confirms(tmp_path):
    """The Quickstart command, then `show` and `export` on its journal, as Getting started shows them."""
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    run = _bayestune("optimize", "examples/quickstart/scenario.json", "--budget", "30", "--no-progress", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout + run.stderr
    winner = re.search(rf"^confirmed winner: trial (\d+), runtime_ms = ({NUMBER}) {INTERVAL}", out, re.M)
    baseline = re.search(rf"^baseline: trial 1, runtime_ms = ({NUMBER}) {INTERVAL}", out, re.M)
    speedup = re.search(rf"^speedup over the baseline: ({NUMBER})x {INTERVAL}", out, re.M)
    assert winner and baseline and speedup, out[-3000:]
    assert float(winner.group(2)) > 0 and float(speedup.group(1)) > 0
    assert (tmp_path / "scenario.journal.db").is_file()

    show = _bayestune("show", "scenario.journal.db", "--top", "5", cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    assert "tile_x" in show.stdout and winner.group(1) in show.stdout
    export = _bayestune("export", "scenario.journal.db", "runs.csv", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    assert rows[0].split(",")[:2] == ["tile_x", "tile_y"] and len(rows) > 30
