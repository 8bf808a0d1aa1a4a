"""Where gold SQL runs, and running it (and Sunrise's SQL) for comparison.

Both the gold query and the query a Sunrise answer relies on run in the same
database, through the worker's own sandbox (read-only, one SELECT, time-limited),
with a row cap far above a chart's so whole results are compared.
:func:`gold_database` is the one place that decides which database that is.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from engine.datasets import version_path
from engine.sql.sandbox import SqlSandbox
from shared.config import Settings
from shared.errors import BadRequest
from sunrise.eval.result_match import ResultSet

ROW_LIMIT = 100_000
_VERSION_FILE = re.compile(r"v(\d+)\.duckdb")
QUERY_TIMEOUT_S = 60.0


def gold_database(settings: Settings, dataset_id: str | None,
                  override: str | None = None) -> Path:
    """The DuckDB file gold SQL runs against: ``override`` when given; for a dataset, its
    newest built version under ``SUNRISE_DATA_DIR`` (``engine/datasets`` layout); else
    the deployment's built-in dataset (the sample unless ``SUNRISE_DUCKDB_PATH`` says
    otherwise). Raises BadRequest for a dataset with no version file here."""
    if override:
        return Path(override)
    if dataset_id is None:
        return Path(settings.duckdb_path)
    try:
        folder = version_path(settings.data_dir, dataset_id, 1).parent
    except ValueError as exc:
        raise BadRequest(f"{dataset_id!r} is not a dataset id.") from exc
    versions = sorted((int(m.group(1)), path) for path in _files(folder)
                      if (m := _VERSION_FILE.fullmatch(path.name)))
    if not versions:
        raise BadRequest(f"No built version of dataset {dataset_id} under {settings.data_dir}; "
                         "pass its DuckDB file with --gold-db PATH.")
    return versions[-1][1]


def _files(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


@dataclass(frozen=True)
class QueryRun:
    result: ResultSet | None
    error: str | None = None
    total_rows: int = 0


class EvalDatabase:
    """One read-only sandbox on the gold database for the whole evaluation."""

    def __init__(self, path: Path, settings: Settings):
        self.path = path
        self.sandbox = SqlSandbox(path, memory_limit=settings.sql_memory_limit,
                                  threads=settings.sql_threads, timeout_s=QUERY_TIMEOUT_S,
                                  chart_row_limit=ROW_LIMIT)

    def run(self, sql: str) -> QueryRun:
        """The whole result of ``sql``, or why there is none (an error, or more rows than
        ``ROW_LIMIT``)."""
        result = self.sandbox.run(sql, label="gold")
        if result.is_error:
            return QueryRun(None, result.error)
        if result.total_rows > len(result.rows):
            return QueryRun(None, f"the result has {result.total_rows:,} rows, more than the "
                            f"{ROW_LIMIT:,} an evaluation compares", result.total_rows)
        return QueryRun(ResultSet.of(result.columns, result.rows), None, result.total_rows)

    def close(self) -> None:
        self.sandbox.close()


def orders_rows(sql: str) -> bool:
    """Whether ``sql`` orders its result: a top-level ORDER BY, as DuckDB's own parser
    reads it (an ORDER BY inside a subquery or a window does not count). False when
    the statement does not parse."""
    with duckdb.connect(":memory:") as con:
        try:
            tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
        except duckdb.Error:
            return False
    if tree.get("error") or not tree.get("statements"):
        return False
    node = tree["statements"][0]["node"]
    return any(m.get("type") == "ORDER_MODIFIER" for m in node.get("modifiers") or [])
