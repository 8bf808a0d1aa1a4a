"""The public JSON shape of a dataset, shared by the API responses and the import's
terminal event (the API adds its links, ``api/links.py``)."""
from __future__ import annotations

from importlib.metadata import version as package_version
from typing import Any

from shared.dataset_annotations import Annotations, describe_tables, import_warnings
from shared.models import Dataset, DatasetVersion, iso


def annotations_of(dataset: Dataset) -> Annotations:
    return Annotations.model_validate(dataset.annotations or {})


def corrections_of(dataset: Dataset) -> dict[str, dict[str, Any]]:
    """The corrections every import of the dataset applies (``shared/dataset_corrections.py``):
    ``{table: {"header_row", "skip_footer", "columns": {column: {"type", "format"}}}}``."""
    return {table: corrections.model_dump()
            for table, corrections in annotations_of(dataset).corrections.items()}


def public_sources(dataset: Dataset) -> list[dict[str, Any]]:
    """The sources as clients see them: file names, masked URLs; never paths or secrets."""
    return [{"file": s["file"]} if "file" in s else {"url": s["url"], "tables": s.get("tables")}
            for s in dataset.sources or ()]


def duckdb_engine() -> dict[str, str]:
    """The engine of every snapshot (and of the built-in dataset): this DuckDB."""
    return {"name": "DuckDB", "version": package_version("duckdb"), "dialect": "duckdb"}


def engine_of(dataset: Dataset, version: DatasetVersion | None) -> dict[str, Any] | None:
    """Which engine answers the dataset's jobs: a live version's as introspected (null
    before its first), DuckDB for a snapshot."""
    if (dataset.mode or "snapshot") == "snapshot":
        return duckdb_engine()
    return dict(version.engine) if version is not None and version.engine else None


def refresh_of(dataset: Dataset) -> dict[str, str] | None:
    if not dataset.refresh_cron:
        return None
    return {"cron": dataset.refresh_cron, "timezone": dataset.refresh_timezone or "UTC"}


def dataset_to_dict(dataset: Dataset, version: DatasetVersion | None, *,
                    columns: bool = True) -> dict[str, Any]:
    """The dataset with the tables of the version it serves (``version``; none yet: []).

    Without ``columns`` (a list page) each table is its name, rows and description: the
    per-column profiles are for the one dataset asked for (up to thousands of columns,
    with their top values, per table).
    """
    annotations = annotations_of(dataset)
    tables = describe_tables(version.tables, annotations) if version is not None else []
    if not columns:
        tables = [{key: table[key] for key in ("name", "rows", "description", "warnings")}
                  for table in tables]
    return {
        "dataset_id": dataset.id,
        "name": dataset.name,
        "status": dataset.status,
        "version": dataset.version,
        "default": bool(dataset.is_default),
        "description": annotations.description,
        "error": dataset.error,
        "tables": tables,
        "glossary": annotations.glossary,
        "examples": [e.model_dump() for e in annotations.examples],
        "corrections": {table: c.model_dump() for table, c in annotations.corrections.items()},
        "sources": public_sources(dataset),
        "mode": dataset.mode or "snapshot",
        "engine": engine_of(dataset, version),
        "refresh": refresh_of(dataset),
        "next_refresh_at": iso(dataset.next_refresh_at) if dataset.refresh_cron else None,
        "access": dataset.access,
        "warnings": [*(dataset.warnings or ()),
                     *(import_warnings(version.tables) if version is not None else ())],
        "created_at": iso(dataset.created_at),
        "updated_at": iso(dataset.updated_at),
    }
