"""Scenario files: JSON or YAML text in, a :class:`Scenario` out, and back.

Parsing is strict where the plain loaders are lax: a duplicate key is an error in YAML (our
own format), YAML reads ``1e-3`` as a float, JSON refuses ``NaN``. In JSON a duplicate key
keeps its last value with a warning naming it, as Python's ``json``, HyperMapper and BaCO read
such files. Saving rewrites relative
paths so they keep pointing at the same files from the new directory, and replaces the file
atomically.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import yaml

from bayestune.exceptions import ScenarioError
from bayestune.scenario.formats import scenario_from_dict
from bayestune.scenario.native import scenario_to_dict
from bayestune.scenario.records import Scenario

__all__ = ["load_scenario", "save_scenario"]

logger = logging.getLogger(__name__)


#: Most values a scenario may expand to (YAML aliases repeat whole subtrees: nine levels of
#: nine aliases are 9**9 values, the "billion laughs") and deepest nesting it may have.
MAX_SCENARIO_VALUES = 1_000_000
#: Most characters of text its scalars may expand to (aliases of one long string multiply it).
MAX_SCENARIO_CHARS = 50_000_000
MAX_SCENARIO_DEPTH = 64


class _YamlLoader(yaml.SafeLoader):
    """Safe YAML with three fixes: ``1e-3`` is a float (YAML 1.1 needs a dot), duplicate keys
    are an error instead of silently keeping the last one, and a document whose aliases expand
    beyond :data:`MAX_SCENARIO_VALUES` values is refused before it is built."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expanded_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789")
)


def _check_expanded_size(root: yaml.Node) -> None:
    """Count the values ``root`` stands for with every alias expanded (memoised per node, so
    the count itself stays cheap), and its depth; refuse what exceeds the limits."""
    sizes: dict[int, int] = {}
    chars: dict[int, int] = {}
    depths: dict[int, int] = {}
    open_nodes: set[int] = set()  # on the current path: meeting one again is a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in sizes:
            continue
        if not expanded and id(node) in open_nodes:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                "an alias refers to a value that contains it (a self-referencing document expands without end)",
                node.start_mark,
            )
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if not expanded:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        open_nodes.discard(id(node))
        sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
        own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
        chars[id(node)] = own + sum(chars[id(c)] for c in children)
        if chars[id(node)] > MAX_SCENARIO_CHARS:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the document's text expands to more than {MAX_SCENARIO_CHARS:,} characters "
                "(YAML aliases repeat whole values)",
                node.start_mark,
            )
        depths[id(node)] = 1 + max((depths[id(c)] for c in children), default=0)
        if sizes[id(node)] > MAX_SCENARIO_VALUES:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the document expands to more than {MAX_SCENARIO_VALUES:,} values "
                "(YAML aliases repeat whole subtrees)",
                node.start_mark,
            )
        if depths[id(node)] > MAX_SCENARIO_DEPTH:
            raise yaml.constructor.ConstructorError(
                None, None, f"values are nested more than {MAX_SCENARIO_DEPTH} levels deep", node.start_mark
            )


