"""Prebuilt Core statements run on the pooled connection's own DBAPI cursor.

Why: SQLAlchemy's execution path (a ``Connection`` and its transaction object, an
execution context, the compiled-cache lookup, a ``Result``) costs more CPU per
statement than PyMySQL's own work, about twice as much, and the worker makes nine statements in four transactions per job. Here each statement is
compiled once per dialect and set of parameter names -- the same SQL text Core sends --
its values go through the column types' own bind processors, and it runs on a
connection checked out of the engine's pool, whose recycling and reset on return are
unchanged (its ping before use too, unless the caller takes recently used connections
unpinged: ``shared.db.checkout``).

Errors look as they did through a ``Connection``: a driver error is raised as the
matching ``sqlalchemy.exc.DBAPIError`` subclass, and a disconnect invalidates the
pool's connections and sets ``connection_invalidated``, so the retry policies of
``shared/db_retry.py`` see the same exceptions.

The values are bound by the driver (``cursor.execute`` / ``executemany`` with
parameters), so its own escaping -- and any fix to it -- protects every statement.

Only plain statements are supported: no expanding (``IN``) parameters, no RETURNING,
no server-side or SQL-expression defaults to fetch back.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

from shared.db import checkout

# Statements are module constants, compiled once per parameter-name set: the bound is
# only a guard against a caller building a new statement per call.
COMPILED_STATEMENTS = 256
_NO_VALUES: Mapping[str, Any] = types.MappingProxyType({})


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
    return _Compiled(compiled.string, required, fixed, defaults, processors, positions, row,
                     result_processors)


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

    def execute(self, statement: ClauseElement, parameters: Mapping[str, Any]
                | Sequence[Mapping[str, Any]] = _NO_VALUES) -> DriverResult:
        """Run ``statement`` with one set of values, or with each of a list of them (one
        multi-row INSERT where the driver can); raises ``DBAPIError``."""
        many = isinstance(parameters, list)
        first = parameters[0] if many else parameters
        compiled = _compiled(statement, self._driver.dialect, frozenset(first))
        cursor = self._cursor
        try:
            if many:
                cursor.executemany(compiled.sql, [compiled.parameters(p) for p in parameters])
            else:
                cursor.execute(compiled.sql, compiled.parameters(parameters))
            rowcount = cursor.rowcount
            rows = ([compiled.make_row(values) for values in cursor.fetchall()]
                    if compiled.row is not None else [])
        except self._driver.dbapi_error as exc:
            raise self._driver.translated(exc, compiled.sql, parameters, self) from exc
        return DriverResult(rowcount, rows)

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
            pooled.invalidate(exc)
            # The pool's other connections go too (they are closed, or replaced when
            # they come back), as a ``Connection`` that sees a disconnect does.
            self.engine.dispose()
        return DBAPIError.instance(sql, parameters, exc, self.dbapi_error,
                                   hide_parameters=self.engine.hide_parameters,
                                   connection_invalidated=disconnect, dialect=self.dialect,
                                   ismulti=isinstance(parameters, list))
