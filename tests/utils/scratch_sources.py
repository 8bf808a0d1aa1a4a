"""Scratch databases that play a customer's live source, on this machine's PostgreSQL
(127.0.0.1:5432, user postgres) and MariaDB (127.0.0.1:3306, root).

Each has a role that may only read and a role that may also write (a live dataset must
refuse the latter), both logging in with one password. ``admin_sql`` runs statements in
the database as the admin, to change rows under a live dataset or to watch its queries.
"""
from __future__ import annotations

from urllib.parse import quote

import psycopg
import pymysql

from bench import scratch_mariadb as mariadb
from tests.utils import postgres

PORTS = {"postgresql": 5432, "mariadb": 3306}


def admin_sql(kind: str, database: str, *statements: str) -> list[tuple]:
    """Run ``statements`` with autocommit as the admin in ``database``; the last one's
    rows (none for a statement without a result)."""
    if kind == "postgresql":
        conninfo = postgres.POSTGRES.replace("dbname=postgres", f"dbname={database}")
        with psycopg.connect(conninfo, autocommit=True) as conn:
            rows: list[tuple] = []
            for sql in statements:
                cur = conn.execute(sql)
                rows = cur.fetchall() if cur.description else []
            return rows
    conn = pymysql.connect(**mariadb.MARIADB, database=database, autocommit=True)
    try:
        with conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def source_url(kind: str, user: str, password: str, database: str) -> str:
    """The URL a live dataset reaches ``database`` by as ``user`` (the password quoted)."""
    return f"{kind}://{user}:{quote(password, safe='')}@127.0.0.1:{PORTS[kind]}/{database}"


def create_scratch(kind: str, database: str, reader: str, writer: str, password: str) -> None:
    """(Re)create ``database`` and the login roles ``reader`` and ``writer``.

    On MariaDB both may read the database (SELECT, SHOW VIEW) and ``writer`` may INSERT.
    On PostgreSQL they get no grants here: the caller grants once its tables exist.
    """
    if kind == "postgresql":
        postgres.create_database(database)
        for role in (reader, writer):
            postgres.run_sql(f'DROP ROLE IF EXISTS "{role}"',
                             f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        return
    mariadb.create_database(database, migrate=False)
    statements = []
    for user in (reader, writer):
        statements += [f"DROP USER IF EXISTS '{user}'@'%'",
                       f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'",
                       f"GRANT SELECT, SHOW VIEW ON `{database}`.* TO '{user}'@'%'"]
    mariadb.run_sql(*statements, f"GRANT INSERT ON `{database}`.* TO '{writer}'@'%'")


def drop_scratch(kind: str, database: str, reader: str, writer: str) -> None:
    """Drop what ``create_scratch`` made (PostgreSQL: the database first, as its roles
    cannot be dropped while it grants them anything)."""
    if kind == "postgresql":
        postgres.drop_database(database)
        for role in (reader, writer):
            postgres.run_sql(f'DROP ROLE IF EXISTS "{role}"')
        return
    mariadb.run_sql(*(f"DROP USER IF EXISTS '{u}'@'%'" for u in (reader, writer)))
    mariadb.drop_database(database)
