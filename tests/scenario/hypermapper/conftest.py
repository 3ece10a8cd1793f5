"""The scenario tests' helpers (``scenario_helpers``) importable from this folder too."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
