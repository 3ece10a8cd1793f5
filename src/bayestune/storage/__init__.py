"""Persistence of a run: the journal interface, the crash-safe SQLite journal, an in-memory
journal, and HyperMapper/BaCO CSV files."""

from bayestune.storage.base import TrialJournal
from bayestune.storage.csv_io import export_csv, import_csv
from bayestune.storage.journal import SCHEMA_VERSION, Journal
from bayestune.storage.memory import MemoryJournal

__all__ = ["SCHEMA_VERSION", "Journal", "MemoryJournal", "TrialJournal", "export_csv", "import_csv"]
