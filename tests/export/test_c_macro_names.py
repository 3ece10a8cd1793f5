"""Names the preprocessor would replace, and integers C cannot hold (issue 41 item 9): a parameter
named ``linux``, ``unix``, ``i386``, ``EOF`` or like one of the header's own macros still compiles
(``gcc -std=gnu11`` predefines ``linux`` and ``unix``), and 10**30 is refused, not truncated."""

from __future__ import annotations

import subprocess

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.export import render
from bayestune.export.c_names import c_double, c_identifier, c_integer
from bayestune.export.table import Entry, TunedTable
from bayestune.objectives import Objective
from tests.export.test_c_header import CC, needs_cc

NAMES = ["linux", "unix", "i386", "TUNED_H", "TUNED_COUNT", "x", "TUNED_X", "EOF", "and", "INT_MAX"]


def _table(config: dict) -> TunedTable:
    entries = (Entry({}, 1, 1, config, {"runtime": 1.5}),)
    return TunedTable((Objective("runtime"),), tuple(config), (), entries, ("run.db",))


def test_macro_names_are_mangled():
    assert [c_identifier(n) for n in ("linux", "unix", "i386", "EOF", "and", "SIGINT", "tile")] == [
        "linux_",
        "unix_",
        "i386_",
        "EOF_",
        "and_",
        "SIGINT_",
        "tile",
    ]


@needs_cc
@pytest.mark.parametrize("std", ["gnu11", "c99"])
def test_a_header_with_macro_names_compiles_in_gnu_mode(tmp_path, std):
    header = render(_table({n: i for i, n in enumerate(NAMES)}), "c-header")
    (tmp_path / "tuned.h").write_text(header)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include <limits.h>\n#include <iso646.h>\n#include "tuned.h"\n'
        "int main(void) {\n"
        '    printf("%lld %lld %lld %lld\\n", tuned_best()->linux_, tuned_best()->pTUNED_H, TUNED_X, TUNED_I386_);\n'
        "    return 0;\n}\n"
    )
    build = subprocess.run(
        [CC, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "main"), str(tmp_path / "main.c")],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr + "\n" + header
    out = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "3", "5", "2"]


@pytest.mark.parametrize("value", [10**30, -(10**30), 2**63])
def test_an_integer_beyond_long_long_is_refused_by_name(value):
    with pytest.raises(BayestuneError, match=r"cannot export 'level' to C: the value .* does not fit C's long long"):
        render(_table({"level": value}), "c-header")


def test_the_long_long_extremes_are_exact_literals():
    assert c_integer(2**63 - 1) == "9223372036854775807LL"
    assert c_integer(-(2**63)) == "(-9223372036854775807LL - 1)"
    with pytest.raises(BayestuneError, match="not exactly a C double"):
        c_double(2**53 + 1)
    with pytest.raises(BayestuneError, match="not exactly a C double"):
        c_double(10**400)
    assert c_double(2**53) == "9007199254740992.0"


@needs_cc
def test_the_smallest_long_long_compiles_to_itself(tmp_path):
    (tmp_path / "tuned.h").write_text(render(_table({"level": -(2**63)}), "c-header"))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "tuned.h"\nint main(void) { printf("%lld\\n", TUNED_LEVEL); return 0; }\n'
    )
    subprocess.run(
        [
            CC,
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-o",
            str(tmp_path / "m"),
            str(tmp_path / "main.c"),
        ],
        check=True,
    )
    out = subprocess.run([str(tmp_path / "m")], capture_output=True, text=True, check=True).stdout.strip()
    assert int(out) == -(2**63)
