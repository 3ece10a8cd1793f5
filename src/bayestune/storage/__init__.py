"""Persistence of a run: the crash-safe SQLite journal and HyperMapper/BaCO CSV files."""

from bayestune.storage.csv_io import export_csv, import_csv
from bayestune.storage.journal import LOST, SCHEMA_VERSION, Journal

__all__ = ["LOST", "SCHEMA_VERSION", "Journal", "export_csv", "import_csv"]
