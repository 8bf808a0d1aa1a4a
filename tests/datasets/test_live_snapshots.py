"""Snapshots of the real PostgreSQL and MariaDB servers on this machine, in scratch databases.

Each server gets the same table of the types people keep (integers, numerics, text,
dates, timestamps, booleans, NULLs); the test checks the DuckDB types and values that
arrive, the table list, a refresh after a row changes, and that a password is never
shown, in an error, a log line, a progress report or the version's record.
"""
from __future__ import annotations

import datetime as dt
import decimal
import logging
import socket
from urllib.parse import quote

import pytest

from engine.datasets import DatabaseSource
from shared.errors import EmptySource, MissingTables, SourceUnreachable, UnsupportedSource
from tests.datasets.conftest import EXPECTED_TYPES, PASSWORD, ROWS, SCRATCH, column_types, query
from tests.utils import postgres


def test_a_snapshot_maps_types_explicitly_and_keeps_values(server, build):
    built = build(DatabaseSource(server.url, ("measures", "regions")))
    assert [t.name for t in built.tables] == ["measures", "regions"]
    assert column_types(built.path, "measures") == EXPECTED_TYPES
    assert query(built.path, "SELECT * FROM measures ORDER BY id") == ROWS
    assert built.sources == ({"url": DatabaseSource(server.url).display, "kind": "database",
                              "tables": ["measures", "regions"]},)


def test_without_a_table_list_every_table_of_the_default_schema_comes(server, build):
    built = build(DatabaseSource(server.url))
    assert [t.name for t in built.tables] == ["extras", "measures", "regions"]


def test_postgres_schemas_views_and_other_types(pg_server, build):
    built = build(DatabaseSource(pg_server.url, ("sales.orders", "north", "extras")))
    assert [t.name for t in built.tables] == ["extras", "north", "sales_orders"]
    assert column_types(built.path, "sales_orders") == {"id": "BIGINT", "total": "DOUBLE"}
    assert query(built.path, "SELECT max(total) FROM sales_orders") == [(1e30,)]
    assert column_types(built.path, "extras") == {
        "tz": "TIMESTAMP WITH TIME ZONE", "span": "INTERVAL", "doc": "VARCHAR",
        "tags": "VARCHAR", "uid": "VARCHAR", "t": "TIME"}
    ((instant, span, doc, tags, uid, time_of_day),) = query(
        built.path, "SELECT epoch(tz), span, doc, tags, uid, t FROM extras")
    assert instant == dt.datetime(2024, 3, 1, 10, tzinfo=dt.UTC).timestamp()
    assert span == dt.timedelta(days=1, hours=2) and doc == '{"a": 1}' and tags == "[1, 2]"
    assert uid == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" and time_of_day == dt.time(8, 15)


def test_mariadb_specific_types(maria_server, build):
    built = build(DatabaseSource(maria_server.url, ("extras",)))
    assert column_types(built.path, "extras") == {
        "u": "UINTEGER", "y": "SMALLINT", "t": "INTERVAL", "e": "VARCHAR", "j": "VARCHAR",
        "f": "FLOAT", "big": "DOUBLE"}
    assert query(built.path, "SELECT u, y, t, e, j, f, big FROM extras") == [
        (4_000_000_000, 2024, dt.timedelta(hours=100), "y", '{"a": 1}', 1.5, 123.45)]


def test_refresh_after_a_row_changes_builds_version_2_and_keeps_version_1(server, build):
    source = DatabaseSource(server.url, ("measures",))
    v1 = build(source, version=1)
    server.run("UPDATE measures SET price = 99.99 WHERE id = 1")
    try:
        v2 = build(source, version=2)
    finally:
        server.run("UPDATE measures SET price = 12.50 WHERE id = 1")
    assert query(v1.path, "SELECT price FROM measures WHERE id = 1") == [(decimal.Decimal("12.50"),)]
    assert query(v2.path, "SELECT price FROM measures WHERE id = 1") == [(decimal.Decimal("99.99"),)]


