"""Re-typing columns as a person asked (``shared/dataset_corrections.py``), inside DuckDB.

A column's new value is ``conversion_sql``: its text read in the person's format by the
formats vocabulary (``engine.datasets.meaning.formats.conversion_sql``), missing markers
(``missing_sql``) NULL; a column the import already typed is cast from its type (or from
its text when that cast fails and a format is given: ``20240131`` read as ``%Y%m%d``). ``failures_sql`` is
one scan of a table finding, per re-typed column, how many values do not convert and
the first of them (its row, 1 = the first data row, and its value): the API runs it in
the SQL sandbox on the current version before it keeps a re-type, and ``apply_retypes``
runs it on the version being built before it alters anything, so an import never keeps
half a conversion. Whole-column work stays in DuckDB; Python reads one row per table.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.datasets.meaning.formats import conversion_sql as text_as
from engine.datasets.meaning.missing import missing_sql, trimmed_sql
from engine.datasets.naming import quote_ident
from shared.errors import ImportFailed

logger = logging.getLogger(__name__)

# Characters of a refused value quoted in a message.
VALUE_CHARS = 200


@dataclass(frozen=True)
class Retype:
    """One column to re-type: its ``current`` DuckDB type, the ``type`` and ``format``
    asked for."""

    column: str
    current: str
    type: str
    format: str | None = None


@dataclass(frozen=True)
class Refusal:
    """A re-typed column with values that do not convert: how many, and the first."""

    table: str
    column: str
    type: str
    format: str | None
    count: int
    row: int
    value: str

    def message(self) -> str:
        written = f" written as {self.format}" if self.format else ""
        others = (f" ({self.count:,} values do not convert)" if self.count > 1 else "")
        return (f"{self.table}.{self.column}: row {self.row} has {self.value!r}, which does "
                f"not read as {self.type}{written}{others}")

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "column": self.column, "type": self.type,
                "format": self.format, "row": self.row, "value": self.value,
                "count": self.count}


def conversion_sql(retype: Retype) -> str:
    """The column's value as ``retype.type`` (NULL for a missing marker); raises
    ValueError for a format the type does not take."""
    ident = quote_ident(retype.column)
    if retype.type == "VARCHAR":
        return f"CAST({ident} AS VARCHAR)"
    if retype.current == "VARCHAR":
        return text_as(ident, retype.type, retype.format)
    cast = f"TRY_CAST({ident} AS {retype.type})"
    if retype.format is not None:
        # The format is for text: a column the import typed already (a date, an amount)
        # casts as it is, one it read as numbers (20240131) is read from its text.
        return (f"COALESCE({cast}, "
                f"{text_as(f'CAST({ident} AS VARCHAR)', retype.type, retype.format)})")
    return cast


def _missing(ident: str) -> str:
    return missing_sql(trimmed_sql(ident))


def _fails(retype: Retype) -> str:
    ident = quote_ident(retype.column)
    missing = f" AND NOT {_missing(ident)}" if retype.current == "VARCHAR" else ""
    return f"{ident} IS NOT NULL{missing} AND ({conversion_sql(retype)}) IS NULL"


def failures_sql(table: str, retypes: Sequence[Retype]) -> str:
    """One SELECT over ``table`` giving, per re-type in order, three values: how many
    values do not convert, the row of the first (1-based) and that value (cut)."""
    parts = []
    for retype in retypes:
        fails = _fails(retype)
        text = f"left(CAST({quote_ident(retype.column)} AS VARCHAR), {VALUE_CHARS})"
        parts += [f"count(*) FILTER (WHERE {fails})",
                  f"min(rowid) FILTER (WHERE {fails}) + 1",
                  f"arg_min({text}, rowid) FILTER (WHERE {fails})"]
    return f"SELECT {', '.join(parts)} FROM {quote_ident(table)}"


def refusals(table: str, retypes: Sequence[Retype], row: Sequence[Any]) -> list[Refusal]:
    """The columns ``failures_sql``'s one ``row`` says do not convert."""
    found = []
    for index, retype in enumerate(retypes):
        count, first, value = row[3 * index: 3 * index + 3]
        if count:
            found.append(Refusal(table, retype.column, retype.type, retype.format,
                                 int(count), int(first), str(value)))
    return found


def apply_retypes(target, retypes: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
    """Re-type columns of the version ``target`` (an ``ImportTarget``) is building:
    ``retypes`` is ``{table: {column: {"type", "format"}}}``. A table or column this
    import did not make is skipped (with a warning on a table it made). Raises
    ``ImportFailed`` naming the row and value of each column whose values do not all
    convert, before any column is altered."""
    con = target.con
    plans: dict[str, list[Retype]] = {}
    for table, columns in retypes.items():
        if table not in target.tables:
            logger.info("re-types of %s skipped: this import made no such table", table)
            continue
        types = dict(con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
            "current_database() AND schema_name = 'main' AND table_name = ?",
            [table]).fetchall())
        plans[table] = []
        for column, asked in sorted(columns.items()):
            if column not in types:
                target.warn(table, f"Column {column} was re-typed to {asked['type']}, but "
                            "this import has no such column; the re-type was not applied.")
                continue
            plans[table].append(Retype(column, types[column], asked["type"],
                                       asked.get("format")))
    refused = []
    for table, plan in plans.items():
        if plan:
            refused += refusals(table, plan, con.execute(failures_sql(table, plan)).fetchone())
    if refused:
        raise ImportFailed("A column's re-type no longer fits its values: "
                           + "; ".join(r.message() for r in refused)
                           + ". Change the re-type (PATCH the column), or the source.",
                           source=refused[0].table, table=refused[0].table,
                           row=refused[0].row, failures=[r.as_dict() for r in refused])
    for table, plan in plans.items():
        for retype in plan:
            _alter(target, table, retype)


def _alter(target, table: str, retype: Retype) -> None:
    ident, source = quote_ident(retype.column), quote_ident(table)
    example = None
    if retype.current == "VARCHAR" and retype.type != "VARCHAR":
        example = target.con.execute(
            f"SELECT left({ident}, 40) FROM {source} WHERE {ident} IS NOT NULL AND NOT "
            f"{_missing(ident)} LIMIT 1").fetchone()
    target.con.execute(f"ALTER TABLE {source} ALTER COLUMN {ident} SET DATA TYPE "
                       f"{retype.type} USING {conversion_sql(retype)}")
    noted = target.notes.get(table)
    original = None
    if example and not (noted and noted.columns.get(retype.column, {}).get("original")):
        original = f"text like `{example[0]}`"
    if noted and retype.column in noted.columns:
        # The import's offer is answered: the person chose this type.
        noted.columns[retype.column].pop("suggestion", None)
    target.note_column(table, retype.column, original=original, format=retype.format)
    logger.info("re-typed %s.%s from %s to %s", table, retype.column, retype.current,
                retype.type)