def _check_json_depth(value: Any, source: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_SCENARIO_DEPTH` (no scenario needs it, and
    every later step walks the document recursively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_SCENARIO_DEPTH:
            raise ScenarioError(f"{source}: values are nested more than {MAX_SCENARIO_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _last_wins(source: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """The ``object_pairs_hook`` of ``json``'s own behaviour (the last value of a repeated key
    wins), warning about each repeated key."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                logger.warning(
                    "%s: duplicate key %r in a JSON object: the last value (%s) wins, as in "
                    "Python's json, HyperMapper and BaCO",
                    source,
                    k,
                    json.dumps(v)[:60],
                )
            out[k] = v
        return out

    return hook


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _parse_text(text: str, syntax: str, source: str) -> Any:
    if syntax == "json":
        try:
            data = json.loads(text, object_pairs_hook=_last_wins(source), parse_constant=_reject_constant)
        except RecursionError:
            raise ScenarioError(f"{source}: values are nested more than {MAX_SCENARIO_DEPTH} levels deep") from None
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise ScenarioError(f"{source}: invalid JSON: {exc}") from None
        _check_json_depth(data, source)
        return data
    try:
        return yaml.load(text, Loader=_YamlLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:
        raise ScenarioError(f"{source}: values are nested more than {MAX_SCENARIO_DEPTH} levels deep") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts (4,300)
        raise ScenarioError(f"{source}: invalid YAML: {exc}".split("; use sys.set_int_max_str_digits")[0]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError(f"{source}: invalid YAML{where}: {problem}") from None


def _is_python_file_target(module_part: str) -> bool:
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def _map_paths(s: Scenario, fn: Callable[[str], str]) -> Scenario:
    """Apply ``fn`` to the file paths a scenario holds: journal, replay or table file, workdir, the
    file of a ``path/to/file.py:function`` black box and the transfer's prior runs."""
    journal = fn(s.journal) if s.journal else s.journal
    bb = s.blackbox
    if bb is not None:
        target = bb.target
        if bb.kind in ("replay", "table"):
            target = fn(target)
        elif bb.kind == "python":
            module_part, sep, func = target.rpartition(":")
            if _is_python_file_target(module_part):
                target = fn(module_part) + sep + func
        bb = replace(bb, target=target, workdir=fn(bb.workdir) if bb.workdir else bb.workdir)
    transfer = s.transfer
    if transfer is not None:
        transfer = replace(transfer, runs=tuple(fn(r) if isinstance(r, str) else r for r in transfer.runs))
    return replace(s, journal=journal, blackbox=bb, transfer=transfer)


def _rebase(old_dir: str, new_dir: str) -> Callable[[str], str]:
    """Rewrite a relative path meant from ``old_dir`` so that it means the same from ``new_dir``."""

    def fn(p: str) -> str:
        if os.path.isabs(os.path.expanduser(p)) or os.path.normpath(old_dir) == os.path.normpath(new_dir):
            return p
        try:
            return os.path.relpath(os.path.join(old_dir, p), new_dir).replace(os.sep, "/")
        except ValueError:  # another drive (Windows)
            return os.path.join(old_dir, p)

    return fn


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Read a scenario file (``.json``, ``.yaml`` or ``.yml``; other names are sniffed) in any
    of the three formats.

    Relative paths inside it (``journal``, the black box's file, ``workdir``, replay data) are
    kept as written: they mean paths relative to the file's directory, :attr:`Scenario.base_dir`."""
    source = os.fspath(path)
    try:
        raw = Path(source).read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{source}: cannot read the scenario file: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{source}: cannot read the scenario file: it is a directory") from None
    except OSError as exc:
        raise ScenarioError(f"{source}: cannot read the scenario file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{source}: the file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise ScenarioError(f"{source}: the file is empty")
    suffix = Path(source).suffix.lower()
    if suffix == ".json":
        syntax = "json"
    elif suffix in (".yaml", ".yml"):
        syntax = "yaml"
    else:
        syntax = "json" if text.lstrip().startswith("{") else "yaml"
    data = _parse_text(text, syntax, source)
    if data is None:
        raise ScenarioError(f"{source}: the file is empty (no YAML document)")
    return scenario_from_dict(data, source=source)


def save_scenario(s: Scenario, path: str | os.PathLike[str]) -> None:
    """Write ``s`` in the native format: YAML for ``.yaml``/``.yml``, JSON otherwise.

    Relative paths are rewritten so that they keep pointing at the same files from the
    destination's directory (they are relative to the scenario's source directory)."""
    dest = os.fspath(path)
    new_dir = str(Path(dest).resolve().parent)
    data = scenario_to_dict(_map_paths(s, _rebase(str(s.base_dir), new_dir)))
    if Path(dest).suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    tmp = dest + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, dest)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ScenarioError(f"{dest}: cannot write the scenario file: {exc.strerror or exc}") from None
