"""The installed version, read once from the package metadata (pyproject.toml is its only source)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("bayestune")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"
