"""A snapshot of a live PostgreSQL or MariaDB/MySQL database, through SQLAlchemy.

DuckDB's postgres and mysql scanners are not in the wheel, so rows come through the
Python drivers (psycopg 3, PyMySQL), connected by ``live_connection`` (the outbound
policy, no URL parameter but TLS, timeouts), on one
REPEATABLE READ connection, so every table is read from the same point in time.
Each table is streamed with a server-side cursor in chunks and appended through
Arrow with the types of ``sql_types``; memory stays flat in the table's size.

Tables: the ``tables`` given (``schema.table``, or ``table`` in the URL's default
schema; views are allowed there), else every table of the default schema. A table
outside the default schema is named ``schema_table``.

The URL's password never appears in a message or a log line: they show the URL with
its password field masked; a failed connection never shows driver text, and a failed
read shows it only when it does not contain the password.
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from engine.datasets.arrow_copy import CHUNK_ROWS, copy_rows, create_table
from engine.datasets.importers import live_connection
from engine.datasets.importers.base import Importer
from engine.datasets.importers.sql_types import ZeroDates, plan_column
from engine.datasets.sources import DatabaseSource
from engine.datasets.target import ImportTarget
from shared.errors import (
    EmptySource,
    ImportFailed,
    MissingTables,
    SourceUnreachable,
    UnsupportedSource,
)

logger = logging.getLogger(__name__)

_DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql",
            "mariadb": "mariadb+pymysql"}
_LISTED_TABLES = 20
_SCHEMAS_INSPECTED = 200
_SYSTEM_SCHEMAS = frozenset({"information_schema"})


class LiveDatabaseImporter(Importer):
    kind = "database"
    types_declared = True
    backends = tuple(_DRIVERS)

    def load(self, source: DatabaseSource, target: ImportTarget) -> None:
        """One table per source table. Raises ``SourceUnreachable`` (connecting or reading
        failed), ``MissingTables``, ``EmptySource`` or ``UnsupportedSource``."""
        engine = _engine(source)
        try:
            with _snapshot(engine, source) as conn:
                inspector = sa.inspect(conn)
                default = inspector.default_schema_name
                if not default:
                    raise UnsupportedSource(f"{source.display} names no database; add one to "
                                            "the URL.", source=source.display)
                for schema, name in _tables(inspector, source, default):
                    self._copy_table(conn, inspector, source, schema, name, default, target)
        except sa.exc.DBAPIError as exc:
            raise SourceUnreachable(f"Reading {source.display} failed: {_reason(source, exc)}",
                                    source=source.display) from None
        except RuntimeError:  # PyMySQL refusing a LOCAL INFILE request (local_infile off)
            raise SourceUnreachable(f"Reading {source.display} failed: the server asked for "
                                    "a file of this machine, which is never sent.",
                                    source=source.display) from None
        finally:
            engine.dispose()

    @staticmethod
    def _copy_table(conn: Connection, inspector: sa.Inspector, source: DatabaseSource,
                    schema: str, name: str, default: str, target: ImportTarget) -> None:
        dialect = conn.dialect.name
        columns = inspector.get_columns(name, schema=schema)
        target.limits.check_columns(len(columns), source.display, f"table {schema}.{name}")
        plans = [plan_column(column["name"], column["type"], dialect) for column in columns]
        table = target.table_name(name if schema == default else f"{schema}_{name}")
        create_table(target, table, plans)
        # Untyped column constructs: quoted by the dialect, values exactly as the driver
        # returns them (no SQLAlchemy result processing).
        query = sa.select(*(sa.column(column["name"]) for column in columns)).select_from(
            sa.table(name, schema=schema))
        result = conn.execute(query, execution_options={"stream_results": True,
                                                         "max_row_buffer": CHUNK_ROWS})
        copy_rows(target, table, plans, result.partitions(CHUNK_ROWS),
                  source=f"{source.display} table {schema}.{name}")
        for plan in plans:
            if isinstance(plan.convert, ZeroDates) and plan.convert.count:
                count = plan.convert.count
                target.warn(table, f"Column {plan.name}: {count:,} date{'s' * (count != 1)} "
                                   f"no calendar has (such as {plan.convert.example!r}, "
                                   "MySQL's legacy zero date) became NULL.")
        target.finish_table(table)


def _engine(source: DatabaseSource) -> Engine:
    """An engine whose only connection is ``live_connection.connect``'s: the URL chooses
    the dialect, never the driver's arguments."""
    if source.outbound is None:
        raise ValueError("a DatabaseSource needs an outbound policy to connect")
    url = source.parsed()
    endpoint = source.endpoint()
    schemas = source.schemas() if endpoint.backend == "mysql" else ()

    def creator():
        return live_connection.connect(endpoint, source.outbound, source.display, schemas)

    try:
        return sa.create_engine(sa.engine.URL.create(_DRIVERS[url.get_backend_name()]),
                                poolclass=sa.NullPool, hide_parameters=True, creator=creator)
    except (sa.exc.ArgumentError, ImportError, TypeError):
        raise UnsupportedSource(f"{source.display} cannot be used here.",
                                source=source.display) from None


