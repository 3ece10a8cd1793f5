"""Where benchmark commands write: a git-ignored scratch folder unless told to update the committed results.

Committed results (``benchmarks/results/<topic>/``) change only on purpose: by default a command writes
``benchmarks/scratch/<topic>/<file>``; ``--update-results`` writes the committed file of its topic instead,
and ``--out`` (or the command's own output option) names any file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
RESULTS = BENCHMARKS / "results"
SCRATCH = BENCHMARKS / "scratch"


def add_output_option(
    parser: argparse.ArgumentParser, topic: str, filename: str, flag: str = "--out", what: str = "output file"
) -> None:
    """``flag`` defaulting to the scratch copy of ``topic/filename``; the first call also adds ``--update-results``."""
    parser.add_argument(
        flag,
        default=None,
        help=f"{what} (default: benchmarks/scratch/{topic}/{filename}; "
        f"with --update-results: benchmarks/results/{topic}/{filename})",
    )
    if not any("--update-results" in action.option_strings for action in parser._actions):
        parser.add_argument(
            "--update-results",
            action="store_true",
            help="write the committed results of this topic instead of the scratch folder",
        )


def output_path(args: argparse.Namespace, topic: str, filename: str, dest: str = "out") -> Path:
    """The file an option added by :func:`add_output_option` names for this invocation."""
    given = getattr(args, dest, None)
    if given:
        return Path(given)
    root = RESULTS if getattr(args, "update_results", False) else SCRATCH
    return root / topic / filename
