"""The rules of ``docs/architecture.md`` that a review found broken after they had been won:
no module of ``src/bayestune`` over 500 lines, and every import pointing down the layer picture.

How the picture is read: the first fenced block of the document, one layer a line, top to
bottom. Each line's names stand before its first run of two or more spaces, separated by
``·``; a trailing ``/`` marks a package; an indented line continues the layer above it. A
name may import the names of lower lines and those to its right on its own line. Imports
inside one top-level package are free. A fenced block tagged ``exceptions`` lists accepted
imports as ``importing file -> imported module`` (``*`` a wildcard), then why.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "bayestune"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 500


@dataclass(frozen=True)
class Place:
    """Where a name stands in the picture: its line (0 at the top) and its position on the line."""

    layer: int
    column: int
    line: str


@dataclass(frozen=True)
class Import:
    source: str  # the importing file, relative to src/bayestune
    lineno: int
    module: str  # the imported module, dotted

    @property
    def room(self) -> str:
        return self.source.split("/")[0].removesuffix(".py")


def fenced_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Every fenced block of a Markdown text: its info string and its lines."""
    blocks, current, info = [], None, ""
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current, info = [], line[3:].strip()
            else:
                blocks.append((info, current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def layer_picture(text: str) -> dict[str, Place]:
    """Each name of the first fenced block and its place (see the module docstring)."""
    places: dict[str, Place] = {}
    layer, column, first = -1, 0, ""
    for line in fenced_blocks(text)[0][1]:
        if not line.strip():
            continue
        names = re.split(r"\s{2,}", line.strip())[0]
        if not line[0].isspace():
            layer, column, first = layer + 1, 0, names
        for name in (n.strip().rstrip("/") for n in names.split("·")):
            if not name:
                continue
            assert name not in places, f"{name!r} stands twice in the layer picture of {ARCHITECTURE.name}"
            places[name] = Place(layer, column, first)
            column += 1
    return places


def accepted_exceptions(text: str) -> list[tuple[str, str]]:
    """``(importing file pattern, imported module pattern)`` of the ``exceptions`` block."""
    out = []
    for info, lines in fenced_blocks(text):
        if info == "exceptions":
            for line in lines:
                if line.strip():
                    source, _, rest = line.partition("->")
                    out.append((source.strip(), rest.split()[0]))
    return out


def rooms() -> set[str]:
    """The top-level modules and packages of src/bayestune."""
    return {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py") or (p / "__init__.py").is_file()
    }


def bayestune_imports(path: Path) -> list[Import]:
    """Every import of a ``bayestune`` module in ``path``, at module level and inside functions.
    ``from bayestune import x`` imports the module ``x`` when there is one, else the face."""
    source = path.relative_to(PACKAGE).as_posix()
    dotted = ["bayestune", *path.relative_to(PACKAGE).with_suffix("").parts]
    package = dotted if path.name == "__init__.py" else dotted[:-1]
    package = package[:-1] if package[-1] == "__init__" else package
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            modules = [base]
            if base == "bayestune":
                modules = [f"bayestune.{a.name}" if a.name in rooms() else "bayestune.__init__" for a in node.names]
        else:
            continue
        found += [Import(source, node.lineno, m) for m in modules if m == "bayestune" or m.startswith("bayestune.")]
    return found


def imported_room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_module_of_the_package_passes_500_lines():
    long = {
        p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    long = {name: n for name, n in long.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them along a seam): " + ", ".join(
        f"src/bayestune/{name} ({n})" for name, n in sorted(long.items())
    )


def test_every_top_level_module_stands_in_the_layer_picture():
    places = layer_picture(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not rooms() - set(places), (
        f"not in the layer picture of docs/architecture.md: {sorted(rooms() - set(places))}"
    )
    assert not set(places) - rooms(), f"in the layer picture but not in src/bayestune: {sorted(set(places) - rooms())}"


def test_every_import_points_down_the_layer_picture():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    places, accepted = layer_picture(text), accepted_exceptions(text)
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for imp in bayestune_imports(path):
            room, target = imp.room, imported_room(imp.module)
            if room == target or room not in places or target not in places:
                continue  # inside one package; a missing name fails the test above
            here, there = places[room], places[target]
            if (there.layer, there.column) > (here.layer, here.column):
                continue
            if any(fnmatch.fnmatch(imp.source, s) and fnmatch.fnmatch(imp.module, m) for s, m in accepted):
                continue
            side = "leftwards on its own line" if there.layer == here.layer else "up"
            wrong.append(
                f"src/bayestune/{imp.source}:{imp.lineno} imports {imp.module}, {side}: "
                f"{room!r} stands in layer {here.layer + 1} `{here.line}`, "
                f"{target!r} in layer {there.layer + 1} `{there.line}`"
            )
    assert not wrong, "imports against the layer picture of docs/architecture.md:\n" + "\n".join(wrong)
