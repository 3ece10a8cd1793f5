"""The generated C header compiles cleanly (``cc -Wall -Wextra -pedantic -Werror``) and holds the
exact values; its lookup picks the same key as :func:`bayestune.export.nearest_key`."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bayestune.exceptions import BayestuneError
from bayestune.export import lookup, read_table, render
from bayestune.export.c_names import Namer, c_identifier, c_string
from tests.export.conftest import config, write_journal

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc, gcc or clang) on PATH")


def compile_and_run(tmp_path, header: str, main_body: str) -> list[str]:
    (tmp_path / "tuned.h").write_text(header)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "tuned.h"\n#include "tuned.h"\n'
        f"int main(void) {{\n{main_body}\n    return 0;\n}}\n"
    )
    exe = tmp_path / "main"
    build = subprocess.run(
        [CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-o", str(exe), str(tmp_path / "main.c")],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr + "\n" + header
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()


def test_identifiers_are_valid_and_distinct():
    assert c_identifier("default") == "default_" and c_identifier("_Pass") == "p_Pass"
    assert c_identifier("größe") == "gr__e" and c_identifier("9x") == "p9x"
    namer = Namer(["rank"])
    assert [namer.name(n) for n in ("rank", "a_b", "a_b", "int")] == ["rank_2", "a_b", "a_b_2", "int_"]
    assert c_string('o"ff?\\') == '"o\\042ff\\077\\134"'


@needs_cc
def test_best_configuration_compiles_with_exact_values(tmp_path):
    rows = [(config(4, 0.1, 'o"ff?', (2, 0, 1)), {"runtime": 1.0 / 3.0}), (config(8, 0.7), {"runtime": 2.0})]
    table = read_table([str(write_journal(tmp_path / "r.db", rows))], top=2)
    header = render(table, "c-header")
    body = """
    const tuned_config *best = tuned_best();
    printf("%lld\\n%.17g\\n%s\\n%d %d %d\\n%.17g\\n%d\\n", best->gr__e, best->p_Pass, best->default_,
           best->rank_2[0], best->rank_2[1], best->rank_2[2], best->runtime, TUNED_COUNT);
    printf("%lld %.17g %s\\n", (long long)TUNED_GR__E, TUNED_P_PASS, TUNED_DEFAULT_);
    printf("%d\\n", tuned_configs[1].rank);"""
    out = compile_and_run(tmp_path, header, body)
    assert out[0] == "4" and float(out[1]) == 0.1 and out[2] == 'o"ff?' and out[3] == "2 0 1"
    assert float(out[4]) == 1.0 / 3.0 and out[5] == "2"
    assert out[6] == '4 0.10000000000000001 o"ff?'
    assert out[7] == "2"


@needs_cc
def test_lookup_table_agrees_with_the_python_rule(tmp_path, device_journals):
    table = read_table([str(p) for p in device_journals.values()], key_meta=["device", "n"], top=2)
    queries = [("A100", 1000), ("MI250X", 2000), ("H100", 2900), ("H100", 1100), ("A100", 2600), ("V100", -5)]
    calls = "\n".join(f'    printf("%lld\\n", tuned_lookup({c_string(d)}, {n}.0)->gr__e);' for d, n in queries)
    out = compile_and_run(tmp_path, render(table, "c-header"), calls)
    assert [int(v) for v in out] == [lookup(table, {"device": d, "n": n}).config["größe"] for d, n in queries]
    assert [int(v) for v in out][:3] == [32, 8, 16]


@needs_cc
def test_a_pareto_set_compiles(tmp_path):
    from bayestune.objectives import Objective

    rows = [(config(1, 0.0), {"runtime": 1.0, "energy": 9.0}), (config(2, 0.0), {"runtime": 2.0, "energy": 10.0})]
    path = write_journal(tmp_path / "mo.db", rows, objectives=(Objective("runtime"), Objective("energy", "maximize")))
    header = render(read_table([str(path)]), "c-header", name="pareto")
    assert "PARETO_GR__E" not in header  # no single best of a Pareto set
    out = compile_and_run(tmp_path, header, '    printf("%d %.17g\\n", PARETO_COUNT, pareto_configs[1].energy);')
    assert out == ["2 10"]


def test_bad_name_is_refused(tmp_path):
    table = read_table([str(write_journal(tmp_path / "r.db", [(config(1, 0.0), {"runtime": 1.0})]))])
    with pytest.raises(BayestuneError, match="C identifier"):
        render(table, "c-header", name="my-config")
