"""A hostile tenant's database URLs, as the worker's import meets them (issue 31 items 1, 2,
4, 7, 12): the app's database and Redis are refused even with 127.0.0.1 listed; URL
parameters never reach a driver; a rogue server gets no file; a silent one ends in a
timeout; every network failure reads the same; a short password masks no driver text."""
from __future__ import annotations

import dataclasses
import socket

import pytest
from sqlalchemy.engine import make_url

from engine.datasets import DatabaseSource
from engine.datasets.importers.live_connection import unreachable_message
from shared.errors import SourceRefused, SourceUnreachable
from shared.outbound import endpoint_of
from tests.utils.hostile_servers import garbage_server, rogue_mysql, silent_server


def _app_db(base_settings) -> tuple[str, int, str]:
    host, port = endpoint_of(base_settings.database_url)
    return host, port, make_url(base_settings.database_url).database


def test_the_app_database_is_refused_even_with_its_host_listed(base_settings, build):
    host, port, name = _app_db(base_settings)
    for url in (f"mysql://root@{host}:{port}/{name}", f"mariadb://root@localhost:{port}/{name}",
                f"mysql+pymysql://root@127.0.0.2:{port}/{name}"):
        with pytest.raises(SourceRefused, match="the app's database"):
            build(DatabaseSource(url, ("api_keys",)))


def test_the_app_database_is_refused_through_another_database_on_its_server(
        base_settings, build, maria_server):
    _, _, name = _app_db(base_settings)
    with pytest.raises(SourceRefused, match="the app's database"):
        build(DatabaseSource(maria_server.url, (f"{name}.api_keys", "regions")))


def test_redis_is_refused_even_listed_instead_of_hanging(base_settings, build):
    host, port = endpoint_of(base_settings.redis_url)
    with pytest.raises(SourceRefused, match="the app's Redis"):
        build(DatabaseSource(f"mysql://x@{host}:{port}/x"))


def test_a_name_resolving_to_loopback_is_refused_unless_listed(build, outbound, pg_server):
    unlisted = dataclasses.replace(outbound, allow=())
    url = pg_server.url.replace("127.0.0.1", "localhost")
    with pytest.raises(SourceRefused, match="loopback address"):
        build(DatabaseSource(url, ("regions",), unlisted))
    assert build(DatabaseSource(url, ("regions",))).tables  # 127.0.0.1 listed


@pytest.mark.parametrize("query", [
    "init_command=INSERT%20INTO%20api_keys%20VALUES%20(1)", "local_infile=1",
    "unix_socket=/run/mysqld/mysqld.sock", "read_default_file=/etc/mysql/my.cnf",
    "ssl_ca=/proc/self/environ", "ssl_key=/etc/ssl/private/key.pem", "charset=utf8mb4"])
def test_mysql_url_parameters_never_reach_the_driver(maria_server, build, query):
    with pytest.raises(SourceRefused) as caught:
        build(DatabaseSource(f"{maria_server.url}?{query}"))
    name = query.split("=")[0]
    assert caught.value.extra["parameter"] == name and repr(name) in caught.value.detail


@pytest.mark.parametrize("query", [
    "options=-c%20default_transaction_read_only%3Doff", "service=app", "passfile=/root/.pgpass",
    "host=/var/run/postgresql", "sslrootcert=/proc/self/environ", "sslmode=bogus",
    "hostaddr=10.0.0.1"])
def test_postgres_url_parameters_never_reach_the_driver(pg_server, build, query):
    with pytest.raises(SourceRefused, match=query.split("=")[0]):
        build(DatabaseSource(f"{pg_server.url}?{query}"))


def test_tls_parameters_are_taken(pg_server, build):
    built = build(DatabaseSource(f"{pg_server.url}?sslmode=prefer", ("regions",)))
    assert [t.name for t in built.tables] == ["regions"]


@pytest.mark.parametrize("url", ["mysql://root@/shop", "postgresql:///shop",
                                 "mysql://root@a,b/shop", "mysql://root@127.0.0.1:3306/"])
def test_a_url_without_one_host_and_a_database_is_refused(build, url):
    with pytest.raises(SourceRefused):
        build(DatabaseSource(url))


def test_a_rogue_server_asking_for_a_local_file_gets_nothing(build, tmp_path):
    secret = tmp_path / "environ"
    secret.write_text("ANTHROPIC_API_KEY=sk-ant-stolen\n")
    with rogue_mysql(str(secret)) as (port, log):
        with pytest.raises(SourceRefused, match="local_infile"):
            build(DatabaseSource(f"mysql://x@127.0.0.1:{port}/db?local_infile=1"))
        assert log.connections == 0
        with pytest.raises(SourceUnreachable):  # local_infile is off: the driver refuses
            build(DatabaseSource(f"mysql://x@127.0.0.1:{port}/db"))
    assert log.queries, "the rogue server was reached and asked for the file"
    assert log.file_bytes == b""


@pytest.mark.slow  # waits out the drivers' timeouts
@pytest.mark.timeout(60)
@pytest.mark.parametrize("scheme", ["mysql", "postgresql"])
def test_a_server_that_accepts_and_stays_silent_times_out(build, scheme):
    with silent_server() as port, pytest.raises(SourceUnreachable) as caught:
        build(DatabaseSource(f"{scheme}://x@127.0.0.1:{port}/db"))
    assert "in time" in caught.value.detail


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # waits out the drivers' timeouts
@pytest.mark.timeout(60)
@pytest.mark.parametrize("scheme", ["mysql", "postgresql"])
def test_every_network_failure_reads_the_same(build, scheme):
    details = []
    with silent_server() as silent, garbage_server() as garbage:
        for port in (_closed_port(), silent, garbage):
            source = DatabaseSource(f"{scheme}://x:y@127.0.0.1:{port}/db")
            with pytest.raises(SourceUnreachable) as caught:
                build(source)
            details.append(caught.value.detail.replace(str(port), "PORT"))
    assert len(set(details)) == 1, details
    assert details[0] == unreachable_message(f"{scheme}://x:***@127.0.0.1:PORT/db")


def test_a_short_password_masks_the_url_field_only(build):
    # The password "y" once turned the driver's "MySQL" into "M***SQL".
    with pytest.raises(SourceUnreachable) as caught:
        build(DatabaseSource(f"mysql://x:y@127.0.0.1:{_closed_port()}/db"))
    assert caught.value.detail.count("***") == 1 and "x:***@" in caught.value.detail


def test_the_worker_applies_the_policy_of_its_settings_to_a_stored_url(base_settings, build):
    from shared.sealed import seal
    from worker.datasets.import_run import DatasetImporter

    host, port, name = _app_db(base_settings)
    stored = seal(base_settings.secret_keys, f"mysql://root@{host}:{port}/{name}")
    (source,) = DatasetImporter(base_settings, None).sources_of(
        stored, [{"url": "masked", "tables": ["api_keys"]}])
    assert source.outbound is not None
    with pytest.raises(SourceRefused, match="the app's database"):
        build(source)
