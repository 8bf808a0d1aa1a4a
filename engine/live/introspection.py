"""A live source's schema and profile, computed on the engine from a bounded sample.

Tables: the ``tables`` asked (``schema.table`` or ``table`` in the URL's default schema;
views too), else every table of the default schema. A table outside the default schema
keeps its qualified name (``sales.orders``): the model's SQL runs on the source, where
that is its name. Column types come from SQLAlchemy's reflection mapped exactly as a
snapshot maps them (``engine/datasets/importers/sql_types.py``), so a prompt reads the
same DuckDB-style names either way.

The profile has ``engine/datasets/profile.py``'s shape, computed by the engine over the
first ``sample_rows`` rows of each table (``WITH s AS (SELECT * FROM t LIMIT n)``): per
column the null share, the exact distinct count, min and max, and for columns with at
most ``LOW_CARDINALITY`` distinct values their ``TOP_VALUES`` most frequent values. A
table's ``rows`` is exact when the sample held the whole table, else the engine's own
estimate (``pg_class.reltuples``, ``information_schema.TABLES.TABLE_ROWS``) when larger.
Each statement runs in the engine's read-only session with the SQL tool's time limit.
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from engine.datasets.importers.sql_types import plan_column
from engine.datasets.profile import (
    LOW_CARDINALITY,
    TOP_VALUES,
    ColumnProfile,
    TableProfile,
    TopValue,
    json_ready,
)
from shared.errors import EmptySource, MissingTables, SourceUnreachable

if TYPE_CHECKING:
    from engine.live.live_engine import LiveEngine

_DRIVERS = {"postgres": "postgresql+psycopg", "mysql": "mysql+pymysql"}
_COMPARABLE = ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT",
               "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "VARCHAR",
               "DATE", "TIME", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL")


def introspect(engine: LiveEngine, tables: list[str] | None, *, sample_rows: int,
               timeout_s: float) -> list[TableProfile]:
    """Profiles of the tables, in the order asked (else by name). Raises
    ``MissingTables``, ``EmptySource`` or ``SourceUnreachable``."""
    columns = _reflect(engine, tables)
    profiles = []
    for name, cols in columns:
        with engine._session(timeout_s, row_cap=max(1000, TOP_VALUES)) as conn:
            profiles.append(_profile(engine, conn, name, cols, int(sample_rows)))
    return profiles


def _reflect(engine: LiveEngine, tables: list[str] | None) -> list[tuple[str, list]]:
    """``[(name as the model writes it, [(column, DuckDB type)])]``."""
    reflector = sa.create_engine(sa.engine.URL.create(_DRIVERS[engine.dialect]),
                                 poolclass=sa.NullPool, hide_parameters=True,
                                 creator=engine._connect)
    dialect = "postgresql" if engine.dialect == "postgres" else engine.name
    try:
        with reflector.connect() as conn:
            inspector = sa.inspect(conn)
            default = inspector.default_schema_name
            wanted = _tables(inspector, engine.display, tables, default)
            return [(name if schema == default else f"{schema}.{name}",
                     [(c["name"], plan_column(c["name"], c["type"], dialect).duckdb_type)
                      for c in inspector.get_columns(name, schema=schema)])
                    for schema, name in wanted]
    except sa.exc.DBAPIError:
        raise SourceUnreachable(f"Reading the schema of {engine.display} failed.",
                                source=engine.display) from None
    finally:
        reflector.dispose()


def _tables(inspector, display: str, tables: list[str] | None,
            default: str) -> list[tuple[str, str]]:
    if not tables:
        names = sorted(inspector.get_table_names(schema=default))
        if not names:
            raise EmptySource(f"{display} has no tables in schema {default}.", source=display)
        return [(default, name) for name in names]
    found, missing, known = [], [], {}
    for wanted in tables:
        schema, _, name = wanted.rpartition(".")
        schema = schema or default
        if schema not in known:
            try:
                known[schema] = (inspector.get_table_names(schema=schema)
                                 + inspector.get_view_names(schema=schema))
            except sa.exc.DBAPIError:
                known[schema] = []
        match = name if name in known[schema] else next(
            iter([n for n in known[schema] if n.lower() == name.lower()][:1]), None)
        (found if match else missing).append((schema, match) if match else wanted)
    if missing:
        raise MissingTables(f"{display} has no table {', '.join(missing)}.", source=display,
                            missing=missing)
    return list(dict.fromkeys(found))


def _profile(engine: LiveEngine, conn: Any, name: str, columns: list[tuple[str, str]],
             sample_rows: int) -> TableProfile:
    backend = engine._backend
    table = ".".join(backend.quote(part) for part in name.split("."))
    sample = f"WITH s AS (SELECT * FROM {table} LIMIT {sample_rows}) "
    parts = ["count(*)"]
    for column, data_type in columns:
        expr = _expression(engine, backend.quote(column), data_type)
        low, high = _min_max(engine, expr, data_type)
        parts += [f"count({expr})", f"count(DISTINCT {expr})", low, high]
    row = _one(conn, f"{sample}SELECT {', '.join(parts)} FROM s")
    rows = int(row[0])
    if rows >= sample_rows:
        rows = max(rows, _estimate(engine, conn, name))
    profiles = []
    for index, (column, data_type) in enumerate(columns):
        non_null, distinct, low, high = row[1 + 4 * index: 5 + 4 * index]
        top: tuple[TopValue, ...] = ()
        if _comparable(data_type) and 0 < int(distinct) <= LOW_CARDINALITY:
            expr = _expression(engine, backend.quote(column), data_type)
            top = tuple(TopValue(json_ready(_typed(value, data_type)), int(count))
                        for value, count in _all(conn, (
                            f"{sample}SELECT {expr}, count(*) FROM s WHERE {expr} IS NOT NULL "
                            f"GROUP BY {expr} ORDER BY count(*) DESC, {expr} "
                            f"LIMIT {TOP_VALUES}")))
        sampled = int(row[0])
        profiles.append(ColumnProfile(
            column, data_type, round(1 - int(non_null) / sampled, 4) if sampled else 0.0,
            int(distinct), json_ready(_typed(low, data_type)),
            json_ready(_typed(high, data_type)), top))
    return TableProfile(name, rows, tuple(profiles))


def _expression(engine: LiveEngine, column: str, data_type: str) -> str:
    # PostgreSQL compares json, arrays and the like only as text.
    if engine.dialect == "postgres" and data_type == "VARCHAR":
        return f"CAST({column} AS text)"
    return column


def _min_max(engine: LiveEngine, expr: str, data_type: str) -> tuple[str, str]:
    if not _comparable(data_type):
        return "NULL", "NULL"
    if engine.dialect == "postgres" and data_type == "BOOLEAN":
        return f"bool_and({expr})", f"bool_or({expr})"
    return f"min({expr})", f"max({expr})"


def _estimate(engine: LiveEngine, conn: Any, name: str) -> int:
    schema, _, table = name.rpartition(".")
    if engine.dialect == "postgres":
        sql = ("SELECT reltuples::bigint FROM pg_class c JOIN pg_namespace n ON "
               "n.oid = c.relnamespace WHERE c.relname = %s "
               "AND n.nspname = coalesce(%s, current_schema())")
    else:
        sql = ("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = %s "
               "AND TABLE_SCHEMA = coalesce(%s, DATABASE())")
    with contextlib.suppress(Exception):
        row = _one(conn, sql, (table, schema or None))
        return int(row[0] or 0) if row else 0
    return 0


def _typed(value: Any, data_type: str) -> Any:
    if data_type == "BOOLEAN" and isinstance(value, int):
        return bool(value)
    return value


def _comparable(data_type: str) -> bool:
    base = data_type.split("(")[0].strip()
    return base in _COMPARABLE or base.startswith("TIMESTAMP")


def _one(conn: Any, sql: str, params: tuple = ()) -> Any:
    with conn.cursor() as cursor:
        cursor.execute(sql, params or None)
        return cursor.fetchone()


def _all(conn: Any, sql: str) -> list:
    with conn.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()
