"""MariaDB and MySQL as a live engine: session, cancel, types, privileges, summary SQL.

A query costs one round trip: the statement itself. Each connection's session is made
read-only once (``SET SESSION TRANSACTION READ ONLY``: every statement, autocommitted,
runs in a read-only transaction and the server refuses any write in it), and its
server-side limits are set for the query, sent again only when they change (``begin``):
the time limit (MariaDB ``max_statement_time`` in seconds, MySQL ``max_execution_time``
in milliseconds) and ``sql_select_limit`` (the row cap: a statement without its own
``LIMIT`` returns no more rows than are kept). Rows come unbuffered (``SSCursor``), in
batches; a result cut short is left by dropping its connection, so an engine-side
summary then reads the source a moment later on another one. PyMySQL never sets the
multi-statement capability, so the server itself runs one statement per request.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pymysql
from pymysql.constants import FIELD_TYPE

from engine.live.statement_check import RefusedFunctions

DIALECT = "mysql"

REFUSED = RefusedFunctions(
    names=frozenset({
        "sleep", "benchmark", "load_file", "get_lock", "release_lock", "release_all_locks",
        "is_free_lock", "is_used_lock", "master_pos_wait", "master_gtid_wait",
        "source_pos_wait", "wait_for_executed_gtid_set", "wait_until_sql_thread_after_gtids",
        "sys_exec", "sys_eval", "uuid_short", "nextval", "setval", "lastval",
        "last_insert_id", "found_rows", "row_count", "connection_id", "sys_get_config"}),
    prefixes=("lo_", "sys_"),
)

_TYPES = {FIELD_TYPE.TINY: "TINYINT", FIELD_TYPE.SHORT: "SMALLINT",
          FIELD_TYPE.INT24: "INTEGER", FIELD_TYPE.LONG: "INTEGER",
          FIELD_TYPE.LONGLONG: "BIGINT", FIELD_TYPE.YEAR: "SMALLINT",
          FIELD_TYPE.FLOAT: "FLOAT", FIELD_TYPE.DOUBLE: "DOUBLE", FIELD_TYPE.DATE: "DATE",
          FIELD_TYPE.NEWDATE: "DATE", FIELD_TYPE.DATETIME: "TIMESTAMP",
          FIELD_TYPE.TIMESTAMP: "TIMESTAMP", FIELD_TYPE.TIME: "INTERVAL",
          FIELD_TYPE.BIT: "UBIGINT", FIELD_TYPE.JSON: "JSON", FIELD_TYPE.ENUM: "VARCHAR",
          FIELD_TYPE.SET: "VARCHAR", FIELD_TYPE.NULL: "VARCHAR"}
_STRINGS = {FIELD_TYPE.VARCHAR, FIELD_TYPE.VAR_STRING, FIELD_TYPE.STRING,
            FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB, FIELD_TYPE.LONG_BLOB,
            FIELD_TYPE.BLOB}
_DECIMALS = {FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL}
_NUMBER = ("^[[:space:]]*[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?"
           "[[:space:]]*$")
# Privileges that let a role change data or schema (USER_PRIVILEGES and friends).
WRITE_PRIVILEGES = ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX",
                    "CREATE VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "TRIGGER", "EVENT",
                    "FILE", "SUPER", "CREATE USER", "DELETE HISTORY", "CREATE TABLESPACE",
                    "CREATE TEMPORARY TABLES", "LOCK TABLES")


def is_mariadb(conn: pymysql.connections.Connection) -> bool:
    return "mariadb" in conn.get_server_info().lower()


def name_of(conn: pymysql.connections.Connection) -> str:
    return "mariadb" if is_mariadb(conn) else "mysql"


# Each connection's (time limit, row cap) as last set, to send them only on change.
_limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prepare(conn: pymysql.connections.Connection) -> None:
    """Once per new connection: autocommit, and a read-only session."""
    conn.autocommit(True)
    with conn.cursor() as cursor:
        cursor.execute("SET SESSION TRANSACTION READ ONLY")
    _limits.pop(conn, None)


def product(conn: pymysql.connections.Connection) -> tuple[str, str]:
    """The server's product and version number: ``("MariaDB", "10.11.6")``."""
    info = conn.get_server_info()  # "5.5.5-10.11.6-MariaDB-0+deb12u1" or "8.4.2"
    parts = info.split("-")
    # MariaDB before 11 announces itself as "5.5.5-" followed by its real version.
    number = parts[1] if parts[0] == "5.5.5" and len(parts) > 1 else parts[0]
    return ("MariaDB" if "mariadb" in info.lower() else "MySQL"), number


def session_id(conn: pymysql.connections.Connection) -> int:
    return int(conn.thread_id())


def begin(conn: pymysql.connections.Connection, timeout_s: float, row_cap: int) -> None:
    """Give the session the query's server-side limits: a round trip only when they
    differ from the connection's current ones (the caller rounds budgets so that they
    seldom do). Each statement then runs as a read-only transaction of its own."""
    wanted = (timeout_s, int(row_cap))
    if _limits.get(conn) == wanted:
        return
    with conn.cursor() as cursor:
        if is_mariadb(conn):
            cursor.execute("SET SESSION max_statement_time = %s, sql_select_limit = %s",
                           (round(max(0.001, timeout_s), 3), int(row_cap)))
        else:
            cursor.execute("SET SESSION max_execution_time = %s, sql_select_limit = %s",
                           (max(1, int(timeout_s * 1000)), int(row_cap)))
    _limits[conn] = wanted


