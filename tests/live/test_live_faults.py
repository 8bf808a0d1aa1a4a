"""Faults of a live source: unreachable, a wrong password, a table gone since it was
introspected, the source going away mid-query or while a connection idles. Each is a
clear message, nothing hangs, and the password is never shown."""
from __future__ import annotations

import logging
import socket
import threading
import time
from urllib.parse import quote

import pytest

from engine.live import open_engine
from shared.errors import SourceUnreachable
from tests.live.conftest import PASSWORD
from tests.utils.tcp_proxy import TcpProxy


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("scheme", ["postgresql", "mariadb"])
def test_an_unreachable_source_is_said_plainly(scheme, outbound, caplog):
    caplog.set_level(logging.DEBUG)
    started = time.monotonic()
    with pytest.raises(SourceUnreachable) as caught:
        open_engine(f"{scheme}://admin:{quote(PASSWORD, safe='')}@127.0.0.1:{_closed_port()}/shop",
                    outbound=outbound)
    assert time.monotonic() - started < 5
    assert "no PostgreSQL or MySQL server answered" in caught.value.detail
    assert "admin:***@" in caught.value.detail
    assert PASSWORD not in caught.value.detail + caplog.text
    assert quote(PASSWORD, safe="") not in caught.value.detail + caplog.text


def test_a_wrong_password_is_refused_without_echoing_it(maria_source, outbound, caplog):
    # (This machine's PostgreSQL trusts 127.0.0.1: any password passes there.)
    caplog.set_level(logging.DEBUG)
    wrong = maria_source.reader_url.replace(quote(PASSWORD, safe=""), "Wr0ng-secret")
    with pytest.raises(SourceUnreachable) as caught:
        open_engine(wrong, outbound=outbound)
    assert "refused the user, password or database" in caught.value.detail
    assert "Wr0ng-secret" not in caught.value.detail + caplog.text


@pytest.mark.parametrize("wrong", ["role", "database"])
def test_postgres_refusing_the_role_or_database_is_said_in_its_words(pg_source, outbound,
                                                                     caplog, wrong):
    # Not "no server answered": the server did, and said why (libpq gives no SQLSTATE).
    caplog.set_level(logging.DEBUG)
    url = pg_source.reader_url
    url = (url.replace("//live_ro_", "//nobody_", 1) if wrong == "role"
           else url.rsplit("/", 1)[0] + "/no_such_db_x")
    with pytest.raises(SourceUnreachable) as caught:
        open_engine(url, outbound=outbound)
    detail = caught.value.detail
    assert "PostgreSQL refused the connection" in detail and "does not exist" in detail, detail
    assert "answered there in time" not in detail
    assert quote(PASSWORD, safe="") not in detail + caplog.text and PASSWORD not in detail


def test_a_table_that_disappeared_is_named(source, engine):
    source.admin_sql("CREATE TABLE ephemeral (n INTEGER)", "INSERT INTO ephemeral VALUES (1)")
    if source.kind == "postgresql":
        source.admin_sql(f"GRANT SELECT ON ephemeral TO {source.reader_url.split('//')[1].split(':')[0]}")
    assert engine.run("SELECT n FROM ephemeral", tag="t").rows == [(1,)]
    source.admin_sql("DROP TABLE ephemeral")
    result = engine.run("SELECT n FROM ephemeral", tag="t")
    assert result.is_error and "ephemeral" in result.error
    # The connection that met the error serves the next question.
    assert engine.run("SELECT count(*) FROM regions", tag="t").rows == [(3,)]


@pytest.fixture
def proxied(source, open_live):
    port = 5432 if source.kind == "postgresql" else 3306
    with TcpProxy("127.0.0.1", port) as proxy:
        url = source.reader_url.replace(f"127.0.0.1:{port}", f"127.0.0.1:{proxy.port}")
        yield proxy, open_live(url)


def test_the_source_going_down_mid_query_ends_the_query_clearly(source, proxied):
    proxy, engine = proxied
    sleep = "pg_sleep(10)" if source.kind == "postgresql" else "SLEEP(10)"
    results = []
    worker = threading.Thread(target=lambda: results.append(
        engine._execute(f"SELECT {sleep}", tag="t", budget_s=8)))
    worker.start()
    time.sleep(0.5)
    started = time.monotonic()
    proxy.cut()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 3
    assert results[0].is_error and "was lost during the query" in results[0].error
    assert results[0].retryable  # the source's failure, not the statement's
    assert PASSWORD not in results[0].error
    proxy.restore()
    assert engine.run("SELECT count(*) FROM regions", tag="t").rows == [(3,)]


def test_a_pooled_connection_lost_while_idle_is_replaced(source, proxied):
    proxy, engine = proxied
    assert engine.run("SELECT count(*) FROM regions", tag="t").rows == [(3,)]
    proxy.cut()
    proxy.restore()
    assert engine.run("SELECT count(*) FROM regions", tag="t").rows == [(3,)]


def test_a_source_down_when_asked_is_a_failed_result(source, proxied):
    proxy, engine = proxied
    proxy.cut()
    engine._pool.close_idle(0)
    started = time.monotonic()
    result = engine.run("SELECT count(*) FROM regions", tag="t")
    assert result.is_error and time.monotonic() - started < 5
    assert "Could not connect" in result.error and PASSWORD not in result.error


def test_a_name_resolving_to_many_silent_addresses_is_tried_a_bounded_number_of_times(
        outbound, monkeypatch):
    """Each address may take the whole connect timeout; a hostile DNS answer of many
    addresses must not multiply the wait without end."""
    from engine.datasets.importers import live_connection

    many = [f"127.0.0.{n}" for n in range(2, 12)]
    monkeypatch.setattr(type(outbound), "resolve", lambda self, host, port, **kw: many)
    tried = []

    def silent(endpoint, address, policy, display):
        tried.append(address)
        raise OSError("timed out")

    monkeypatch.setattr(live_connection, "_open_postgres", silent)
    with pytest.raises(SourceUnreachable):
        open_engine("postgresql://u:p@db.example:5432/x", outbound=outbound)
    assert tried == many[:live_connection.MAX_ADDRESSES_TRIED]
