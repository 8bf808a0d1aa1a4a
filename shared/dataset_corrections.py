"""What a person corrects in how a dataset was read (issue 33 §2): a column's type, with the
format its text is written in, and a file's or sheet's layout (the row its header is on,
the rows at its end that are not data).

Corrections are kept in the dataset's annotations (``Annotations.corrections``, per table)
and every import of the dataset applies them, a refresh's too: re-types after the
import's own conversion (``engine/datasets/retype.py``), layouts by the importers that
read files laid out for people (CSV and Excel). Changing them makes a new version.

In ``PATCH /v1/datasets/{id}`` a table's part is a ``TablePatch``: a column given as text
is its description (as before), as an object a re-type (``{"type": null}`` drops one);
``header_row``/``skip_footer`` set a layout (null drops it). ``merge_table_patches``
folds a PATCH into the stored annotations: corrections per column and per key, so a
re-type never drops what else was corrected or described; a table's descriptions are
replaced as before, but only by a part that gives some.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.errors import ValidationFailed

# The types a column can be re-typed to; DECIMAL with its width and scale.
RETYPE_TYPES = ("DECIMAL(p,s)", "DOUBLE", "BIGINT", "DATE", "TIMESTAMP", "BOOLEAN", "VARCHAR")
_PLAIN_TYPES = frozenset(RETYPE_TYPES[1:])
_DECIMAL = re.compile(r"^DECIMAL\((\d{1,2}),(\d{1,2})\)$")
# Layout bounds: past them a file is not "laid out for people" but hostile.
MAX_HEADER_ROW = 1000
MAX_SKIP_FOOTER = 1000
# The file kinds whose importers take a layout (``ImportTarget.layout_for``).
LAYOUT_KINDS = ("csv", "xlsx")


def normal_type(text: str) -> str:
    """``text`` as one of ``RETYPE_TYPES`` (upper case, no spaces); raises ValueError."""
    spelled = re.sub(r"\s+", "", str(text)).upper()
    if spelled in _PLAIN_TYPES:
        return spelled
    match = _DECIMAL.match(spelled)
    if match and 1 <= int(match[1]) <= 38 and int(match[2]) <= int(match[1]):
        return spelled
    raise ValueError(f"{text!r} is not a type a column can take; use one of "
                     f"{', '.join(RETYPE_TYPES)} (DECIMAL's width 1-38, scale at most its width)")


class ColumnRetype(BaseModel):
    """A column's type as a person means it, and the format its text is written in
    (``"decimal_comma"``, ``"%d.%m.%Y"``...: ``engine.datasets.meaning.formats``)."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="One of DECIMAL(p,s), DOUBLE, BIGINT, DATE, TIMESTAMP, "
                      "BOOLEAN, VARCHAR.", max_length=40)
    format: str | None = Field(default=None, min_length=1, max_length=64,
                               description="How the text is written, e.g. \"decimal_comma\" "
                               "or \"%d.%m.%Y\"; omit for DuckDB's own reading.")

    _type = field_validator("type")(normal_type)


class ColumnRetypePatch(ColumnRetype):
    """A re-type in a PATCH: ``type`` null drops the column's re-type."""

    type: str | None = Field(description="One of DECIMAL(p,s), DOUBLE, BIGINT, DATE, "
                             "TIMESTAMP, BOOLEAN, VARCHAR; null: the import's own type again.",
                             max_length=40)

    _type = field_validator("type")(lambda value: None if value is None else normal_type(value))


class TableCorrections(BaseModel):
    """One table's corrections as stored."""

    model_config = ConfigDict(extra="forbid")

    header_row: int | None = Field(default=None, ge=1, le=MAX_HEADER_ROW)
    skip_footer: int | None = Field(default=None, ge=0, le=MAX_SKIP_FOOTER)
    columns: dict[str, ColumnRetype] = Field(default_factory=dict, max_length=2000)

    def layout(self) -> dict[str, int]:
        """``{"header_row", "skip_footer"}``, the keys set only."""
        return {key: value for key in ("header_row", "skip_footer")
                if (value := getattr(self, key)) is not None}

    def is_empty(self) -> bool:
        return not self.columns and not self.layout()


class TablePatch(BaseModel):
    """A table's part of a PATCH: descriptions, re-types, layout."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(default=None, max_length=2000)
    columns: dict[str, str | ColumnRetypePatch] = Field(
        default_factory=dict, max_length=2000,
        description="Per column: text, its description; an object, a re-type (a new "
                    "version, every value checked first).")
    header_row: int | None = Field(default=None, ge=1, le=MAX_HEADER_ROW, description=(
        "CSV or Excel only: the row (1 = the first) the header is on; re-imports as a new "
        "version; null: found by the import again."))
    skip_footer: int | None = Field(default=None, ge=0, le=MAX_SKIP_FOOTER, description=(
        "CSV or Excel only: rows at the end that are not data (totals, notes); re-imports "
        "as a new version; null: found by the import again."))

    def descriptions(self) -> dict[str, str]:
        return {c: text for c, text in self.columns.items() if isinstance(text, str)}

    def retypes(self) -> dict[str, ColumnRetypePatch]:
        return {c: r for c, r in self.columns.items() if not isinstance(r, str)}

    def layout_keys(self) -> set[str]:
        return self.model_fields_set & {"header_row", "skip_footer"}

    def describes(self) -> bool:
        """Whether this part sets the table's descriptions (replacing them, as PATCH
        always has): it gives some, or gives nothing else."""
        return ("description" in self.model_fields_set or bool(self.descriptions())
                or not (self.retypes() or self.layout_keys()))


def merge_table_patches(annotations: dict[str, Any], tables: Mapping[str, TablePatch]) -> None:
    """Fold a PATCH's ``tables`` into ``annotations`` (``Annotations.model_dump()``), in place."""
    notes, stored = annotations["tables"], annotations["corrections"]
    for table, part in tables.items():
        if part.describes():
            notes[table] = {"description": part.description, "columns": part.descriptions()}
        corrections = stored.setdefault(table, {"header_row": None, "skip_footer": None,
                                                "columns": {}})
        for key in part.layout_keys():
            corrections[key] = getattr(part, key)
        for column, retype in part.retypes().items():
            if retype.type is None:
                corrections["columns"].pop(column, None)
            else:
                corrections["columns"][column] = retype.model_dump()
        if TableCorrections.model_validate(corrections).is_empty():
            del stored[table]


def check_corrections(tables: Mapping[str, TablePatch], profiles: Sequence[dict],
                      database_tables: set[str]) -> None:
    """Raise ``ValidationFailed`` for a re-type or layout of a table or column the version
    does not have (as ``check_annotations`` does for descriptions) or a layout given to a
    table that does not come from a CSV or Excel file (``database_tables``)."""
    known = {t["name"]: {c["name"] for c in t["columns"]} for t in profiles}
    problems = []
    for table, part in tables.items():
        if table not in known:
            problems.append(f"the dataset has no table {table!r}")
            continue
        problems += [f"the dataset has no column {table}.{column!r}"
                     for column in part.retypes() if column not in known[table]]
        if part.layout_keys() and table in database_tables:
            problems.append(f"{table!r} comes from a database, not a CSV or Excel file: it "
                            "has no header row or footer to set")
    if problems:
        text = "; ".join(problems)
        raise ValidationFailed(text[0].upper() + text[1:] + ".", problems=problems)


def corrections_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether applying ``after`` instead of ``before`` needs a new version."""
    def normal(stored: Mapping[str, Any]) -> dict:
        return {t: TableCorrections.model_validate(c).model_dump() for t, c in stored.items()}
    return normal(before) != normal(after)