def end(conn: pymysql.connections.Connection) -> None:
    """Nothing stays open after a statement whose rows were read to their end."""
    del conn


def check_usable(conn: pymysql.connections.Connection) -> None:
    """After a failure: raise unless the connection still answers (a round trip)."""
    conn.ping(reconnect=False)


def cancel(conn: pymysql.connections.Connection, session: int) -> None:
    """``KILL QUERY`` of connection ``session`` (a user's own: no extra privilege)."""
    with conn.cursor() as cursor:
        cursor.execute("KILL QUERY %s", (int(session),))


# Whether closing a result's cursor leaves its rest on the server (else the connection
# must be dropped to stop it).
STOPS_EARLY = False


class Rows:
    """A statement's rows, unbuffered: ``columns``, ``types``, batches."""

    def __init__(self, conn: pymysql.connections.Connection, sql: str, row_cap: int) -> None:
        del row_cap  # sql_select_limit (``begin``)
        self._cursor = conn.cursor(pymysql.cursors.SSCursor)
        self._cursor.execute(sql)
        description = self._cursor.description or []
        self.columns = [str(column[0]) for column in description]
        self._codes = [(column[1], column[5]) for column in description]
        self.types = [_type_name(code, scale) for code, scale in self._codes]

    def batches(self, per_fetch: Callable[[], int], before_each: Callable[[], None]
                ) -> Iterator[Sequence[tuple]]:
        """Batches of at most ``per_fetch()`` rows (asked before each fetch);
        ``before_each`` runs before each fetch (it raises to stop: a cancel landing
        between two statements is not lost)."""
        while before_each() or (batch := self._cursor.fetchmany(size := per_fetch())):
            self._settle_string_types(batch)
            yield batch
            if len(batch) < size:  # a short batch is the last: no round trip to say so
                return

    def discard(self) -> None:
        """Forget the result after a failure; whatever closing it raises is moot."""
        with contextlib.suppress(Exception):
            self._cursor.close()

    def close(self, *, exhausted: bool) -> None:
        """Closing an unbuffered cursor reads what is left; the caller cancels a result
        it stopped early on the engine first (``exhausted`` false), so little is left."""
        del exhausted
        self._cursor.close()

    def _settle_string_types(self, batch: Sequence[tuple]) -> None:
        # The description does not say binary from text; the driver's values do.
        for index, (code, _scale) in enumerate(self._codes):
            if code in _STRINGS and self.types[index] == "VARCHAR" and any(
                    isinstance(row[index], (bytes, bytearray)) for row in batch):
                self.types[index] = "BLOB"


def one_row(conn: pymysql.connections.Connection, sql: str) -> tuple | None:
    """The first row of ``sql`` (our summary around model-written SQL)."""
    with conn.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()


def _type_name(code: int, scale: Any) -> str:
    if code in _DECIMALS:
        return f"DECIMAL(38,{int(scale or 0)})"
    if code in _STRINGS:
        return "VARCHAR"
    return _TYPES.get(code, "UNKNOWN")


# MariaDB/MySQL materialise a derived table with a LIMIT (no merge): the summary's
# numeric values are computed once per row.
SUMMARY_FENCE = " LIMIT 18446744073709551615"


def number_expr(column: str, base: str) -> str:
    """A summary candidate's numeric value, as ``result_sql`` reads it in DuckDB."""
    if base == "VARCHAR":
        return f"CASE WHEN {column} REGEXP '{_NUMBER}' THEN CAST({column} AS DOUBLE) END"
    return column


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def writable_privilege(conn: pymysql.connections.Connection,
                       tables: Sequence[str] | None) -> str | None:
    """One privilege proving the connected account (or a role it has enabled) can write
    in scope (the URL's database and the schemas ``tables`` name), or None."""
    schemas = {t.rpartition(".")[0] for t in tables or () if "." in t}
    with conn.cursor() as cursor:
        cursor.execute("SELECT DATABASE()")
        schemas.add(cursor.fetchone()[0])
        grantees = ("SELECT concat('''', substring_index(current_user(), '@', 1), '''@''', "
                    "substring_index(current_user(), '@', -1), '''') UNION "
                    "SELECT concat('''', ROLE_NAME, '''') FROM information_schema.ENABLED_ROLES")
        kinds = ", ".join(["%s"] * len(WRITE_PRIVILEGES))
        in_scope = " OR ".join(["%s LIKE TABLE_SCHEMA"] * len(schemas))
        cursor.execute(
            f"SELECT concat(PRIVILEGE_TYPE, ' on *.*') FROM information_schema.USER_PRIVILEGES "
            f"WHERE GRANTEE IN ({grantees}) AND PRIVILEGE_TYPE IN ({kinds}) "
            f"UNION ALL SELECT concat(PRIVILEGE_TYPE, ' on ', TABLE_SCHEMA, '.*') "
            f"FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE IN ({grantees}) "
            f"AND PRIVILEGE_TYPE IN ({kinds}) AND ({in_scope}) "
            f"UNION ALL SELECT concat(PRIVILEGE_TYPE, ' on ', TABLE_SCHEMA, '.', TABLE_NAME) "
            f"FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE IN ({grantees}) "
            f"AND PRIVILEGE_TYPE IN ({kinds}) AND ({in_scope}) LIMIT 1",
            (*WRITE_PRIVILEGES, *WRITE_PRIVILEGES, *sorted(schemas), *WRITE_PRIVILEGES,
             *sorted(schemas)))
        row = cursor.fetchone()
    return row[0] if row else None
