"""A real DuckDB dataset with regions, a view over it, and a sandbox on it."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from engine.sql.sandbox import SqlSandbox
from shared.principal import Principal

REGIONS = ("EU", "US", "APAC")


def make_sales_db(path: Path) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute("""
            CREATE TABLE sales AS
            SELECT i AS sale_id, ['EU', 'US', 'APAC'][1 + i % 3] AS region,
                   CAST(i * 10 AS DOUBLE) AS amount, 'cust' || i AS customer
            FROM range(300) t(i)""")
        con.execute("CREATE TABLE regions AS SELECT * FROM (VALUES ('EU', 'Europe'), "
                    "('US', 'United States'), ('APAC', 'Asia Pacific')) v(code, name)")
        con.execute("CREATE VIEW all_sales AS SELECT * FROM sales")
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def sales_db(tmp_path_factory) -> Path:
    return make_sales_db(tmp_path_factory.mktemp("policies") / "sales.duckdb")


@pytest.fixture(scope="module")
def sales_sandbox(sales_db):
    sandbox = SqlSandbox(sales_db, timeout_s=10.0, processes=1)
    yield sandbox
    sandbox.close()


def viewer(**attributes) -> Principal:
    return Principal(tenant_id=1, user_id=7, external_id="u7", role="viewer",
                     attributes=attributes)


EU_POLICY = [{"table": "sales", "filter": "region = {user.region}"}]
