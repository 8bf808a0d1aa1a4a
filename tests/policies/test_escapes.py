"""Every way to reach the unfiltered table must fail or come back filtered.

Each case runs the same statement twice against the real sandbox: without the policy
it sees other regions' rows (so the test would fail without the enforcement), under
it either only the viewer's region or a refusal.
"""
from __future__ import annotations

import pytest

from engine.policies import PolicedQueries, applied_for
from tests.policies.conftest import EU_POLICY, viewer

# Each returns region values in its first column when it reaches rows.
ESCAPES = [
    "SELECT region FROM sales",
    'SELECT region FROM "SALES"',
    'SELECT region FROM "main"."sales"',
    "SELECT region FROM main.sales",
    "FROM sales SELECT region",
    "SELECT region FROM sales UNION ALL SELECT region FROM main.sales",
    "SELECT r.code FROM regions r WHERE EXISTS (SELECT 1 FROM sales s WHERE s.region = r.code)",
    "SELECT (SELECT max(s.region) FROM sales s WHERE s.sale_id = x.sale_id) FROM sales x",
    "WITH t AS (SELECT * FROM sales) SELECT region FROM t",
    "SELECT region FROM sales WHERE region <> 'EU' OR 1=1",
    "SELECT region FROM (SELECT * FROM sales) sub",
    "SELECT s.region FROM regions r JOIN sales s ON s.region = r.code",
]
REFUSED = [
    "SELECT region FROM all_sales",
    "WITH sales AS (SELECT * FROM main.sales) SELECT region FROM sales",
    "SELECT table_name FROM information_schema.tables",
    "SELECT table_name, estimated_size FROM duckdb_tables()",
    'SELECT * FROM "duckdb_tables"()',
    "SELECT region FROM sales.main.sales",
    "SELECT region FROM memory.main.sales",
    "SUMMARIZE sales",
    "DESCRIBE sales",
    "SELECT * FROM query_table('sales')",
    "SELECT region FROM pg_catalog.pg_tables, sales",
]


def _policed(sandbox, **attributes):
    return PolicedQueries(sandbox, applied_for(EU_POLICY, [], viewer(**attributes)),
                          views=["all_sales"])


@pytest.mark.parametrize("sql", ESCAPES)
def test_escape_attempts_see_only_the_viewers_region(sales_sandbox, sql):
    bare = sales_sandbox.run(sql)
    assert not bare.is_error and {r[0] for r in bare.rows} > {"EU"}  # rows to hide exist
    result = _policed(sales_sandbox, region="EU").run(sql)
    assert not result.is_error, result.error
    assert result.rows and {r[0] for r in result.rows} == {"EU"}


@pytest.mark.parametrize("sql", REFUSED)
def test_reaching_around_the_policy_is_refused(sales_sandbox, sql):
    result = _policed(sales_sandbox, region="EU").run(sql)
    assert result.is_error
    assert "US" not in (result.error or "") and result.rows == []


def test_column_catalogs_stay_readable_without_row_counts(sales_sandbox):
    handle = _policed(sales_sandbox, region="EU")
    for sql in ("SELECT column_name FROM duckdb_columns() WHERE table_name = 'sales'",
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'sales'"):
        result = handle.run(sql)
        assert not result.is_error, result.error
        assert {"region", "amount"} <= {r[0] for r in result.rows}


def test_attribute_crafted_as_sql_is_a_literal(sales_sandbox):
    result = _policed(sales_sandbox, region="' OR 1=1 --").run("SELECT count(*) FROM sales")
    assert not result.is_error and result.rows == [(0,)]
    result = _policed(sales_sandbox, region="EU' OR '1'='1").run("SELECT count(*) FROM sales")
    assert result.rows == [(0,)]


def test_a_missing_attribute_denies_every_row(sales_sandbox):
    result = _policed(sales_sandbox).run("SELECT count(*) FROM sales")
    assert result.rows == [(0,)]


def test_a_list_attribute_becomes_in(sales_sandbox):
    result = _policed(sales_sandbox, region=["EU", "US"]).run(
        "SELECT DISTINCT region FROM sales ORDER BY 1")
    assert result.rows == [("EU",), ("US",)]
    assert _policed(sales_sandbox, region=[]).run("SELECT count(*) FROM sales").rows == [(0,)]


def test_summary_is_computed_over_the_allowed_rows_only(sales_sandbox):
    result = _policed(sales_sandbox, region="EU").run("SELECT sale_id, amount FROM sales")
    assert result.total_rows == 100
    assert result.summary is not None
    by_name = {s.column: s for s in result.summary}
    assert by_name["amount"].total == sum(i * 10 for i in range(0, 300, 3))
    assert by_name["amount"].count == 100


def test_an_error_message_quotes_no_hidden_value(sales_sandbox):
    result = _policed(sales_sandbox, region="EU").run(
        "SELECT CAST(region AS INTEGER) FROM sales")
    assert result.is_error
    assert "US" not in result.error and "APAC" not in result.error


def test_admins_are_exempt_unless_the_policy_says_otherwise(sales_sandbox):
    from shared.principal import Principal

    admin = Principal(tenant_id=1, user_id=1, role="admin", attributes={"region": "EU"})
    open_ = PolicedQueries(sales_sandbox, applied_for(EU_POLICY, [], admin))
    assert open_.run("SELECT count(*) FROM sales").rows == [(300,)]
    strict = [{**EU_POLICY[0], "exempt_admins": False}]
    held = PolicedQueries(sales_sandbox, applied_for(strict, [], admin))
    assert held.run("SELECT count(*) FROM sales").rows == [(100,)]


def test_group_policies_bind_only_their_groups(sales_sandbox):
    from shared.principal import Principal

    policy = [{**EU_POLICY[0], "groups": ["sales-eu"]}]
    outsider = Principal(tenant_id=1, user_id=2, role="viewer", groups=("finance",),
                         attributes={"region": "EU"})
    member = Principal(tenant_id=1, user_id=3, role="viewer", groups=("sales-eu",),
                       attributes={"region": "EU"})
    assert applied_for(policy, [], outsider).empty
    assert PolicedQueries(sales_sandbox, applied_for(policy, [], member)).run(
        "SELECT count(*) FROM sales").rows == [(100,)]


def test_masks_hide_values_everywhere_they_are_read(sales_sandbox):
    masks = [{"table": "sales", "column": "customer", "mask": "redact"},
             {"table": "sales", "column": "amount", "mask": "null"},
             {"table": "sales", "column": "sale_id", "mask": "hash"}]
    handle = PolicedQueries(sales_sandbox, applied_for([], masks, viewer()))
    result = handle.run("SELECT customer, amount, sale_id FROM sales s "
                        "UNION ALL SELECT customer, amount, sale_id FROM main.sales")
    assert {r[0] for r in result.rows} == {"[redacted]"}
    assert {r[1] for r in result.rows} == {None}
    assert all(len(r[2]) == 32 for r in result.rows)
    where = handle.run("SELECT count(*) FROM sales WHERE customer = 'cust1'")
    assert where.rows == [(0,)]
