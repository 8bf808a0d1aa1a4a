"""Live engines: a dataset's questions answered by running SQL on the source itself.

The interface (outsiders use only these names; ``pyproject.toml``'s import-linter
contracts keep them to it)::

    engine = open_engine(url, outbound=policy, limits=LiveLimits.from_settings(settings),
                         redis=redis_client, dataset="ds_123")
    engine.name              # "postgresql" | "mariadb" | "mysql" | "spark" (the server's kind)
    engine.dialect           # sqlglot's: "postgres" | "mysql"
    engine.server_version()  # "PostgreSQL 15.20", "MariaDB 10.11.19"
    engine.engine_info()     # {"name": "PostgreSQL", "version": "15.20", "dialect": "postgres"}
    engine.writable_privilege(tables)   # e.g. "INSERT on public.orders", or None
    engine.introspect(tables, sample_rows=10_000)  # [TableProfile], profiled on the engine
    engine.run(sql, tag="job-1:q3", timeout_s=8.5, label="query_id=3")  # -> QueryResult
    engine.cancel("job-1:q3")  # from any thread: cancelled on the engine
    engine.close()
    read_statement_problem(sql, engine_info)  # why run() would refuse it, no connection

- An ``sc://host:port`` URL (Spark SQL over Spark Connect) gives a ``SparkEngine``
  (``spark.py``: the same face, Connect tags for cancel; needs the ``spark`` extra).
- ``open_engine`` builds the engine of a SQLAlchemy-style URL (``postgresql://``,
  ``mysql://``, ``mariadb://``; only host, port, user, password, database and the TLS
  settings of ``live_connection.TLS_PARAMETERS``) and opens one connection to learn the
  server's kind and version. Every connection goes through
  ``engine/datasets/importers/live_connection.py`` and so through the outbound policy
  (``shared/outbound.py``), after DNS and on the connected socket: the app's own database
  and Redis are never reached. Raises ``SourceRefused`` (a refused URL or address),
  ``SourceUnreachable`` (no answer, or the credentials refused) or ``UnsupportedSource``
  (not such a URL); messages show the URL with its password masked.
- ``LiveEngine.run`` returns exactly what the DuckDB sandbox returns
  (``engine/sql/query_result.py``): rows cut to ``chart_row_limit``, cells cut, the
  DuckDB-style ``types``, ``total_rows`` and, above ``SHOWN_ROWS`` rows, the ``summary``
  of the whole result (over the fetched rows with the sandbox's own DuckDB SQL when they
  are the whole result, else computed on the engine in the same snapshot). It never
  raises for SQL problems: a refused statement, an engine error, a timeout, a cancel, a
  lost or unreachable source are ``QueryResult.failed`` naming why.
- Safety, in depth (``live_engine.py`` has the order): ``statement_check`` (sqlglot, the
  engine's dialect, per-engine refused functions), a read-only transaction and a
  server-side statement timeout equal to the query's budget (``postgres.py``,
  ``mysql.py``), ``max_concurrent_queries`` per dataset across the fleet
  (``query_slots.py``, Redis leases that expire), bounded fetching, and a watchdog that
  cancels on the engine a query past its budget. Connections are pooled per engine and
  closed when idle (``connection_pool.py``).
- ``introspect`` (``introspection.py``) gives the prompt's schema and a profile computed
  on the engine from a bounded sample; types are the snapshot importer's DuckDB names.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from engine.datasets.importers import live_connection
from engine.datasets.sources import mask_url
from engine.live import mysql, postgres, spark, spark_sql
from engine.live.live_engine import WATCHDOG_GRACE_S, LiveEngine, LiveLimits
from engine.live.query_slots import FleetSlots, LocalSlots, wait_for_releases
from engine.live.statement_check import StatementRefused, check_statement
from shared.errors import UnsupportedSource
from shared.outbound import OutboundPolicy

__all__ = ["LiveEngine", "LiveLimits", "open_engine", "read_statement_problem",
           "wait_for_releases"]

_BACKENDS = {"postgresql": postgres, "mysql": mysql}
# Each dialect's refused functions, as its engine's ``run`` checks them.
_REFUSED = {postgres.DIALECT: postgres.REFUSED, mysql.DIALECT: mysql.REFUSED,
            spark_sql.DIALECT: spark_sql.REFUSED}


def read_statement_problem(sql: str, engine: Mapping[str, str]) -> str | None:
    """Why the live engine ``engine`` describes (its ``engine_info()``, as a live version
    records it) would refuse ``sql`` before running it, or None; checked without a
    connection (a schedule's condition on a live dataset, when it is saved)."""
    dialect = engine.get("dialect") or postgres.DIALECT
    refused = _REFUSED.get(dialect)
    if refused is None:
        return f"the SQL cannot be checked for an engine of dialect {dialect!r}"
    try:
        check_statement(sql, dialect, refused, engine.get("name") or dialect)
    except StatementRefused as exc:
        return exc.message
    return None


def open_engine(url: str, *, outbound: OutboundPolicy, limits: LiveLimits | None = None,
                redis: Any = None, dataset: str | None = None) -> LiveEngine:
    """The live engine of ``url`` (see the module doc). ``limits`` default to
    ``LiveLimits()``; with ``redis`` (a redis-py client) and ``dataset`` (its id) the
    ``max_concurrent_queries`` slots are shared by every process, else counted in this
    one. Opens one connection; raises ``SourceRefused``, ``SourceUnreachable`` or
    ``UnsupportedSource``."""
    limits = limits or LiveLimits()
    if url.startswith("sc://"):
        return spark.open_spark(url, outbound=outbound, limits=limits, redis=redis, dataset=dataset)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise UnsupportedSource("The source URL is not a SQLAlchemy database URL "
                                "(expected e.g. postgresql://user:password@host:5432/dbname).",
                                source="url") from None
    display = mask_url(parsed)
    endpoint = live_connection.parse_endpoint(parsed, display)
    # A read that waits longer than any query may run means the source went silent.
    policy = dataclasses.replace(outbound, read_timeout_s=min(
        outbound.read_timeout_s, limits.timeout_s + 3 * WATCHDOG_GRACE_S + 5))

    def open_connection():
        return live_connection.connect(endpoint, policy, display)

    if redis is not None and dataset:
        slots = FleetSlots(redis, dataset, limits.max_concurrent_queries)
    else:
        slots = LocalSlots(limits.max_concurrent_queries)
    return LiveEngine(_BACKENDS[endpoint.backend], open_connection, display, limits, slots,
                      endpoint.password)
