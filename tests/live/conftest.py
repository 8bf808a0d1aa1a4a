"""Live sources on the real PostgreSQL and MariaDB servers of this machine: a scratch
database each (unique per session, dropped after), a read-only role and a role that can
write, and engines opened on them through the outbound policy. Nothing is mocked."""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from engine.live import LiveEngine, LiveLimits, open_engine
from shared.config import Settings
from shared.outbound import OutboundPolicy
from tests.utils.redis_lease import leased_database
from tests.utils.scratch_sources import admin_sql, create_scratch, drop_scratch, source_url

PASSWORD = "l1ve:p@ss/w%rd"
SCRATCH = f"sunrise_live_{os.getpid()}"
READER = f"live_ro_{os.getpid()}"
WRITER = f"live_rw_{os.getpid()}"
# The app's own database as the policy knows it (never created: the policy refuses it
# by address, port and name before any connection).
APP_DB = f"sunrise_app_{os.getpid()}"
ORDERS = 3000  # rows of the orders table: more than the row cap of the tests' limits


@dataclass
class Source:
    kind: str  # "postgresql" or "mariadb"
    database: str
    reader_url: str
    writer_url: str

    def admin_sql(self, *statements: str) -> list[tuple]:
        """Run statements as the admin in the scratch database; the last one's rows."""
        return admin_sql(self.kind, self.database, *statements)

    def running(self, database_only: bool = True) -> list[str]:
        """The scratch database's statements running now, seen by the admin."""
        if self.kind == "postgresql":
            return [r[0] for r in self.admin_sql(
                "SELECT query FROM pg_stat_activity WHERE state = 'active' "
                f"AND datname = '{self.database}' AND pid <> pg_backend_pid()")]
        return [r[0] for r in self.admin_sql(
            "SELECT INFO FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' "
            f"AND DB = '{self.database}' AND ID <> CONNECTION_ID()")]


def _url(kind: str, user: str, database: str) -> str:
    return source_url(kind, user, PASSWORD, database)


_TABLES = (
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, region VARCHAR(20), amount DECIMAL(10,2), "
    "qty INTEGER, note TEXT, placed DATE)",
    "INSERT INTO orders SELECT n, CASE WHEN n % 3 = 0 THEN 'north' WHEN n % 3 = 1 "
    "THEN 'south' ELSE 'west' END, n * 1.5, n % 7, CASE WHEN n % 10 = 0 THEN NULL "
    "ELSE 'note' END, DATE '2024-01-01' FROM {series}",
    "CREATE TABLE regions (code VARCHAR(10), name TEXT)",
    "INSERT INTO regions VALUES ('north', 'The North'), ('south', 'The South'), "
    "('west', 'The West')",
)


@pytest.fixture(scope="session")
def pg_source() -> Iterator[Source]:
    name = f"{SCRATCH}_pg"
    create_scratch("postgresql", name, READER, WRITER, PASSWORD)
    source = Source("postgresql", name, _url("postgresql", READER, name),
                    _url("postgresql", WRITER, name))
    series = "generate_series(1, 3000) AS g(n)"
    source.admin_sql(*(s.replace("{series}", series) for s in _TABLES),
                     "CREATE SEQUENCE counter", "CREATE TABLE audit (at TIMESTAMP)",
                     "CREATE FUNCTION stamp() RETURNS int LANGUAGE sql AS "
                     "'INSERT INTO audit VALUES (now()); SELECT 1'",
                     f'GRANT CONNECT ON DATABASE "{name}" TO "{READER}", "{WRITER}"',
                     f'GRANT USAGE ON SCHEMA public TO "{READER}", "{WRITER}"',
                     f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{READER}", "{WRITER}"',
                     f'GRANT SELECT, USAGE ON SEQUENCE counter TO "{READER}"',
                     f'GRANT INSERT ON regions TO "{WRITER}"')
    yield source
    drop_scratch("postgresql", name, READER, WRITER)


@pytest.fixture(scope="session")
def maria_source() -> Iterator[Source]:
    name = f"{SCRATCH}_maria"
    create_scratch("mariadb", name, READER, WRITER, PASSWORD)
    source = Source("mariadb", name, _url("mariadb", READER, name),
                    _url("mariadb", WRITER, name))
    series = "(SELECT seq AS n FROM seq_1_to_3000) AS g"
    source.admin_sql(*(s.replace("{series}", series) for s in _TABLES),
                     "CREATE TABLE audit (at DATETIME)")
    yield source
    drop_scratch("mariadb", name, READER, WRITER)


@pytest.fixture(params=["pg_source", "maria_source"])
def source(request) -> Source:
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="session")
def live_redis_url() -> Iterator[str]:
    """A Redis database number leased to this session (as tests/conftest.py's)."""
    with leased_database() as url:
        yield url


@pytest.fixture(scope="session")
def live_settings(live_redis_url) -> Settings:
    return Settings(env="test", database_url=f"mysql+pymysql://root@127.0.0.1:3306/{APP_DB}",
                    redis_url=live_redis_url, outbound_allow=["127.0.0.1"])


@pytest.fixture(scope="session")
def outbound(live_settings) -> OutboundPolicy:
    """127.0.0.1 listed; the app's database and Redis refused; short driver timeouts."""
    import dataclasses

    return dataclasses.replace(OutboundPolicy.from_settings(live_settings),
                               connect_timeout_s=3, read_timeout_s=20)


LIMITS = LiveLimits(timeout_s=5.0, chart_row_limit=100, result_max_bytes=200_000,
                    max_concurrent_queries=4, idle_close_s=30.0)


@pytest.fixture
def open_live(outbound) -> Iterator:
    """open_live(url, **kwargs) -> LiveEngine, closed after the test."""
    engines: list[LiveEngine] = []

    def _open(url: str, **kwargs) -> LiveEngine:
        kwargs.setdefault("limits", LIMITS)
        engine = open_engine(url, outbound=outbound, **kwargs)
        engines.append(engine)
        return engine

    yield _open
    for engine in engines:
        engine.close()


@pytest.fixture
def engine(source, open_live) -> LiveEngine:
    return open_live(source.reader_url)
