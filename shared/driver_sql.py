"""Prebuilt Core statements run on the pooled connection's own DBAPI cursor.

Why: SQLAlchemy's execution path (a ``Connection`` and its transaction object, an
execution context, the compiled-cache lookup, a ``Result``) costs more CPU per
statement than PyMySQL's own work (BENCHMARKS.md: ≈ 82 µs against ≈ 37 µs), and the
worker makes nine statements in four transactions per job. Here each statement is
compiled once per dialect and set of parameter names -- the same SQL text Core sends --
its values go through the column types' own bind processors, and it runs on a
connection checked out of the engine's pool, whose recycling and reset on return are
unchanged (its ping before use too, unless the caller takes recently used connections
unpinged: ``shared.db.checkout``).

Errors look as they did through a ``Connection``: a driver error is raised as the
matching ``sqlalchemy.exc.DBAPIError`` subclass, and a disconnect invalidates the
pool's connections and sets ``connection_invalidated``, so the retry policies of
``shared/db_retry.py`` see the same exceptions.

On PyMySQL the values are made SQL literals here, with PyMySQL's own escaping but
picked by the value's type directly (``_LITERALS``): its general ``escape`` path cost
≈ 0.7 µs per value plus ≈ 3.5 µs per datetime, and a job binds ≈ 90 values. The SQL
text sent is the one PyMySQL's ``execute`` and ``executemany`` would send.

Only plain statements are supported: no expanding (``IN``) parameters, no RETURNING,
no server-side or SQL-expression defaults to fetch back.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime as dt
import functools
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from pymysql.constants.SERVER_STATUS import SERVER_STATUS_NO_BACKSLASH_ESCAPES
from pymysql.converters import Decimal2Literal, escape_datetime, escape_string
from pymysql.cursors import RE_INSERT_VALUES
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

from shared.db import checkout

# Statements are module constants, compiled once per parameter-name set: the bound is
# only a guard against a caller building a new statement per call.
COMPILED_STATEMENTS = 256
_NO_VALUES: Mapping[str, Any] = types.MappingProxyType({})


def _datetime_literal(value: dt.datetime) -> str:
    # isoformat is escape_datetime's text for a naive datetime (microseconds only when
    # set), at a fraction of its cost; an aware one keeps PyMySQL's (no offset).
    return f"'{value.isoformat(' ')}'" if value.tzinfo is None else escape_datetime(value)


# PyMySQL's literal of a value of each exact type (Connection.escape and the encoders
# it dispatches to, with backslash escapes on); any other type goes through escape.
_LITERALS: dict[type, Callable[[Any], str]] = {
    str: lambda value: f"'{escape_string(value)}'",
    int: str,
    bool: lambda value: "1" if value else "0",
    type(None): lambda _value: "NULL",
    dt.datetime: _datetime_literal,
    Decimal: lambda value: Decimal2Literal(value, None),
}


@dataclasses.dataclass(frozen=True)
class _Compiled:
    """One statement as the driver takes it: its SQL, and how its parameters are made."""

    sql: str
    required: tuple[str, ...]  # the values the caller must give
    fixed: dict[str, Any]  # values bound in the statement itself ("running", LIMIT 1)
    defaults: dict[str, Callable[[], Any]]  # Python-side column defaults, if not given
    processors: dict[str, Callable[[Any], Any]]  # the column types' bind processors
    positions: tuple[str, ...] | None  # parameter order for a positional driver
    row: type | None  # the row class of a SELECT
    result_processors: tuple[Callable[[Any], Any] | None, ...] | None  # None: none to run
    # An INSERT .. VALUES as PyMySQL's executemany splits it: (prefix, row, postfix).
    insert_values: tuple[str, str, str] | None = None

    def parameters(self, values: Mapping[str, Any]) -> dict[str, Any] | tuple:
        params = {name: values[name] for name in self.required}
        for name, value in self.fixed.items():
            params[name] = values.get(name, value)
        for name, default in self.defaults.items():
            params[name] = values[name] if name in values else default()
        for name, process in self.processors.items():
            params[name] = process(params[name])
        if self.positions is not None:
            return tuple(params[name] for name in self.positions)
        return params

    def literal_sql(self, values: Mapping[str, Any], escape: Callable[[Any], str],
                    sql: str | None = None) -> str:
        """``sql`` (the statement's, or its VALUES row) with the values' literals, as
        PyMySQL's ``mogrify`` makes it; ``escape`` takes the types ``_LITERALS`` lacks."""
        literals = _LITERALS
        params = self.parameters(values)
        return (sql or self.sql) % {name: literals.get(type(value), escape)(value)
                                    for name, value in params.items()}

    def make_row(self, values: Sequence[Any]):
        if self.result_processors is not None:
            values = [value if process is None else process(value)
                      for process, value in zip(self.result_processors, values)]
        return self.row._make(values)


@functools.lru_cache(maxsize=COMPILED_STATEMENTS)
def _compiled(statement: ClauseElement, dialect, keys: frozenset[str]) -> _Compiled:
    compiled = statement.compile(dialect=dialect, column_keys=sorted(keys) or None)
    if "POSTCOMPILE" in compiled.string or compiled.returning:
        raise ValueError(f"not a plain statement: {compiled.string}")
    binds = {name: bind for bind, name in compiled.bind_names.items()}
    defaults = {column.key: _default_of(column.key, column.default)
                for column in compiled.insert_prefetch}
    defaults.update((column.key, _default_of(column.key, column.onupdate))
                    for column in compiled.update_prefetch)
    required = tuple(name for name, bind in binds.items()
                     if bind.required and name not in defaults)
    fixed = {name: bind.effective_value for name, bind in binds.items()
             if not bind.required and name not in defaults}
    processors = {}
    for name, bind in binds.items():
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            processors[name] = process
    row, result_processors = None, None
    if getattr(statement, "is_select", False):
        columns = list(statement.selected_columns)
        row = collections.namedtuple("Row", [c.key for c in columns], rename=True)
        result_processors = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None)
                                  for c in columns)
        if not any(result_processors):
            result_processors = None
    positions = tuple(compiled.positiontup) if compiled.positional else None
    insert_values = None
    if positions is None and (match := RE_INSERT_VALUES.match(compiled.string)):
        insert_values = (match.group(1) % (), match.group(2).rstrip(), (match.group(3) or "") % ())
    return _Compiled(compiled.string, required, fixed, defaults, processors, positions, row,
                     result_processors, insert_values)


