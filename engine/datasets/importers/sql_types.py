"""How a column of a live PostgreSQL or MariaDB/MySQL table lands in DuckDB.

The reflected SQLAlchemy type decides, explicitly (values arrive as the driver returns
them: psycopg 3 for PostgreSQL, PyMySQL for MariaDB/MySQL):

| source type | DuckDB |
|---|---|
| boolean; MariaDB/MySQL TINYINT(1) (its BOOLEAN: non-zero is true) | BOOLEAN |
| SMALLINT, INTEGER, BIGINT, TINYINT, MEDIUMINT (UNSIGNED → the unsigned type of that width) | same width |
| YEAR | SMALLINT |
| BIT(n) | UBIGINT |
| NUMERIC/DECIMAL(p, s) with p ≤ 38 | DECIMAL(p, s) |
| NUMERIC without precision, or p > 38 | DOUBLE |
| REAL, MySQL FLOAT | FLOAT |
| DOUBLE PRECISION, DOUBLE, other floats | DOUBLE |
| DATE | DATE |
| TIMESTAMP/DATETIME | TIMESTAMP |
| TIMESTAMP WITH TIME ZONE | TIMESTAMPTZ (instants kept exactly) |
| PostgreSQL TIME | TIME |
| MySQL TIME (a duration, up to 838 hours), INTERVAL | INTERVAL |
| text, VARCHAR, CHAR, ENUM, SET | VARCHAR |
| JSON, JSONB | VARCHAR holding the JSON text |
| UUID | VARCHAR |
| BYTEA, BLOB, BINARY | BLOB |
| anything else (arrays, MONEY, network and geometric types...) | VARCHAR: JSON for arrays, else the driver's text |

MariaDB/MySQL can hold dates no calendar has (``0000-00-00``, ``2020-00-15``: legacy
"no date" values that ``sql_mode=''`` lets in), which PyMySQL returns as text; they
become NULL, counted by the column's ``ZeroDates`` so the importer can warn.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

import pyarrow as pa
import sqlalchemy as sa

from engine.datasets.arrow_copy import ColumnPlan

logger = logging.getLogger(__name__)

_SIGNED = {"TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "MEDIUMINT": "INTEGER",
           "INTEGER": "INTEGER", "INT": "INTEGER", "BIGINT": "BIGINT"}
_ARROW_INT = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INTEGER": pa.int32(),
              "BIGINT": pa.int64(), "UTINYINT": pa.uint8(), "USMALLINT": pa.uint16(),
              "UINTEGER": pa.uint32(), "UBIGINT": pa.uint64()}
_MAX_DECIMAL_PRECISION = 38
_MYSQL = ("mysql", "mariadb")


def plan_column(name: str, sql_type: sa.types.TypeEngine, dialect: str) -> ColumnPlan:
    """The DuckDB column for ``name`` of reflected type ``sql_type`` (see the table above);
    ``dialect`` is SQLAlchemy's dialect name (``postgresql``, ``mysql``, ``mariadb``)."""
    kind = type(sql_type).__name__.upper()
    if isinstance(sql_type, sa.Boolean) or (kind == "TINYINT"
                                            and getattr(sql_type, "display_width", None) == 1):
        return ColumnPlan(name, "BOOLEAN", pa.bool_(), _truth)
    if isinstance(sql_type, sa.Integer):
        return _integer(name, sql_type, kind)
    if kind == "YEAR":
        return ColumnPlan(name, "SMALLINT", pa.int16(), int)
    if kind == "BIT":
        return ColumnPlan(name, "UBIGINT", pa.uint64(), _bits)
    if isinstance(sql_type, sa.Float):
        if kind == "REAL" or (kind == "FLOAT" and dialect in _MYSQL):
            return ColumnPlan(name, "FLOAT", pa.float32(), float)
        return ColumnPlan(name, "DOUBLE", pa.float64(), float)
    if isinstance(sql_type, sa.Numeric):
        precision, scale = sql_type.precision, sql_type.scale or 0
        if precision and precision <= _MAX_DECIMAL_PRECISION:
            return ColumnPlan(name, f"DECIMAL({precision},{scale})", pa.decimal128(precision, scale))
        return ColumnPlan(name, "DOUBLE", pa.float64(), float)
    zero_dates = ZeroDates() if dialect in _MYSQL else None
    if isinstance(sql_type, sa.DateTime):
        if getattr(sql_type, "timezone", False):
            return ColumnPlan(name, "TIMESTAMPTZ", pa.timestamp("us", tz="UTC"))
        return ColumnPlan(name, "TIMESTAMP", pa.timestamp("us"), zero_dates)
    if isinstance(sql_type, sa.Date):
        return ColumnPlan(name, "DATE", pa.date32(), zero_dates)
    if isinstance(sql_type, sa.Time) and dialect not in _MYSQL:
        return ColumnPlan(name, "TIME", pa.time64("us"), _naive_time)
    if isinstance(sql_type, sa.Time) or kind == "INTERVAL" or isinstance(sql_type, sa.Interval):
        return ColumnPlan(name, "INTERVAL", pa.duration("us"))
    if isinstance(sql_type, sa.JSON):
        return ColumnPlan(name, "VARCHAR", pa.string(), _json_text)
    if isinstance(sql_type, sa.Uuid):
        return ColumnPlan(name, "VARCHAR", pa.string(), str)
    if isinstance(sql_type, sa.String):  # also ENUM, SET, TEXT, CHAR
        return ColumnPlan(name, "VARCHAR", pa.string(), _text if kind == "SET" else None)
    if isinstance(sql_type, sa.LargeBinary) or kind in ("BINARY", "VARBINARY"):
        return ColumnPlan(name, "BLOB", pa.binary(), bytes)
    logger.info("column %s: type %s has no DuckDB counterpart; copied as text", name, sql_type)
    return ColumnPlan(name, "VARCHAR", pa.string(), _text)


class ZeroDates:
    """A MySQL date column's conversion: a date the driver could not read (returned as
    its text, such as ``0000-00-00``) becomes None; ``count`` and ``example`` say how many
    and which."""

    def __init__(self) -> None:
        self.count = 0
        self.example: str | None = None

    def __call__(self, value: Any) -> Any:
        if isinstance(value, (str, bytes)):
            self.count += 1
            if self.example is None:
                self.example = value.decode() if isinstance(value, bytes) else value
            return None
        return value


def _integer(name: str, sql_type: sa.types.TypeEngine, kind: str) -> ColumnPlan:
    if isinstance(sql_type, sa.BigInteger):
        base = "BIGINT"
    elif isinstance(sql_type, sa.SmallInteger) and kind != "TINYINT":
        base = "SMALLINT"
    else:
        base = _SIGNED.get(kind, "INTEGER")
    duckdb_type = f"U{base}" if getattr(sql_type, "unsigned", False) else base
    return ColumnPlan(name, duckdb_type, _ARROW_INT[duckdb_type])


def _truth(value: Any) -> bool:
    return bool(value)


def _bits(value: Any) -> int:
    return int.from_bytes(value, "big") if isinstance(value, (bytes, bytearray)) else int(value)


def _naive_time(value: dt.time) -> dt.time:
    return value.replace(tzinfo=None)


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, (set, frozenset)):
        return ",".join(sorted(map(str, value)))
    return str(value)
