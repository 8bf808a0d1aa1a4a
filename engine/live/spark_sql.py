"""Spark SQL for a live Spark dataset: the statement check, the wrapper the engine runs,
Spark types as the prompt's DuckDB names, and the engine-side summary's expressions.

- ``check_spark_statement``: ``statement_check.check_statement`` in sqlglot's ``spark``
  dialect (one read-only query; commands such as ``ADD JAR``, ``CACHE``, ``REFRESH``,
  ``MSCK``, ``SET``, ``CREATE``, ``INSERT`` are not queries and are refused) with
  Spark's refused functions (``reflect``, ``java_method``... call Java), and two things
  only Spark has: ``SELECT TRANSFORM(...) USING 'script'`` (runs a program on the
  cluster) and a table named by a file path (``parquet.`/path```, reads any file the
  cluster can).
- ``wrapped``: the text the engine hands Spark, ``SELECT * FROM (<statement>) AS q``.
  In Spark Connect ``spark.sql(text)`` runs a *command* at once on the server (its
  reply is the command's output) and only leaves a *query* lazy; inside a FROM clause
  Spark's own parser admits nothing but a query, so whatever reaches the server can
  only be analysed and planned, never executed as a command (the engine's layer).
- ``tables_read``: the tables a statement reads. A Spark session keeps a table's file
  listing once it has read it, so rows another session added stay unseen; the engine
  refreshes these tables in its session before each query (a live dataset is live).
- ``duckdb_type``: a Spark ``DataType`` as the DuckDB-style name the prompt and the
  summary use (``BIGINT``, ``DECIMAL(10,2)``, ``VARCHAR``, ``TIMESTAMPTZ``...).
- ``summary_exprs``: Spark SQL expressions computing what ``result_sql.summary_sql``
  computes in DuckDB (so ``read_summary`` decodes them): integers summed exactly as
  DECIMAL(38,0), text measured through ``try_cast(... AS DOUBLE)``.

Pure: no Spark connection (the type mapping reads pyspark's type classes).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlglot
from sqlglot import exp

from engine.live.statement_check import (
    ALLOWED_HINT,
    RefusedFunctions,
    StatementRefused,
    check_statement,
)

DIALECT = "spark"
TITLE = "Spark"
REFUSED = RefusedFunctions(
    names=frozenset({
        # Java by reflection, on the cluster.
        "reflect", "java_method", "try_reflect",
        # Files, secrets and the network (Spark and Databricks built-ins).
        "read_files", "input_file_name", "input_file_block_start", "input_file_block_length",
        "secret", "try_secret", "http_request", "ai_query",
        # Streams and sources that are not tables.
        "read_kafka", "read_kinesis", "read_pubsub", "read_pulsar", "read_statestore",
        "cloud_files_state", "event_log",
    }),
    prefixes=("ai_",),
)
# Data source short names Spark reads a path with (``parquet.`/data/x```).
_FILE_SOURCES = frozenset({"parquet", "json", "csv", "orc", "text", "avro", "delta",
                           "binaryfile", "xml", "hive", "jdbc", "image", "libsvm"})
WRAPPED_ALIAS = "_sunrise_q"


def check_spark_statement(sql: object) -> str:
    """The one read-only Spark SQL query in ``sql``, cleaned (as ``check_statement``), or
    raise ``StatementRefused`` naming why."""
    cleaned = check_statement(sql, DIALECT, REFUSED, TITLE)
    tree = sqlglot.parse_one(cleaned, read=DIALECT)
    for node in tree.walk():
        if isinstance(node, exp.QueryTransform):
            raise StatementRefused("SELECT TRANSFORM ... USING (an external script) is not "
                                   f"allowed; {ALLOWED_HINT}")
        if isinstance(node, exp.Table) and node.args.get("db") is not None \
                and node.db.lower() in _FILE_SOURCES:
            raise StatementRefused(f"reading files directly ({node.db}.`...`) is not allowed; "
                                   "query the dataset's tables")
    return cleaned


def tables_read(statement: str) -> list[str]:
    """The catalog tables a checked statement names (``schema.table`` as written; CTE
    names left out), for the engine to refresh before running it."""
    tree = sqlglot.parse_one(statement, read=DIALECT)
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    names = []
    for table in tree.find_all(exp.Table):
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        names.append(".".join(part.name for part in table.parts))
    return list(dict.fromkeys(names))


def wrapped(statement: str) -> str:
    """The text sent to Spark: the checked statement as a FROM subquery (see the module
    doc). The newlines keep a trailing line comment from eating the ``)``."""
    return f"SELECT * FROM (\n{statement}\n) AS {WRAPPED_ALIAS}"


def duckdb_type(data_type: Any) -> str:
    """The DuckDB-style name of a pyspark ``DataType``; VARCHAR for one not known."""
    from pyspark.sql import types as t

    simple = {t.BooleanType: "BOOLEAN", t.ByteType: "TINYINT", t.ShortType: "SMALLINT",
              t.IntegerType: "INTEGER", t.LongType: "BIGINT", t.FloatType: "FLOAT",
              t.DoubleType: "DOUBLE", t.StringType: "VARCHAR", t.CharType: "VARCHAR",
              t.VarcharType: "VARCHAR", t.BinaryType: "BLOB", t.DateType: "DATE",
              t.TimestampType: "TIMESTAMPTZ", t.TimestampNTZType: "TIMESTAMP",
              t.DayTimeIntervalType: "INTERVAL", t.YearMonthIntervalType: "INTERVAL",
              t.NullType: "VARCHAR"}
    for kind, name in simple.items():
        if isinstance(data_type, kind):
            return name
    if isinstance(data_type, t.DecimalType):
        return f"DECIMAL({data_type.precision},{data_type.scale})"
    if isinstance(data_type, t.ArrayType):
        return f"{duckdb_type(data_type.elementType)}[]"
    if isinstance(data_type, t.MapType):
        return f"MAP({duckdb_type(data_type.keyType)}, {duckdb_type(data_type.valueType)})"
    if isinstance(data_type, t.StructType):
        fields = ", ".join(f'"{f.name}" {duckdb_type(f.dataType)}' for f in data_type.fields)
        return f"STRUCT({fields})"
    return "VARCHAR"


def quote(name: str) -> str:
    """A Spark identifier (backticks)."""
    return "`" + name.replace("`", "``") + "`"


def quote_table(name: str) -> str:
    """``catalog.schema.table`` / ``schema.table`` / ``table`` with each part quoted."""
    return ".".join(quote(part) for part in name.split("."))


def summary_exprs(candidates: Sequence[tuple[int, str, str]]) -> list[str]:
    """``count(*)``, then count, sum, min, max and average of each candidate column
    ``c<index>``, as ``result_sql``'s DuckDB summary computes them."""
    select = ["count(1)"]
    for index, _name, base in candidates:
        col = f"c{index}"
        if base == "VARCHAR":
            expr = f"try_cast({col} AS DOUBLE)"
            total, average = f"sum({expr})", f"avg({expr})"
        elif base in ("FLOAT", "DOUBLE"):
            expr = col
            total, average = f"sum({expr})", f"avg({expr})"
        elif base == "DECIMAL":
            expr = col
            total, average = f"sum({expr})", f"CAST(avg({expr}) AS DOUBLE)"
        else:  # integers: DuckDB sums them exactly (HUGEINT)
            expr = col
            total, average = f"sum(CAST({expr} AS DECIMAL(38,0)))", f"avg({expr})"
        select += [f"count({expr})", total, f"min({expr})", f"max({expr})", average]
    return select


def summary_row(row: Sequence[Any], candidates: Sequence[tuple[int, str, str]]) -> list[Any]:
    """The engine's summary row with integer sums as ints (DuckDB's HUGEINT reads so)."""
    values = list(row)
    for position, (_index, _name, base) in enumerate(candidates):
        at = 2 + 5 * position
        if base not in ("VARCHAR", "FLOAT", "DOUBLE", "DECIMAL") and values[at] is not None:
            values[at] = int(values[at])
    return values