def _default_of(name: str, default) -> Callable[[], Any]:
    """A column default computed here, as the execution context would (scalar or a
    Python callable; a SQL expression or sequence would need a server round trip)."""
    if default is not None and default.is_scalar:
        return lambda arg=default.arg: arg
    if default is not None and default.is_callable:
        return lambda arg=default.arg: arg(None)
    raise ValueError(f"column {name} has a default the driver path cannot compute")


class DriverResult:
    """What a statement returned: its row count, and its rows for a SELECT."""

    def __init__(self, rowcount: int, rows: list):
        self.rowcount = rowcount
        self._rows = rows

    def all(self) -> list:
        return self._rows

    def first(self):
        return self._rows[0] if self._rows else None

    def one_or_none(self):
        if len(self._rows) > 1:
            raise ValueError("more than one row")
        return self._rows[0] if self._rows else None

    def one(self):
        if len(self._rows) != 1:
            raise ValueError(f"{len(self._rows)} rows, one expected")
        return self._rows[0]

    def scalar(self):
        return self._rows[0][0] if self._rows else None


class DriverConnection:
    """A checked-out connection in a transaction, executing prebuilt statements with
    the calls of a ``Connection`` the hot path uses (``execute``, ``scalar``)."""

    def __init__(self, driver: DriverSQL, pooled):
        self._driver = driver
        self._pooled = pooled
        self._cursor = pooled.dbapi_connection.cursor()
        # PyMySQL's values are made literals here (``_LITERALS``), unless the server
        # wants quotes doubled instead of backslashes; then, and on other drivers, the
        # driver binds them.
        self._escape = pooled.dbapi_connection.escape if driver.literals else None

    def execute(self, statement: ClauseElement, parameters: Mapping[str, Any]
                | Sequence[Mapping[str, Any]] = _NO_VALUES) -> DriverResult:
        """Run ``statement`` with one set of values, or with each of a list of them (one
        multi-row INSERT where the driver can); raises ``DBAPIError``."""
        many = isinstance(parameters, list)
        first = parameters[0] if many else parameters
        compiled = _compiled(statement, self._driver.dialect, frozenset(first))
        cursor = self._cursor
        escape = self._escape
        try:
            if escape is not None and cursor.connection.server_status \
                    & SERVER_STATUS_NO_BACKSLASH_ESCAPES:
                escape = None
            if escape is None:
                if many:
                    cursor.executemany(compiled.sql, [compiled.parameters(p) for p in parameters])
                else:
                    cursor.execute(compiled.sql, compiled.parameters(parameters))
                rowcount = cursor.rowcount
            elif not many:
                rowcount = cursor.execute(compiled.literal_sql(parameters, escape))
            elif compiled.insert_values is None:
                rowcount = sum(cursor.execute(compiled.literal_sql(p, escape))
                               for p in parameters)
            else:
                rowcount = self._insert_many(compiled, parameters, escape)
            rows = ([compiled.make_row(values) for values in cursor.fetchall()]
                    if compiled.row is not None else [])
        except self._driver.dbapi_error as exc:
            raise self._driver.translated(exc, compiled.sql, parameters, self) from exc
        return DriverResult(rowcount, rows)

    def _insert_many(self, compiled: _Compiled, parameters: Sequence[Mapping[str, Any]],
                     escape: Callable[[Any], str]) -> int:
        """A multi-row INSERT of ``parameters``, cut where PyMySQL's ``executemany`` cuts
        one (its ``max_stmt_length``); returns the rows inserted."""
        cursor = self._cursor
        prefix, row_sql, postfix = compiled.insert_values
        limit = cursor.max_stmt_length - len(postfix.encode()) - 1
        rows, sql, size = 0, "", 0
        for values in parameters:
            row = compiled.literal_sql(values, escape, row_sql)
            row_size = len(row.encode())
            if sql and size + row_size > limit:
                rows += cursor.execute(sql + postfix)
                sql = ""
            if sql:
                sql, size = f"{sql},{row}", size + 1 + row_size
            else:
                sql, size = prefix + row, len(prefix.encode()) + row_size
        return rows + cursor.execute(sql + postfix)

    def scalar(self, statement: ClauseElement, parameters: Mapping[str, Any] = _NO_VALUES):
        return self.execute(statement, parameters).scalar()

    def close(self) -> None:
        with contextlib.suppress(self._driver.dbapi_error):
            self._cursor.close()


