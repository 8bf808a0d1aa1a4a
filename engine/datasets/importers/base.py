"""The importer interface every data source implements.

An importer says which sources it takes (file extensions, or URL backends) and loads
one source into an ``ImportTarget``: it creates one table per file, sheet or source
table, fills it, and calls ``target.finish_table``. It raises the ``ImportFailed``
family (shared/errors.py) for bad input, naming the file and line/row.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from engine.datasets.sources import DatabaseSource, FileSource, Source
from engine.datasets.target import ImportTarget
from shared.errors import MalformedSource

# Written in a text cell, these mean "no value" (never a reason to make a column text).
NULL_STRINGS = ("NA", "NULL", "")
# Extensions more than one format uses: the file's first bytes decide.
AMBIGUOUS_EXTENSIONS = (".db",)
COMPRESSION_SUFFIXES = (".gz", ".zst")


class Importer(ABC):
    """One kind of source. Subclasses set ``kind`` and ``extensions`` (files) or
    ``backends`` (database URLs), and implement ``load``."""

    kind: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]] = ()
    backends: ClassVar[tuple[str, ...]] = ()
    # (offset, bytes) a file of this format starts with, checked before reading it.
    signature: ClassVar[tuple[int, bytes] | None] = None
    # Whether the source declares its columns' types (Parquet, databases): then its text
    # columns are text because someone chose so, and are not read for numbers and dates
    # (``engine/datasets/meaning``).
    types_declared: ClassVar[bool] = False

    def claims(self, source: Source) -> bool:
        """Whether this importer reads ``source``."""
        if isinstance(source, DatabaseSource):
            return source.parsed().get_backend_name() in self.backends
        suffix = matching_suffix(source.name, self.extensions)
        if suffix is None:
            return False
        return suffix not in AMBIGUOUS_EXTENSIONS or self.has_signature(source)

    def has_signature(self, source: FileSource) -> bool:
        if self.signature is None:
            return True
        offset, magic = self.signature
        with open(source.path, "rb") as handle:
            handle.seek(offset)
            return handle.read(len(magic)) == magic

    def expect_signature(self, source: FileSource, what: str) -> None:
        """Raise ``MalformedSource`` unless the file starts as a ``what`` file does."""
        if not self.has_signature(source):
            raise MalformedSource(f"{source.name} is not a valid {what} file.",
                                  source=source.name)

    @abstractmethod
    def load(self, source: Source, target: ImportTarget) -> None:
        """Create and fill this source's tables in ``target``; raises ``ImportFailed``."""


def matching_suffix(name: str, extensions: tuple[str, ...]) -> str | None:
    """The extension of ``extensions`` that ``name`` ends with (case-insensitive), if any."""
    lowered = name.lower()
    for ext in sorted(extensions, key=len, reverse=True):
        if lowered.endswith(ext):
            return ext
    return None


def file_stem(name: str) -> str:
    """The file name without its format and compression suffixes ("Q1 sales.csv.gz" → "Q1 sales")."""
    stem = name.rsplit("/", 1)[-1]
    for suffix in COMPRESSION_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return stem.rsplit(".", 1)[0] if "." in stem.lstrip(".") else stem


def duckdb_message(exc: Exception) -> str:
    """DuckDB's error text without the echo of our own SQL (``LINE 1: ...``)."""
    return str(exc).split("\n\nLINE ", 1)[0].strip().splitlines()[0]
