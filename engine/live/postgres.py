"""PostgreSQL as a live engine: its session, cancel, types, privileges and summary SQL.

Each query runs in its own ``REPEATABLE READ READ ONLY`` transaction (opened by
``begin``, with its settings, in one round trip), so the rows and a summary computed on the engine read
the same snapshot, and the server refuses every write whatever the statement hides (a
function that writes, ``nextval``). ``statement_timeout`` is set for the transaction to
the query's budget. Rows come through a server-side cursor, fetched in batches, so
stopping early leaves the rest on the server (the portal is closed, never drained).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg

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


def prepare(conn: psycopg.Connection) -> None:
    """Once per new connection: autocommit, so that each query's transaction is opened
    by ``begin`` itself, with its settings, in one round trip."""
    conn.autocommit = True
    conn.execute("SET application_name = 'sunrise-live'")


def product(conn: psycopg.Connection) -> tuple[str, str]:
    """The server's product and version number: ``("PostgreSQL", "16.4")``."""
    number = conn.info.server_version  # e.g. 160004
    major, minor = number // 10000, number % 100
    return TITLE, f"{major}.{minor}" if major >= 10 else str(number)


def session_id(conn: psycopg.Connection) -> int:
    return int(conn.info.backend_pid)


def begin(conn: psycopg.Connection, timeout_s: float, row_cap: int) -> None:
    """Open the query's read-only transaction with its server-side time limit: our own
    statements only, in one simple-protocol round trip (the model's statement is always
    sent alone, through the extended protocol, which runs exactly one)."""
    del row_cap  # the server-side cursor stops at the cap itself
    # A cursor's plan favours its first rows (cursor_tuple_fraction 0.1), e.g. a sort
    # over a hash aggregate; the whole result is wanted, as a plain query would plan.
    conn.execute(f"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
                 f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}; "
                 "SET LOCAL cursor_tuple_fraction = 1")


def end(conn: psycopg.Connection) -> None:
    conn.execute("ROLLBACK")


def cancel(conn: psycopg.Connection, session: int) -> None:
    """Cancel whatever backend ``session`` runs (same role: no extra privilege needed)."""
    conn.execute("SELECT pg_cancel_backend(%s)", [session])


# Whether closing a result's cursor leaves its rest on the server (else the connection
# must be dropped to stop it).
STOPS_EARLY = True


class Rows:
    """A statement's rows through a server-side cursor: ``columns``, ``types``, batches."""

    def __init__(self, conn: psycopg.Connection, sql: str) -> None:
        self._cursor = conn.cursor(name="sunrise_live", scrollable=False, withhold=False)
        self._cursor.execute(sql)
        description = self._cursor.description or []
        self.columns = [str(column.name) for column in description]
        self.types = [_type_name(column) for column in description]

    def batches(self, per_fetch: Callable[[], int], before_each: Callable[[], None]
                ) -> Iterator[Sequence[tuple]]:
        """Batches of at most ``per_fetch()`` rows (asked before each fetch);
        ``before_each`` runs before each fetch (it raises to stop: a cancel landing
        between two statements is not lost)."""
        while before_each() or (batch := self._cursor.fetchmany(size := per_fetch())):
            yield batch
            if len(batch) < size:  # a short batch is the last: no round trip to say so
                return

    def discard(self) -> None:
        """Forget the result after a failure; whatever closing it raises is moot."""
        with contextlib.suppress(Exception):
            self._cursor.close()

    def close(self, *, exhausted: bool) -> None:
        """Stop the rest on the server; an exhausted portal ends with the transaction."""
        if not exhausted:
            self._cursor.close()


def _type_name(column: Any) -> str:
    oid = column.type_code
    if oid == _NUMERIC:
        precision, scale = column.precision, column.scale
        if precision and precision <= _MAX_DECIMAL:
            return f"DECIMAL({precision},{scale or 0})"
        return "DOUBLE"
    return _TYPES.get(oid, "VARCHAR" if oid in (1009, 1015) else "UNKNOWN")


def summary_select(candidates: Sequence[tuple[int, str, str]]) -> list[str]:
    """The engine-side summary's select list, as ``result_sql``'s for DuckDB."""
    select = ["count(*)"]
    for index, _name, base in candidates:
        col = f"c{index}"
        expr = (f"CASE WHEN {col} ~ '{_NUMBER}' THEN CAST({col} AS double precision) END"
                if base == "VARCHAR" else col)
        select += [f"count({expr})", f"sum({expr})", f"min({expr})", f"max({expr})",
                   f"avg({expr})"]
    return select


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