class DriverSQL:
    """Runs transactions of prebuilt statements on ``engine``'s pooled connections.

    ``ping_after_idle_s``: see ``shared.db.checkout`` (0, the default: every checkout
    pings, as the engine's other users do).
    """

    def __init__(self, engine: Engine, *, ping_after_idle_s: float = 0.0):
        self.engine = engine
        self.ping_after_idle_s = ping_after_idle_s
        self.dialect = engine.dialect
        self.dbapi_error = engine.dialect.loaded_dbapi.Error
        self.literals = engine.dialect.driver == "pymysql"

    @contextlib.contextmanager
    def begin(self) -> Iterator[DriverConnection]:
        """A transaction on a pooled connection: committed if the block returns, rolled
        back if it raises. A disconnect invalidates the pool's connections (it opens new
        ones); driver errors are raised as ``DBAPIError``."""
        try:
            pooled = checkout(self.engine, ping_after_idle_s=self.ping_after_idle_s)
        except self.dbapi_error as exc:
            raise self.translated(exc, None, None, None) from exc
        conn = None
        try:
            conn = DriverConnection(self, pooled)
            yield conn
            try:
                pooled.commit()
            except self.dbapi_error as exc:
                raise self.translated(exc, "COMMIT", None, conn) from exc
        except BaseException as exc:
            if not (isinstance(exc, DBAPIError) and exc.connection_invalidated):
                with contextlib.suppress(self.dbapi_error):
                    pooled.rollback()
            raise
        finally:
            if conn is not None:
                conn.close()
            pooled.close()

    def translated(self, exc: Exception, sql: str | None, parameters,
                   conn: DriverConnection | None) -> DBAPIError:
        """``exc`` as SQLAlchemy raises it. On a disconnect the connection is invalidated,
        and so is every other one the pool opened before it, as a ``Connection`` does (a
        server that went away closed them all): each is replaced at its next checkout."""
        pooled = conn._pooled if conn is not None else None
        disconnect = self.dialect.is_disconnect(
            exc, pooled.dbapi_connection if pooled is not None else None,
            conn._cursor if conn is not None else None)
        if disconnect and pooled is not None:
            # What Connection._handle_dbapi_exception does (the pool's own API for it).
            self.engine.pool._invalidate(pooled, exc)
        return DBAPIError.instance(sql, parameters, exc, self.dbapi_error,
                                   hide_parameters=self.engine.hide_parameters,
                                   connection_invalidated=disconnect, dialect=self.dialect,
                                   ismulti=isinstance(parameters, list))