def test_a_missing_table_is_named(server, build, data_dir):
    with pytest.raises(MissingTables) as caught:
        build(DatabaseSource(server.url, ("measures", "nope", "ghost.table")))
    assert caught.value.extra["missing"] == ["nope", "ghost.table"]
    assert "nope" in caught.value.detail and "regions" in caught.value.detail  # what exists
    assert not [p for p in data_dir.rglob("*") if p.is_file()]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_an_unreachable_database_never_shows_the_password(scheme, build, caplog):
    url = f"{scheme}://admin:{quote(PASSWORD, safe='')}@127.0.0.1:{_closed_port()}/shop"
    caplog.set_level(logging.DEBUG)
    with pytest.raises(SourceUnreachable) as caught:
        build(DatabaseSource(url))
    error = caught.value
    assert "127.0.0.1" in error.detail and "admin:***@" in error.detail
    _assert_no_secret(str(error), repr(error.extra), caplog.text)


def test_a_wrong_password_is_refused_without_echoing_it(maria_server, build, caplog):
    wrong = maria_server.url.replace(quote(PASSWORD, safe=""), "Wr0ng-secret")
    caplog.set_level(logging.DEBUG)
    with pytest.raises(SourceUnreachable) as caught:
        build(DatabaseSource(wrong))
    assert "refused the user, password or database" in caught.value.detail
    assert "Wr0ng-secret" not in caught.value.detail + caplog.text


def test_a_successful_snapshot_never_shows_the_password(server, build, caplog):
    caplog.set_level(logging.DEBUG)
    progress = []
    source = DatabaseSource(server.url, ("regions",))
    built = build(source, progress=progress)
    _assert_no_secret(repr(source), source.display, repr(built), repr(progress), caplog.text)
    assert "***" in source.display


def test_bad_urls_are_refused_without_echoing_them(build):
    with pytest.raises(UnsupportedSource) as caught:
        DatabaseSource(f"not a url with {PASSWORD}")
    _assert_no_secret(str(caught.value))
    with pytest.raises(UnsupportedSource, match="oracle"):
        build(DatabaseSource(f"oracle://scott:{quote(PASSWORD, safe='')}@db/orcl"))


def test_an_empty_database_is_refused(build):
    name = f"{SCRATCH}_empty"
    url = postgres.create_database(name)
    try:
        with pytest.raises(EmptySource, match="no tables"):
            build(DatabaseSource(url))
    finally:
        postgres.drop_database(name)


def _assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in (PASSWORD, quote(PASSWORD, safe="")):
            assert secret not in text


def test_mysql_zero_dates_become_null_with_a_warning(maria_server, build):
    maria_server.run(
        "SET SESSION sql_mode = ''",
        "CREATE TABLE legacy_dates (id INT, shipped DATE, paid_at DATETIME)",
        "INSERT INTO legacy_dates VALUES (1, '0000-00-00', '0000-00-00 00:00:00'), "
        "(2, '2020-00-15', '2020-01-00 10:00:00'), (3, '2024-01-02', '2024-01-02 03:04:05')")
    try:
        built = build(DatabaseSource(maria_server.url, ("legacy_dates",)))
    finally:
        maria_server.run("DROP TABLE legacy_dates")
    assert column_types(built.path, "legacy_dates") == {
        "id": "INTEGER", "shipped": "DATE", "paid_at": "TIMESTAMP"}
    assert query(built.path, "SELECT * FROM legacy_dates ORDER BY id") == [
        (1, None, None), (2, None, None),
        (3, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5))]
    (table,) = built.tables
    assert table.warnings == (
        "Column shipped: 2 dates no calendar has (such as '0000-00-00', MySQL's legacy zero "
        "date) became NULL.",
        "Column paid_at: 2 dates no calendar has (such as '0000-00-00 00:00:00', MySQL's "
        "legacy zero date) became NULL.")


def test_no_tables_in_public_lists_the_schemas_that_have_some(build):
    name = f"{SCRATCH}_schemas"
    url = postgres.create_database(name)
    try:
        postgres.run_sql("CREATE SCHEMA sales", "CREATE SCHEMA crm", "CREATE SCHEMA empty",
                         "CREATE TABLE sales.orders (id INT)", "CREATE TABLE sales.lines (id INT)",
                         "CREATE TABLE crm.accounts (id INT)", dbname=name)
        with pytest.raises(EmptySource) as caught:
            build(DatabaseSource(url))
    finally:
        postgres.drop_database(name)
    assert caught.value.detail.endswith(
        "has no tables in schema public. Schemas with tables: crm (1 table), sales (2 tables). "
        'Pass `tables` to import them, such as ["crm.accounts"].'), caught.value.detail
