"""What people add to a dataset's schema: descriptions, a glossary and example questions.

``Annotations`` is what is stored of them (with the corrections of
``shared/dataset_corrections.py``); ``PATCH /v1/datasets/{id}`` takes ``DatasetNotes`` and
tables as ``TablePatch``;
``check_annotations`` refuses names the dataset does not have, and ``describe_tables``
renders tables in the API's shape, profile and descriptions together. Both take a
version's tables as ``engine.datasets.TableProfile`` or as the JSON it is stored as
(``TableProfile.as_dict``), so the API uses them without the import engine.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.dataset_corrections import TableCorrections
from shared.errors import ValidationFailed

_TEXT = 2000


class TableNotes(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(default=None, max_length=_TEXT)
    columns: dict[str, str] = Field(default_factory=dict, max_length=2000)


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=_TEXT)
    sql: str = Field(min_length=1, max_length=20_000)


class DatasetNotes(BaseModel):
    """What a PATCH and the stored annotations share."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(default=None, max_length=_TEXT)
    glossary: dict[str, str] = Field(default_factory=dict, max_length=500)
    examples: list[Example] = Field(default_factory=list, max_length=100)


class Annotations(DatasetNotes):
    """A dataset's annotations as stored: descriptions per table, and the corrections
    every import applies (``shared/dataset_corrections.py``)."""

    tables: dict[str, TableNotes] = Field(default_factory=dict, max_length=5000)
    corrections: dict[str, TableCorrections] = Field(default_factory=dict, max_length=5000)

    def table(self, name: str) -> TableNotes:
        return self.tables.get(name) or TableNotes()


def _as_dict(table: Any) -> dict:
    return table if isinstance(table, dict) else table.as_dict()


def check_annotations(annotations: Annotations, tables: Sequence[Any]) -> None:
    """Raise ``ValidationFailed`` naming every table or column the dataset does not have."""
    known = {t["name"]: {c["name"] for c in t["columns"]} for t in map(_as_dict, tables)}
    unknown = []
    for table, notes in annotations.tables.items():
        if table not in known:
            unknown.append(f"table {table!r}")
            continue
        unknown += [f"column {table}.{column!r}" for column in notes.columns
                    if column not in known[table]]
    if unknown:
        raise ValidationFailed(f"The dataset has no {', no '.join(unknown)}.", unknown=unknown)


def describe_tables(tables: Sequence[Any], annotations: Annotations | None = None) -> list[dict]:
    """``[{"name","rows","description","warnings","columns":[{"name","type","description",
    "original","format","suggestion",...}]}]``. A description people wrote wins over the import's note."""
    annotations = annotations or Annotations()
    described = []
    for table in tables:
        data = _as_dict(table)
        notes = annotations.table(data["name"])
        columns = []
        for stored in data["columns"]:
            column = {**stored, "original": stored.get("original"),
                      "format": stored.get("format"), "suggestion": stored.get("suggestion")}
            note = column.pop("note", None)
            column["description"] = notes.columns.get(column["name"]) or note
            columns.append(column)
        described.append({"name": data["name"], "rows": data["rows"],
                          "description": notes.description or data.get("note"),
                          "warnings": list(data.get("warnings") or ()), "columns": columns})
    return described


def import_warnings(tables: Sequence[Any]) -> list[str]:
    """Every table's import warnings as ``"<table>: <message>"``, tables in order."""
    return [f"{data['name']}: {message}"
            for data in map(_as_dict, tables) for message in data.get("warnings") or ()]
