"""JSON (an array of objects, or one object) and NDJSON/JSON Lines (one object per line),
read by DuckDB's own ``read_json``: keys become columns. An object inside a record (a
struct) becomes columns of its own, named by its path (``user.name`` → ``user_name``,
down to ``MAX_FLATTEN_DEPTH`` levels, each noted "From `user.name` in the file.");
lists stay lists.

A key whose values mix types across records becomes a JSON column rather than failing.
A compressed file is decompressed within the import's byte cap first (``plain_copy``);
the keys are counted before the records are read, and the read stops one record past
the rows the import has left.
"""
from __future__ import annotations

import re

import duckdb

from engine.datasets.importers.base import Importer, duckdb_message, file_stem, matching_suffix
from engine.datasets.importers.plain_copy import plain_copy
from engine.datasets.naming import NameBook, quote_ident, sql_literal
from engine.datasets.sources import FileSource
from engine.datasets.target import ImportTarget
from shared.errors import EmptySource, MalformedSource

_LINES = (".ndjson", ".jsonl", ".ndjson.gz", ".jsonl.gz")
_LINE_NUMBER = re.compile(r"\bline (\d+)")
_PROBE_BYTES = 1 << 16
MAX_FLATTEN_DEPTH = 4


class JsonImporter(Importer):
    kind = "json"
    extensions = (".json", ".json.gz", *_LINES)

    def load(self, source: FileSource, target: ImportTarget) -> None:
        """One table named after the file. Raises ``EmptySource``, ``MalformedSource``
        (with the line DuckDB names, when it names one) or ``SourceTooLarge`` and its
        kinds (past the import's limits)."""
        fmt = "newline_delimited" if matching_suffix(source.name, _LINES) else "auto"
        with plain_copy(source, target) as path:
            self._load(FileSource(path, source.name), fmt, target)

    def _load(self, source: FileSource, fmt: str, target: ImportTarget) -> None:
        _refuse_empty(source)
        table = target.table_name(file_stem(source.name))
        read = (f"read_json({sql_literal(str(source.path))}, format = {sql_literal(fmt)}, "
                "records = 'true'")
        try:
            columns = target.con.execute(f"DESCRIBE SELECT * FROM {read})").fetchall()
            target.limits.check_columns(len(columns), source.name)
            try:
                self._create(target, table, read + ")")
            except duckdb.ConversionException:
                # A later record did not fit the types sniffed from a sample: sniff them all.
                target.drop_table(table)
                self._create(target, table, read + ", sample_size = -1)")
        except duckdb.BinderException as exc:
            if "expected records" in str(exc):
                raise MalformedSource(f"{source.name} must hold JSON objects (one per row), "
                                      "as an array or one per line.", source=source.name) from None
            raise
        except (duckdb.InvalidInputException, duckdb.ConversionException) as exc:
            message = duckdb_message(exc)
            line = _LINE_NUMBER.search(message)
            extra = {"line": int(line.group(1))} if line else {}
            raise MalformedSource(f"{source.name}: {message}", source=source.name,
                                  **extra) from None
        _flatten(target, table, source.name)
        target.finish_table(table, source.name)

    @staticmethod
    def _create(target: ImportTarget, table: str, read: str) -> None:
        # One row past what the import may still hold: enough to tell, and DuckDB stops there.
        limit = target.budget.rows_left + 1
        with target.watch(table):
            target.con.execute(f"CREATE TABLE {quote_ident(table)} AS SELECT * FROM {read} "
                               f"LIMIT {limit}")


def _refuse_empty(source: FileSource) -> None:
    with open(source.path, "rb") as handle:
        head = handle.read(_PROBE_BYTES)
    if len(head) < _PROBE_BYTES and "".join(head.decode("utf-8", "replace").split()) in ("", "[]"):
        raise EmptySource(f"{source.name} is empty: it holds no records.", source=source.name)


def _flatten(target: ImportTarget, table: str, source: str) -> None:
    """Replace ``table``'s struct columns by a column per field (recursively, to
    ``MAX_FLATTEN_DEPTH``), in place and in order; raises ``TooManyColumns`` first when
    the fields would pass the import's column limit."""
    relation = target.con.table(quote_ident(table))
    columns = list(zip(relation.columns, relation.types))
    if not any(kind.id == "struct" for _, kind in columns):
        return
    fields: list[tuple[str, str, list[str]]] = []
    for name, kind in columns:
        _fields(quote_ident(name), [name], kind, fields)
    target.limits.check_columns(len(fields), source)
    book = NameBook()
    named = [(expr, book.claim("_".join(path), "col"), path) for expr, _, path in fields]
    flat = f"sunrise_flat_{table}"
    select = ", ".join(f"{expr} AS {quote_ident(name)}" for expr, name, _ in named)
    target.con.execute(f"CREATE TABLE {quote_ident(flat)} AS SELECT {select} "
                       f"FROM {quote_ident(table)}")
    target.con.execute(f"DROP TABLE {quote_ident(table)}")
    target.con.execute(f"ALTER TABLE {quote_ident(flat)} RENAME TO {quote_ident(table)}")
    for _, name, path in named:
        if len(path) > 1:
            target.note_column(table, name, note=f"From `{'.'.join(path)}` in the file.")


def _fields(expr: str, path: list[str], kind: duckdb.DuckDBPyType,
            out: list[tuple[str, str, list[str]]]) -> None:
    if kind.id != "struct" or len(path) > MAX_FLATTEN_DEPTH or not kind.children:
        out.append((expr, "_".join(path), path))
        return
    for child, child_kind in kind.children:
        _fields(f"struct_extract({expr}, {sql_literal(child)})", [*path, child], child_kind, out)
