"""PostgreSQL as a live engine: its session, cancel, types, privileges and summary SQL.

A query costs one round trip: the statement itself. Each connection's session is made
read-only (``default_transaction_read_only``, so every statement runs in a read-only
transaction of its own and the server refuses every write whatever the statement hides:
a function that writes, ``nextval``), checked before every statement by the value the
server reports (a statement that turned it off is undone before the next runs), and its
``statement_timeout`` is set to the query's budget, sent again only when that changes
(``begin``; a statement that lifted it still meets the watchdog). The rows are streamed (libpq's
chunked rows mode) from the statement wrapped with the row cap as its ``LIMIT``: the
server stops at the cap itself, the worker holds one chunk at a time, and a result cut
short by the byte budget is cancelled on the server, never drained.

Every statement that carries model-written SQL goes through the extended protocol
(``stream``), which runs exactly one statement whatever the text holds; our own
settings use the simple one. A summary computed on the engine reads the source a
moment after the rows (two statements, two snapshots of a source that may be written
meanwhile), as it does on MariaDB, where a cut result's connection is dropped.
"""
from __future__ import annotations

import contextlib
import itertools
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import pq

from engine.live.statement_check import RefusedFunctions

NAME, DIALECT, TITLE = "postgresql", "postgres", "PostgreSQL"

REFUSED = RefusedFunctions(
    names=frozenset({
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "set_config",
        "pg_terminate_backend", "pg_cancel_backend", "nextval", "setval", "currval",
        "lastval", "pg_current_xact_id", "pg_current_xact_id_if_assigned", "pg_notify",
        "pg_reload_conf", "pg_rotate_logfile", "pg_promote", "pg_switch_wal",
        "pg_create_restore_point", "pg_logical_emit_message", "pg_backup_start",
        "pg_backup_stop", "pg_start_backup", "pg_stop_backup", "pg_file_write",
        "pg_file_rename", "pg_file_unlink", "pg_import_system_collations",
        "pg_log_backend_memory_contexts", "current_setting", "pg_settings",
        "cursor_to_xml", "cursor_to_xmlschema", "pg_wal_replay_pause",
        "pg_wal_replay_resume", "pg_export_snapshot", "pg_replication_origin_create",
        "pg_drop_replication_slot", "pg_create_physical_replication_slot",
        "pg_create_logical_replication_slot", "pg_stat_reset", "pg_stat_reset_shared",
        "pg_stat_reset_single_table_counters", "pg_stat_reset_single_function_counters",
        "pg_stat_reset_slru", "pg_stat_reset_replication_slot", "pg_ls_logdir",
        "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalmapdir",
        "pg_ls_logicalsnapdir", "pg_ls_replslotdir"}),
    prefixes=("pg_sleep", "lo_", "dblink", "pg_advisory", "pg_try_advisory", "txid_",
              "query_to_xml", "table_to_xml", "schema_to_xml", "database_to_xml",
              "pg_read_", "pg_file_"),
)

# Result column types (by type OID) as the DuckDB names the prompt and summary use.
_TYPES = {16: "BOOLEAN", 20: "BIGINT", 21: "SMALLINT", 23: "INTEGER", 26: "BIGINT",
          700: "FLOAT", 701: "DOUBLE", 25: "VARCHAR", 1043: "VARCHAR", 1042: "VARCHAR",
          18: "VARCHAR", 19: "VARCHAR", 1082: "DATE", 1114: "TIMESTAMP",
          1184: "TIMESTAMP WITH TIME ZONE", 1083: "TIME", 1266: "TIME WITH TIME ZONE",
          1186: "INTERVAL", 17: "BLOB", 114: "JSON", 3802: "JSON", 2950: "UUID"}
_NUMERIC = 1700
_MAX_DECIMAL = 38
# What a text must look like for the summary to read it as a number (as DuckDB's
# TRY_CAST(... AS DOUBLE) would).
_NUMBER = r"^\s*[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?\s*$"


