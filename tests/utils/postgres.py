"""Scratch PostgreSQL databases for tests and benchmarks (127.0.0.1:5432, user postgres)."""
from __future__ import annotations

import psycopg

POSTGRES = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"


def run_sql(*statements: str, dbname: str = "postgres") -> None:
    """Run statements with autocommit as user postgres in ``dbname``."""
    conninfo = POSTGRES.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def create_database(name: str) -> str:
    """(Re)create database ``name``; returns its SQLAlchemy URL (no driver named)."""
    run_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    run_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
