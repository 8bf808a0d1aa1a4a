"""Scratch MariaDB databases for benchmarks and test sessions, one per run."""
from __future__ import annotations

import pymysql

MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}


def _run(sql: str) -> None:
    conn = pymysql.connect(**MARIADB, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def create_database(name: str, *, migrate: bool = True) -> str:
    """(Re)create database ``name``, migrated to head unless ``migrate`` is false (a scratch
    source database for import tests); returns its SQLAlchemy URL."""
    from shared.migrate import upgrade

    _run(f"DROP DATABASE IF EXISTS `{name}`")
    _run(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    url = f"mysql+pymysql://root@127.0.0.1:3306/{name}"
    if migrate:
        upgrade(url)
    return url


def run_sql(*statements: str) -> None:
    """Run statements as root, outside any database (users, grants)."""
    for sql in statements:
        _run(sql)


def drop_database(name: str) -> None:
    """Close this process's pooled connections to ``name``, then drop it."""
    from shared.db import engine_for

    engine_for(f"mysql+pymysql://root@127.0.0.1:3306/{name}").dispose()
    _run(f"DROP DATABASE IF EXISTS `{name}`")