# Rows per chunk of a streamed result (the server sends them as one message batch).
CHUNK_ROWS = 1000
# Rows read past a cut before a result is cancelled instead (the LIMIT leaves one).
_DRAIN_ROWS = 2
# Each connection's statement_timeout as last set (seconds), to send it only on change.
_timeouts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prepare(conn: psycopg.Connection) -> None:
    """Once per new connection: autocommit, a read-only session, our name."""
    conn.autocommit = True
    conn.execute("SET application_name = 'sunrise-live'; "
                 "SET default_transaction_read_only = on")
    _timeouts.pop(conn, None)


def product(conn: psycopg.Connection) -> tuple[str, str]:
    """The server's product and version number: ``("PostgreSQL", "16.4")``."""
    number = conn.info.server_version  # e.g. 160004
    major, minor = number // 10000, number % 100
    return TITLE, f"{major}.{minor}" if major >= 10 else str(number)


def session_id(conn: psycopg.Connection) -> int:
    return int(conn.info.backend_pid)


def begin(conn: psycopg.Connection, timeout_s: float, row_cap: int) -> None:
    """Give the session the query's server-side time limit: a round trip only when it
    differs from the connection's current one (the caller rounds budgets so that it
    seldom does). Each statement then runs as a read-only transaction of its own."""
    del row_cap  # the statement's LIMIT (``Rows``)
    # The server reports this setting whenever it changes (PostgreSQL 14 and later), so
    # a statement that turned it off (a function the check did not know, SECURITY
    # DEFINER code calling set_config) is seen here, without a round trip, and undone
    # before the next one runs. Older servers report nothing: it is sent every time.
    if conn.info.parameter_status("default_transaction_read_only") != "on":
        conn.execute("SET default_transaction_read_only = on")
    if _timeouts.get(conn) != timeout_s:
        conn.execute(f"SET statement_timeout = {max(1, round(timeout_s * 1000))}")
        _timeouts[conn] = timeout_s


def end(conn: psycopg.Connection) -> None:
    """Nothing stays open after a statement; a connection left mid-result (or closed)
    is refused, so it is not reused. No round trip: libpq knows."""
    if conn.closed or conn.info.transaction_status != pq.TransactionStatus.IDLE:
        raise psycopg.OperationalError("the connection is not idle")


check_usable = end


def cancel(conn: psycopg.Connection, session: int) -> None:
    """Cancel whatever backend ``session`` runs (same role: no extra privilege needed)."""
    conn.execute("SELECT pg_cancel_backend(%s)", [session])


# Whether closing a result's cursor leaves its rest on the server (else the connection
# must be dropped to stop it).
STOPS_EARLY = True


class Rows:
    """A statement's rows, streamed with ``row_cap`` as its LIMIT: ``columns``,
    ``types``, batches. The statement is sent, and its first chunk read, on creation."""

    def __init__(self, conn: psycopg.Connection, sql: str, row_cap: int) -> None:
        self._cursor = conn.cursor()
        # The newlines keep a trailing line comment in sql from eating the ")".
        limited = f"SELECT * FROM (\n{sql}\n) AS sunrise_rows LIMIT {int(row_cap)}"
        self._stream = self._cursor.stream(limited, size=CHUNK_ROWS)
        self._first = list(itertools.islice(self._stream, CHUNK_ROWS))
        description = self._cursor.description
        if description is None:  # no row: psycopg describes a result by its first chunk
            with conn.cursor() as cursor:
                cursor.execute(f"SELECT * FROM (\n{sql}\n) AS sunrise_rows LIMIT 0",
                               binary=True)  # binary: the extended protocol, one statement
                description = cursor.description or []
        self.columns = [str(column.name) for column in description]
        self.types = [_type_name(column) for column in description]

    def batches(self, per_fetch: Callable[[], int], before_each: Callable[[], None]
                ) -> Iterator[Sequence[tuple]]:
        """The rows in chunks of ``CHUNK_ROWS`` as the server streams them (the LIMIT
        bounds them, so ``per_fetch`` is not asked); ``before_each`` runs before each
        chunk is handed over (it raises to stop: a cancel is not lost)."""
        del per_fetch
        batch = self._first
        while True:
            before_each()
            if batch:
                yield batch
            if len(batch) < CHUNK_ROWS:  # a short chunk is the last
                return
            batch = list(itertools.islice(self._stream, CHUNK_ROWS))

    def discard(self) -> None:
        """Forget the result after a failure; whatever closing it raises is moot."""
        with contextlib.suppress(Exception):
            self._stream.close()
        with contextlib.suppress(Exception):
            self._cursor.close()

    def close(self, *, exhausted: bool) -> None:
        """End the result: one cut at the LIMIT has only its end left to read; one cut
        by the byte budget is cancelled on the server (psycopg cancels a stream closed
        early, then reads what was already sent)."""
        if not exhausted:
            for _ in itertools.islice(self._stream, _DRAIN_ROWS):
                pass
        self._stream.close()
        self._cursor.close()


