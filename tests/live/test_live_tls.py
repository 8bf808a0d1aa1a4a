"""A live MariaDB/MySQL source reached over TLS: its engine reuses its connections, as
it does in plain text. A MariaDB of its own with a TLS certificate runs for this module
(the shared test server has TLS disabled); the worker trusts that certificate through
``SSL_CERT_FILE``, as an operator's CA bundle would be given."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator

import pymysql
import pytest

from tests.utils.waiting import wait_until


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(sock: str) -> bool:
    try:
        pymysql.connect(unix_socket=sock, user="root").close()
        return True
    except pymysql.err.MySQLError:
        return False


@pytest.fixture(scope="module")
def tls_mariadb(tmp_path_factory) -> Iterator[tuple[int, str]]:
    """``(port, certificate file)`` of a MariaDB speaking TLS, with a reader ``ro``
    (password ``pw``) on database ``d``."""
    base = tmp_path_factory.mktemp("tls-mariadb")
    cert, key, data, sock = (str(base / name) for name in ("cert.pem", "key.pem", "data",
                                                             "s.sock"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True, timeout=120)
    port = _free_port()
    server = subprocess.Popen(
        [shutil.which("mariadbd") or "mariadbd", "--no-defaults",
         *(["--user=root"] if os.geteuid() == 0 else []), f"--datadir={data}",
         f"--port={port}", "--bind-address=127.0.0.1", f"--socket={sock}",
         "--skip-name-resolve", f"--ssl-cert={cert}", f"--ssl-key={key}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _answers(sock), timeout=60, interval=0.2)
        admin = pymysql.connect(unix_socket=sock, user="root", autocommit=True)
        with admin.cursor() as cursor:
            for statement in ("CREATE DATABASE d", "CREATE TABLE d.t (n INT)",
                              "INSERT INTO d.t VALUES (1), (2)",
                              "CREATE USER 'ro'@'%' IDENTIFIED BY 'pw'",
                              "GRANT SELECT ON d.* TO 'ro'@'%'"):
                cursor.execute(statement)
        admin.close()
        yield port, cert
    finally:
        server.terminate()
        server.wait(60)


def test_a_tls_connection_is_reused_by_the_next_query(tls_mariadb, open_live, monkeypatch):
    port, cert = tls_mariadb
    monkeypatch.setenv("SSL_CERT_FILE", cert)
    engine = open_live(f"mariadb://ro:pw@127.0.0.1:{port}/d?ssl_verify_cert=true")

    cipher = engine.run("SELECT VARIABLE_VALUE AS cipher FROM information_schema.SESSION_STATUS "
                        "WHERE VARIABLE_NAME = 'Ssl_cipher'")
    assert not cipher.is_error, cipher.error
    assert cipher.rows and cipher.rows[0][0], "the connection is not TLS"
    for _ in range(3):
        result = engine.run("SELECT sum(n) AS total FROM t")
        assert not result.is_error, result.error
        assert result.rows == [(3,)]
    # One connection served the opening and every query: none was taken for closed.
    assert engine._pool.opened == 1
