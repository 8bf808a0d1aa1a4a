"""The dataset import engine: files and live databases into immutable DuckDB versions.

The interface (plain functions; the API, Celery and the CLI call these):

- ``build_version(sources, data_dir, dataset_id, version, on_progress=None, *,
  max_file_bytes=None, threads=None, memory_limit=None, limits=None, layouts=None,
  retypes=None)
  -> BuiltVersion``
  (``builder``): imports ``FileSource(path, name)`` and ``DatabaseSource(url, tables,
  outbound)`` (``sources``; ``outbound`` is ``shared/outbound.py``'s policy) into ``<data_dir>/<dataset_id>/v<version>.duckdb``, all or nothing, and
  returns the path, the tables' profiles and which source made which tables. Progress
  reaches ``on_progress`` as ``ImportProgress`` (``target``). Bad input raises the
  ``ImportFailed`` family of shared/errors.py, naming the file and line/row.
  ``layouts`` (``{table: {"header_row": N, "skip_footer": M}}``) corrects where a
  file's or sheet's header is and how many rows at its end are not data; ``retypes``
  are a person's re-types of columns (``retype``), applied last.
- ``ImportLimits`` (``limits``): what one import may read (uncompressed bytes, rows,
  columns per table, cells per Excel sheet, memory reading a DuckDB upload);
  ``ImportLimits.from_settings(settings)``. Past one: ``SourceTooLarge`` and its kinds.
- ``version_path``, ``delete_version``, ``remove_stale_builds`` (``builder``): the file
  layout, removing a version no job uses, clearing what killed builds left.
- ``profile_tables(con)`` (``profile``) and ``TableProfile.as_dict/from_dict``: the
  profile (rows; per column type, null_fraction, distinct, min, max, top_values).
- ``Annotations``, ``check_annotations``, ``describe_tables`` (``shared/dataset_annotations.py``): the
  PATCH body, its check against the tables, and the API's table shape.
- ``build_dataset_prompt(tables, today, annotations, token_budget=...)`` in
  ``worker/datasets/prompt.py``: the version's byte-stable system prompt.

Sources are plug-ins: ``importers/`` holds one module per kind of source and the
registry ``importers.IMPORTERS``.
After a source whose types are not declared (CSV, JSON, Excel, SQLite) is read,
``meaning.read_as_meant`` converts its text columns holding numbers, dates and missing
markers, noting each conversion and warning about what stays text.
"""
from engine.datasets.builder import (
    BuiltVersion,
    build_version,
    delete_version,
    remove_stale_builds,
    version_path,
)
from engine.datasets.limits import ImportLimits
from engine.datasets.profile import ColumnProfile, TableProfile, TopValue, profile_tables
from engine.datasets.sources import DatabaseSource, FileSource, Source
from engine.datasets.target import ImportProgress
from shared.dataset_annotations import Annotations, check_annotations, describe_tables

__all__ = [
    "Annotations",
    "BuiltVersion",
    "ColumnProfile",
    "DatabaseSource",
    "FileSource",
    "ImportLimits",
    "ImportProgress",
    "Source",
    "TableProfile",
    "TopValue",
    "build_version",
    "check_annotations",
    "delete_version",
    "describe_tables",
    "profile_tables",
    "remove_stale_builds",
    "version_path",
]