def one_row(conn: psycopg.Connection, sql: str) -> tuple | None:
    """The first row of ``sql`` (our summary around model-written SQL), sent through the
    extended protocol like the rows, so it runs as one statement whatever it holds."""
    with conn.cursor() as cursor:
        stream = cursor.stream(sql)
        try:
            return next(stream, None)
        finally:
            for _ in stream:  # one row: only the end is left
                pass


def _type_name(column: Any) -> str:
    oid = column.type_code
    if oid == _NUMERIC:
        precision, scale = column.precision, column.scale
        if precision and precision <= _MAX_DECIMAL:
            return f"DECIMAL({precision},{scale or 0})"
        return "DOUBLE"
    return _TYPES.get(oid, "VARCHAR" if oid in (1009, 1015) else "UNKNOWN")


# Keeps the summary's derived table from being merged into the aggregates.
SUMMARY_FENCE = " OFFSET 0"


def number_expr(column: str, base: str) -> str:
    """A summary candidate's numeric value, as ``result_sql`` reads it in DuckDB."""
    if base == "VARCHAR":
        return f"CASE WHEN {column} ~ '{_NUMBER}' THEN CAST({column} AS double precision) END"
    return column


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def writable_privilege(conn: psycopg.Connection, tables: Sequence[str] | None) -> str | None:
    """One privilege proving the connected role can write in scope, or None (see
    ``LiveEngine.writable_privilege``)."""
    row = conn.execute("SELECT rolsuper, rolname FROM pg_roles WHERE rolname = current_user"
                       ).fetchone()
    if row and row[0]:
        return f"the role {row[1]} is a superuser"
    if conn.execute("SELECT has_database_privilege(current_database(), 'CREATE')").fetchone()[0]:
        return "CREATE on the database"
    scope, params = "n.nspname NOT IN ('pg_catalog', 'information_schema') " \
                    "AND n.nspname NOT LIKE 'pg\\_%%'", []
    if tables:
        names = [t.rpartition(".") for t in tables]
        scope = " OR ".join(["(n.nspname = coalesce(%s, current_schema()) AND c.relname = %s)"]
                            * len(names))
        params = [p for schema, _, name in names for p in (schema or None, name)]
    found = conn.execute(
        "SELECT p || ' on ' || n.nspname || '.' || c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p "
        f"WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ({scope}) "
        "AND has_table_privilege(c.oid, p) "
        "UNION ALL SELECT 'UPDATE on sequence ' || n.nspname || '.' || c.relname "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND CASE WHEN "
        "c.relkind = 'S' THEN has_sequence_privilege(c.oid, 'UPDATE') ELSE false END "
        "UNION ALL SELECT 'CREATE on schema ' || n.nspname FROM pg_namespace n "
        "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg\\_%%' AND has_schema_privilege(n.oid, 'CREATE') "
        "LIMIT 1", params).fetchone()
    return found[0] if found else None
