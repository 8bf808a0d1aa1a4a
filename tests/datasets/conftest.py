"""Fixtures for the import engine: a data dir, a way to build a version from files written
on the spot, a read-only look into a built version, and scratch databases on the real
PostgreSQL and MariaDB servers of this machine to snapshot. Everything is real."""
from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest
import sqlalchemy as sa

from bench import scratch_mariadb as mariadb
from engine.datasets import (
    BuiltVersion,
    DatabaseSource,
    FileSource,
    ImportProgress,
    build_version,
)
from shared.outbound import OutboundPolicy
from tests.utils import postgres


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """write(name, text_or_bytes) -> a file in an uploads folder."""
    uploads = tmp_path / "uploads"
    uploads.mkdir()

    def _write(name: str, content: str | bytes) -> Path:
        path = uploads / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    return _write


@pytest.fixture
def outbound(base_settings) -> OutboundPolicy:
    """The test settings' policy: 127.0.0.1 listed, the app database and Redis refused;
    short driver timeouts so a silent server ends a test soon."""
    return dataclasses.replace(OutboundPolicy.from_settings(base_settings),
                               connect_timeout_s=3, read_timeout_s=2)


@pytest.fixture
def build(data_dir: Path, outbound: OutboundPolicy) -> Callable[..., BuiltVersion]:
    """build(*paths_or_sources, version=1, progress=None, **kwargs) -> BuiltVersion.
    A DatabaseSource without a policy gets ``outbound``'s."""

    def _build(*sources, version: int = 1, dataset_id: str = "ds",
               progress: list[ImportProgress] | None = None, **kwargs) -> BuiltVersion:
        items = [FileSource(s) if isinstance(s, Path) else
                 dataclasses.replace(s, outbound=outbound)
                 if isinstance(s, DatabaseSource) and s.outbound is None else s
                 for s in sources]
        return build_version(items, data_dir, dataset_id, version,
                             progress.append if progress is not None else None, **kwargs)

    return _build


def query(path: Path, sql: str) -> list[tuple]:
    """Rows of ``sql`` on a built version, opened read-only for this one query."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def column_types(path: Path, table: str) -> dict[str, str]:
    return dict(query(path, "SELECT column_name, data_type FROM duckdb_columns() "
                            f"WHERE table_name = '{table}' ORDER BY column_index"))


def files_under(folder: Path) -> list[str]:
    """Every file and folder below ``folder``, relative, sorted (hidden ones included)."""
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- live databases to snapshot -------------------------------------------------------

PASSWORD = "p@ss:w/rd%-s3cret"
SCRATCH = f"sunrise_import_{os.getpid()}"

ROWS = [
    (1, 7, 9_000_000_000, decimal.Decimal("12.50"), 1.25, "north", dt.date(2024, 1, 2),
     dt.datetime(2024, 1, 2, 10, 30, 5), True),
    (2, None, None, None, None, None, None, None, None),
    (3, -4, 3, decimal.Decimal("-0.01"), -2.5, "south", dt.date(2023, 12, 31),
     dt.datetime(2023, 12, 31, 23, 59, 59), False),
]
EXPECTED_TYPES = {"id": "INTEGER", "small_n": "SMALLINT", "big_n": "BIGINT",
                  "price": "DECIMAL(10,2)", "ratio": "DOUBLE", "region": "VARCHAR",
                  "day": "DATE", "seen_at": "TIMESTAMP", "active": "BOOLEAN"}


@dataclass
class Server:
    name: str
    url: str  # with PASSWORD in it
    admin: sa.Engine  # to change rows between versions

    def run(self, *statements: str) -> None:
        with self.admin.begin() as conn:
            for sql in statements:
                conn.exec_driver_sql(sql)


def _create_measures(server: Server, extra_ddl: str) -> None:
    server.run(
        "CREATE TABLE measures (id INTEGER PRIMARY KEY, small_n SMALLINT, big_n BIGINT, "
        "price DECIMAL(10, 2), ratio DOUBLE PRECISION, region VARCHAR(20), day DATE, "
        f"seen_at {extra_ddl}, active BOOLEAN)",
        "CREATE TABLE regions (code VARCHAR(10), name TEXT)",
        "INSERT INTO regions VALUES ('north', 'The North'), ('south', 'The South')",
    )
    with server.admin.begin() as conn:
        conn.execute(sa.text("INSERT INTO measures VALUES (:a, :b, :c, :d, :e, :f, :g, :h, :i)"),
                     [dict(zip("abcdefghi", row)) for row in ROWS])


@pytest.fixture(scope="module")
def pg_server() -> Iterator[Server]:
    name = f"{SCRATCH}_pg"
    url = postgres.create_database(name)
    admin = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    server = Server("postgresql", url.replace("postgres@", f"postgres:{quote(PASSWORD, safe='')}@"),
                    admin)
    _create_measures(server, "TIMESTAMP")
    server.run("CREATE SCHEMA sales", "CREATE TABLE sales.orders (id BIGINT, total NUMERIC)",
               "INSERT INTO sales.orders VALUES (1, 10.5), (2, 1e30)",
               "CREATE VIEW north AS SELECT * FROM measures WHERE region = 'north'",
               "CREATE TABLE extras (tz TIMESTAMPTZ, span INTERVAL, doc JSONB, tags INT[], "
               "uid UUID, t TIME)",
               "INSERT INTO extras VALUES ('2024-03-01 12:00:00+02', '1 day 2 hours', "
               "'{\"a\": 1}', '{1,2}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '08:15:00')")
    yield server
    admin.dispose()
    postgres.drop_database(name)


@pytest.fixture(scope="module")
def maria_server() -> Iterator[Server]:
    name = f"{SCRATCH}_maria"
    user = f"imp_{os.getpid()}"
    url = mariadb.create_database(name, migrate=False)
    admin = sa.create_engine(url)
    mariadb.run_sql(f"DROP USER IF EXISTS '{user}'@'%'",
                    f"CREATE USER '{user}'@'%' IDENTIFIED BY '{PASSWORD}'",
                    f"GRANT SELECT, SHOW VIEW ON `{name}`.* TO '{user}'@'%'")
    server = Server("mariadb", f"mariadb://{user}:{quote(PASSWORD, safe='')}@127.0.0.1:3306/{name}",
                    admin)
    _create_measures(server, "DATETIME")
    server.run("CREATE TABLE extras (u INT UNSIGNED, y YEAR, t TIME, e ENUM('x', 'y'), "
               "j JSON, f FLOAT, big DECIMAL(50, 2))",
               "INSERT INTO extras VALUES (4000000000, 2024, '100:00:00', 'y', '{\"a\": 1}', "
               "1.5, 123.45)")
    yield server
    admin.dispose()
    mariadb.run_sql(f"DROP USER IF EXISTS '{user}'@'%'")
    mariadb.drop_database(name)


@pytest.fixture(params=["pg_server", "maria_server"])
def server(request) -> Server:
    return request.getfixturevalue(request.param)
