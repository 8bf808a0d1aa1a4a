"""A filter's placeholders become literals, never SQL text, and never a column: each binding
checked on the generated SQL (DuckDB's and PostgreSQL's)."""
from __future__ import annotations

import pytest

from engine.policies import FilterRefused, PolicyRefused
from engine.policies.filters import bind_filter, parse_filter
from engine.policies.rewrite import TableRule, rewrite


def bound(text: str, dialect: str = "duckdb", **attributes) -> str:
    return bind_filter(parse_filter(text, dialect), attributes).sql(dialect)


@pytest.mark.parametrize("text, attributes, sql", [
    ("region = {user.region}", {"region": "EU"}, "region = 'EU'"),
    ("region = {user.region}", {"region": ["EU", "US"]}, "region IN ('EU', 'US')"),
    ("{user.region} = region", {"region": ["EU"]}, "region IN ('EU')"),
    ("region <> {user.region}", {"region": ["EU"]}, "NOT region IN ('EU')"),
    ("region IN ({user.region}, 'X')", {"region": ["EU", "US"]}, "region IN ('EU', 'US', 'X')"),
    ("level <= {user.level}", {"level": 3}, "level <= 3"),
    ("active = {user.active}", {"active": True}, "active = TRUE"),
    ("region = {user.region}", {"region": "' OR 1=1 --"}, "region = ''' OR 1=1 --'"),
    ("region = {user.region}", {}, "FALSE"),
    ("region = {user.region}", {"region": []}, "FALSE"),
    ("lower(region) = {user.region}", {"region": ["a"]}, "LOWER(region) IN ('a')"),
    ("region LIKE {user.region}", {"region": ["a%"]}, "FALSE"),  # no IN fits a list here
    ("{user.a} = {user.b}", {"a": ["x"], "b": ["x"]}, "FALSE"),
    ("a = {user.x} AND b = {user.y}", {"x": 1}, "FALSE"),
])
def test_placeholders_bind_as_literals(text, attributes, sql):
    assert bound(text, **attributes) == sql


@pytest.mark.parametrize("text, words", [
    ("", "non-empty"),
    ("region = {user.region", "braces"),
    ("region = {users.region}", "braces"),
    ("region = 'EU'; SELECT 1", "';'"),
    ("EXISTS (SELECT 1 FROM other)", "may not hold a query"),
    ("other.region = 'EU'", "qualified"),
    ("region = = 'EU'", "not a SQL condition"),
])
def test_bad_filters_are_refused_saying_why(text, words):
    with pytest.raises(FilterRefused) as refused:
        parse_filter(text)
    assert words in str(refused.value)


def test_statements_sqlglot_could_not_read_are_refused():
    rules = {"t": TableRule((parse_filter("a = 1"),))}
    for sql in ("SELECT 1; SELECT 2", "SET x = 1", "SHOW TABLES", "SELECT * FROM t WHERE",
                "VACUUM"):
        with pytest.raises(PolicyRefused):
            rewrite(sql, rules, [("t", [("a", "INTEGER")])])


def test_postgres_rewrite_qualifies_the_filter_and_keeps_the_alias():
    rules = {"measures": TableRule((bind_filter(parse_filter("region = {user.r}", "postgres"),
                                                {"r": "north"}),), {"amount": "null"})}
    sql = rewrite("SELECT m.region FROM public.measures AS m", rules,
                  [("measures", [("region", "varchar"), ("amount", "numeric")])],
                  dialect="postgres")
    assert sql == ('SELECT m.region FROM (SELECT "region", CAST(NULL AS DECIMAL) AS "amount" '
                   'FROM "public"."measures" WHERE "public"."measures".region = \'north\') AS m')
