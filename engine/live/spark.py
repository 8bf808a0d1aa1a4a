"""``SparkEngine``: a live dataset on Spark SQL over Spark Connect (``sc://host:port``).

The same public face as ``LiveEngine`` (``name``, ``dialect``, ``server_version``,
``engine_info``, ``writable_privilege``, ``introspect``, ``run``, ``cancel``, ``close``); it speaks
through the thin Connect client (``pyspark-client``, the ``spark`` extra), imported
only when a Spark dataset is opened. One Connect session per engine, shared by the job
threads (the client's operation tags are per thread). The layers of ``run``:

1. ``spark_sql.check_spark_statement``: sqlglot, spark dialect (one query; no command,
   no ``reflect``/``java_method``, no ``TRANSFORM ... USING``, no file-path tables).
2. ``query_slots``: ``max_concurrent_queries`` across the fleet, as for the others.
3. The server only ever receives the statement as a FROM subquery
   (``spark_sql.wrapped``): ``spark.sql`` executes a command eagerly, but Spark's parser
   admits only a query there, so the plan it analyses is a query or nothing.
4. Bounded fetching: ``LIMIT chart_row_limit + 1`` and text/binary cells cut on the
   server, rows read as a stream up to ``result_max_bytes``; the summary of a larger
   result computed by Spark over the whole result, of one fetched whole by DuckDB with
   the sandbox's own SQL.
5. The tables a query reads are refreshed in the engine's session first (Spark keeps
   a table's file listing per session): rows added since are answered.
6. Every operation of a query carries a Spark tag (``addTag``); a watchdog at the
   query's budget and ``cancel(tag)`` call ``interruptTag`` on the server, repeatedly
   until the query has returned, so the job ends on the cluster too.

Spark has no role model a client can read (grants live in Unity Catalog or the
metastore, if anywhere): ``writable_privilege`` returns None and the read-only guarantee
rests on the layers above; give the URL's token read-only access where the platform can.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from engine.datasets.profile import (
    LOW_CARDINALITY,
    TOP_VALUES,
    ColumnProfile,
    TableProfile,
    TopValue,
    json_ready,
)
from engine.datasets.sources import mask_spark_url
from engine.live import spark_sql
from engine.live.live_engine import LiveLimits
from engine.live.query_slots import FleetSlots, LocalSlots, SlotsBusy
from engine.live.result_rows import local_summary, take_rows
from engine.live.statement_check import StatementRefused
from engine.sql.query_result import MAX_CELL_CHARS, MAX_COLUMNS, SHOWN_ROWS, QueryResult
from engine.sql.result_sql import read_summary, summary_candidates
from shared.errors import (
    EmptySource,
    MissingTables,
    SourceRefused,
    SourceUnreachable,
    UnsupportedSource,
)
from shared.outbound import OutboundPolicy, OutboundRefused

logger = logging.getLogger(__name__)

NAME = "spark"
DEFAULT_PORT = 15002
# How often a stopped query's tag is interrupted again until its run returns (an
# interrupt reaches only the operations running at that moment).
INTERRUPT_EVERY_S = 0.5
_BLOB_BYTES = MAX_CELL_CHARS // 2
# Rows taken from the result's stream at a time (its own batches are Arrow's).
_BATCH_ROWS = 1000
_COMPARABLE = ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE",
               "DECIMAL", "VARCHAR", "DATE", "TIMESTAMP", "TIMESTAMPTZ")


@dataclass
class _Running:
    tag: str
    spark_tag: str
    stopped: str | None = None  # "cancelled" or "timeout"
    done: threading.Event = field(default_factory=threading.Event)


class _Stopped(Exception):
    """The query was stopped between two of its operations."""


def open_spark(url: str, *, outbound: OutboundPolicy, limits: LiveLimits, redis: Any = None,
               dataset: str | None = None) -> SparkEngine:
    """The engine of an ``sc://host:port[/;param=value...]`` URL (``engine.live.open_engine``
    gives it its ``sc://`` URLs; its arguments as there). The host is resolved and every
    address checked by the outbound policy before the client connects. Raises
    ``UnsupportedSource`` (not such a URL, or no Connect client installed),
    ``SourceRefused`` (a refused destination) or ``SourceUnreachable``."""
    parts = urlsplit(url)
    display = mask_spark_url(url)
    try:
        host, port = parts.hostname, parts.port or DEFAULT_PORT
    except ValueError:
        host, port = None, None
    if parts.scheme != "sc" or not host:
        raise UnsupportedSource(f"{display} is not a Spark Connect URL (sc://host:port).",
                                source="url")
    try:
        outbound.resolve(host, port)
    except OutboundRefused as exc:
        raise SourceRefused(str(exc), source=display) from None
    try:
        from pyspark.sql.connect.session import SparkSession
    except ImportError:
        raise UnsupportedSource("Spark datasets need the Spark Connect client: install "
                                "sunrise[spark] (pyspark-client).", source="url") from None
    try:
        session = SparkSession.builder.remote(url).create()
        version = session.version
    except Exception as exc:
        logger.info("spark: %s unreachable: %s", display, type(exc).__name__)
        raise SourceUnreachable(f"The Spark Connect server at {display} did not answer.",
                                source=display) from None
    if redis is not None and dataset:
        slots = FleetSlots(redis, dataset, limits.max_concurrent_queries)
    else:
        slots = LocalSlots(limits.max_concurrent_queries)
    return SparkEngine(session, version, display, limits, slots)


class SparkEngine:
    """A live Spark SQL source over Spark Connect (see the module doc). Thread-safe."""

    name = NAME
    dialect = spark_sql.DIALECT
    title = spark_sql.TITLE

    def __init__(self, session: Any, version: str, display: str, limits: LiveLimits,
                 slots) -> None:
        self._spark = session
        self._number = version
        self.display = display
        self.limits = limits
        self._slots = slots
        self._running: dict[str, _Running] = {}
        self._cancelled: dict[str, float] = {}
        self._lock = threading.Lock()

    # -- the public face ------------------------------------------------------------

    def server_version(self) -> str:
        """``"Spark 4.2.1"``: the server's Spark version."""
        return f"Spark {self._number}"

    def engine_info(self) -> dict[str, str]:
        """``{"name": "Spark", "version": "4.2.1", "dialect": "spark"}`` (see
        ``LiveEngine.engine_info``)."""
        return {"name": "Spark", "version": self._number, "dialect": self.dialect}

    def writable_privilege(self, tables: list[str] | None = None) -> str | None:
        """Always None: Spark has no role model a Connect client can inspect (see the
        module doc); the statement check and the query-only plan keep it read-only."""
        return None

    def run(self, sql: str, *, tag: str | None = None, timeout_s: float | None = None,
            label: str = "") -> QueryResult:
        """Check, run and summarise ``sql`` within ``timeout_s`` (default: the limits'),
        the wait for a slot included; never raises for SQL problems."""
        budget = self.limits.timeout_s if timeout_s is None else float(timeout_s)
        started = time.perf_counter()
        deadline = time.monotonic() + budget
        text = sql.strip() if isinstance(sql, str) else repr(sql)
        try:
            cleaned = spark_sql.check_spark_statement(sql)
        except StatementRefused as refused:
            logger.info("%s refused: %s", label or tag, refused.message)
            return QueryResult.failed(text, refused.message, _ms_since(started))
        tag = tag or uuid.uuid4().hex
        try:
            with self._slots.hold(deadline):
                return self._execute(cleaned, tag=tag, budget_s=budget, deadline=deadline,
                                     started=started, label=label)
        except SlotsBusy:
            message = (f"all {self.limits.max_concurrent_queries} query slots of this "
                       f"dataset stayed busy for this query's whole {budget:g} s; try again")
        except Exception as exc:
            logger.warning("%s: the query slots could not be taken: %s", label or tag,
                           type(exc).__name__)
            message = "the dataset's query slots could not be reached; try again"
        return QueryResult.failed(cleaned, message, _ms_since(started))

    def cancel(self, tag: str) -> None:
        """Interrupt the query tagged ``tag`` on the server, from any thread; a tag not
        running yet is remembered, so a query it starts is refused."""
        with self._lock:
            running = self._running.get(tag)
            if running is None:
                self._cancelled[tag] = time.monotonic()
                return
        self._stop(running, "cancelled")

    def introspect(self, tables: list[str] | None = None, *,
                   sample_rows: int = 10_000) -> list[TableProfile]:
        """Schema (the catalog's, through the table's analysed schema) and a profile
        computed by Spark over at most ``sample_rows`` rows of each table, as
        ``engine/live/introspection.py`` does for the others. Raises ``MissingTables``,
        ``EmptySource`` or ``SourceUnreachable``."""
        names = self._table_names(tables)
        return [self._profile(name, int(sample_rows)) for name in names]

    def close(self) -> None:
        """End the Connect session (its server-side state goes with it), asking the
        server once: the client's default policy retries a server that is gone for about
        ten minutes, which held a worker's exit that long. A closed client asks nothing
        more at interpreter exit."""
        with contextlib.suppress(Exception):
            self._spark.client.set_retry_policies([])
        with contextlib.suppress(Exception):
            self._spark.stop()

    # -- running ------------------------------------------------------------------

    def _execute(self, sql: str, *, tag: str, budget_s: float, deadline: float,
                 started: float, label: str) -> QueryResult:
        """Run a checked statement (callers checked it) as a tagged, bounded query."""
        running = _Running(tag, f"sunrise-{uuid.uuid4().hex}")
        with self._lock:
            if self._cancelled.pop(tag, None) is not None:
                return QueryResult.failed(sql, "the query was cancelled", _ms_since(started))
            self._running[tag] = running
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._stop,
                                (running, "timeout"))
        timer.daemon = True
        timer.start()
        self._spark.addTag(running.spark_tag)
        try:
            result = self._fetch(sql, running, started)
        except Exception as exc:
            message = self._failure(exc, running, budget_s)
            logger.info("%s failed: %s", label or tag, message.splitlines()[0])
            result = QueryResult.failed(sql, message, _ms_since(started))
        finally:
            self._spark.removeTag(running.spark_tag)
            timer.cancel()
            running.done.set()
            with self._lock:
                self._running.pop(tag, None)
        logger.info("%s rows=%s ms=%.1f%s", label or tag, result.total_rows, result.ms,
                    " (error)" if result.is_error else "")
        return result

    def _fetch(self, sql: str, running: _Running, started: float) -> QueryResult:
        for table in spark_sql.tables_read(sql):
            # Not found: the query's own error says so, in Spark's words.
            with contextlib.suppress(Exception):
                self._spark.catalog.refreshTable(table)
        frame = self._spark.sql(spark_sql.wrapped(sql))
        self._check_stopped(running)
        fields = frame.schema.fields
        names = [f.name for f in fields]
        types = [spark_sql.duckdb_type(f.dataType) for f in fields]
        positional = frame.toDF(*[f"c{i}" for i in range(len(fields))])
        # Text and binary cells cut on the server, as result_sql cuts them in DuckDB.
        shown = []
        for index, type_name in enumerate(types[:MAX_COLUMNS]):
            width = {"VARCHAR": MAX_CELL_CHARS + 1, "BLOB": _BLOB_BYTES}.get(type_name)
            shown.append(f"substring(c{index}, 1, {width}) AS c{index}" if width
                         else f"c{index}")
        cap = max(SHOWN_ROWS, self.limits.chart_row_limit) + 1
        kept: list[tuple] = []
        size, exhausted = 0, True
        rows = positional.selectExpr(*shown).limit(cap).toLocalIterator()
        try:
            while batch := [tuple(raw) for raw in itertools.islice(rows, _BATCH_ROWS)]:
                size, full = take_rows(batch, kept, size, cap=cap,
                                       max_bytes=self.limits.result_max_bytes)
                if full:
                    exhausted = False
                    break
        finally:
            with contextlib.suppress(Exception):
                rows.close()
        self._check_stopped(running)
        if len(kept) >= cap:
            exhausted = False
        summary = None
        total = len(kept)
        if not exhausted:
            # The rest of the stream stays on the server; nothing of it is needed.
            self._spark.interruptTag(running.spark_tag)
            total, summary = self._engine_summary(positional, names, types)
        elif total > SHOWN_ROWS:
            try:
                total, summary = local_summary(names, types, kept)
            except ValueError as exc:
                logger.info("%s: summary of the fetched rows failed (%s); asking Spark",
                            running.tag, exc)
                total, summary = self._engine_summary(positional, names, types)
        self._check_stopped(running)
        return QueryResult(sql, names[:MAX_COLUMNS], kept[: self.limits.chart_row_limit],
                           total, False, None, _ms_since(started), types[:MAX_COLUMNS],
                           summary, len(names))

    def _engine_summary(self, positional: Any, names: list[str],
                        types: list[str]) -> tuple[int, list]:
        candidates = summary_candidates(names, types)
        row = positional.selectExpr(*spark_sql.summary_exprs(candidates)).collect()[0]
        return read_summary(names, types, spark_sql.summary_row(row, candidates))

    def _check_stopped(self, running: _Running) -> None:
        if running.stopped:
            raise _Stopped()

    def _stop(self, running: _Running, why: str) -> None:
        """Mark ``running`` stopped and interrupt its tag on the server until its run has
        returned (from a helper thread, so ``cancel`` returns at once)."""
        if running.done.is_set():
            return
        running.stopped = running.stopped or why
        logger.info("%s: %s; interrupting on Spark", running.tag, why)

        def interrupt() -> None:
            while not running.done.is_set():
                try:
                    self._spark.interruptTag(running.spark_tag)
                except Exception as exc:
                    logger.warning("%s: interrupting on Spark failed: %s", running.tag,
                                   type(exc).__name__)
                running.done.wait(INTERRUPT_EVERY_S)

        threading.Thread(target=interrupt, name=f"spark-interrupt-{running.tag}",
                         daemon=True).start()

    def _failure(self, exc: Exception, running: _Running, budget_s: float) -> str:
        if running.stopped == "cancelled":
            return "the query was cancelled"
        if running.stopped == "timeout":
            return (f"query exceeded the {budget_s:g} s limit and was cancelled on Spark; "
                    "aggregate or filter more")
        from pyspark.errors import PySparkException

        if isinstance(exc, PySparkException):
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if "UNAVAILABLE" in text or "Connection" in type(exc).__name__:
                return f"the connection to {self.display} was lost during the query; try again"
            return text.replace(spark_sql.WRAPPED_ALIAS, "q")
        logger.exception("%s failed outside Spark", running.tag)
        return f"{type(exc).__name__}: {exc}"

    # -- introspection ----------------------------------------------------------------

    def _table_names(self, tables: list[str] | None) -> list[str]:
        try:
            if not tables:
                names = sorted(t.name for t in self._spark.catalog.listTables()
                               if not t.isTemporary)
                if not names:
                    database = self._spark.catalog.currentDatabase()
                    raise EmptySource(f"{self.display} has no tables in {database}.",
                                      source=self.display)
                return names
            missing = [name for name in tables if not self._spark.catalog.tableExists(name)]
        except ImportError:
            raise
        except EmptySource:
            raise
        except Exception as exc:
            raise SourceUnreachable(f"Reading the catalog of {self.display} failed "
                                    f"({type(exc).__name__}).", source=self.display) from None
        if missing:
            raise MissingTables(f"{self.display} has no table {', '.join(missing)}.",
                                source=self.display, missing=missing)
        return list(dict.fromkeys(tables))

    def _profile(self, name: str, sample_rows: int) -> TableProfile:
        table = self._spark.table(spark_sql.quote_table(name))
        fields = table.schema.fields
        sample = table.limit(sample_rows).toDF(*[f"c{i}" for i in range(len(fields))])
        columns = [(f.name, spark_sql.duckdb_type(f.dataType)) for f in fields]
        parts = ["count(1)"]
        for index, (_column, data_type) in enumerate(columns):
            col = f"c{index}"
            if _comparable(data_type):
                parts += [f"count({col})", f"count(DISTINCT {col})", f"min({col})",
                          f"max({col})"]
            else:
                parts += [f"count({col})", "NULL", "NULL", "NULL"]
        row = sample.selectExpr(*parts).collect()[0]
        sampled = int(row[0])
        profiles = []
        for index, (column, data_type) in enumerate(columns):
            non_null, distinct, low, high = row[1 + 4 * index: 5 + 4 * index]
            top: tuple[TopValue, ...] = ()
            if distinct is not None and 0 < int(distinct) <= LOW_CARDINALITY:
                col = f"c{index}"
                counted = (sample.where(f"{col} IS NOT NULL").groupBy(col).count()
                           .orderBy(["count", col], ascending=[False, True])
                           .limit(TOP_VALUES).collect())
                top = tuple(TopValue(json_ready(value), int(count)) for value, count in counted)
            profiles.append(ColumnProfile(
                column, data_type,
                round(1 - int(non_null) / sampled, 4) if sampled else 0.0,
                int(distinct or 0), json_ready(low), json_ready(high), top))
        return TableProfile(name, sampled, tuple(profiles))


def _comparable(data_type: str) -> bool:
    return data_type.split("(")[0].strip() in _COMPARABLE


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