@contextlib.contextmanager
def _snapshot(engine: Engine, source: DatabaseSource) -> Iterator[Connection]:
    try:
        conn = engine.connect()
    except ImportFailed:
        raise
    except Exception:
        # The creator raises ours; this is the dialect's first queries failing (a driver
        # error, or anything a server not speaking the protocol provokes, such as
        # PyMySQL's RuntimeError refusing a LOCAL INFILE request): not what the URL says.
        raise SourceUnreachable(live_connection.unreachable_message(source.display),
                                source=source.display) from None
    try:
        options: dict = {"isolation_level": "REPEATABLE READ"}
        if engine.dialect.name == "postgresql":
            options["postgresql_readonly"] = True
        with conn.execution_options(**options).begin():
            yield conn
    finally:
        conn.close()


def _reason(source: DatabaseSource, exc: sa.exc.DBAPIError) -> str:
    """The driver's first line, unless it holds the password (then withheld, not masked:
    masking a short password's letters inside words hints at the password)."""
    text = str(exc.orig).strip().splitlines()[0] if exc.orig and str(exc.orig).strip() else ""
    password = source.parsed().password
    if password and password in text:
        return "the driver's message is withheld (it repeats the URL's password)."
    return text or type(exc.orig).__name__


def _tables(inspector: sa.Inspector, source: DatabaseSource, default: str) -> list[tuple[str, str]]:
    """``(schema, table)`` pairs to copy, in the order asked (else by name)."""
    if not source.tables:
        names = sorted(inspector.get_table_names(schema=default))
        if not names:
            raise EmptySource(_no_tables(inspector, source, default), source=source.display)
        return [(default, name) for name in names]
    found, missing = [], []
    available: dict[str, list[str]] = {}
    for wanted in source.tables:
        schema, _, name = wanted.rpartition(".")
        schema = schema or default
        if schema not in available:
            try:
                available[schema] = (inspector.get_table_names(schema=schema)
                                     + inspector.get_view_names(schema=schema))
            except sa.exc.DBAPIError:
                available[schema] = []
        match = _match(name, available[schema])
        if match is None:
            missing.append(wanted)
        else:
            found.append((schema, match))
    if missing:
        known = sorted(available.get(default) or [])
        listed = ", ".join(known[:_LISTED_TABLES]) + (" ..." if len(known) > _LISTED_TABLES else "")
        raise MissingTables(f"{source.display} has no table {', '.join(missing)} "
                            f"(tables in {default}: {listed or 'none'}).",
                            source=source.display, missing=missing)
    return list(dict.fromkeys(found))


def _no_tables(inspector: sa.Inspector, source: DatabaseSource, default: str) -> str:
    """Why nothing came without a table list, and what to pass: on PostgreSQL, the
    schemas of that database that have tables (a MySQL schema is another database of
    the server: not listed)."""
    if inspector.dialect.name != "postgresql":
        return (f"{source.display} has no tables in database {default}; pass `tables` "
                "to name the tables to import.")
    found: list[tuple[str, list[str]]] = []
    schemas = [s for s in sorted(inspector.get_schema_names())
               if s != default and s not in _SYSTEM_SCHEMAS and not s.startswith("pg_")]
    for schema in schemas[:_SCHEMAS_INSPECTED]:
        tables = sorted(inspector.get_table_names(schema=schema))
        if tables:
            found.append((schema, tables))
    if not found:
        return f"{source.display} has no tables in schema {default}, nor in any other schema."
    listed = ", ".join(f"{schema} ({len(tables):,} table{'s' * (len(tables) != 1)})"
                       for schema, tables in found[:_LISTED_TABLES])
    more = " ..." if len(found) > _LISTED_TABLES else ""
    schema, tables = found[0]
    return (f"{source.display} has no tables in schema {default}. Schemas with tables: "
            f"{listed}{more}. Pass `tables` to import them, such as "
            f'["{schema}.{tables[0]}"].')


def _match(name: str, names: list[str]) -> str | None:
    """``name`` as the database spells it: exact, else the one case-insensitive match."""
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None
