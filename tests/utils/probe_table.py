"""An engine of ``shared.db.make_engine`` with a scratch table of its own, for tests that
watch what the driver and the pool really do on MariaDB."""
from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

from sqlalchemy import Engine, text

from shared.db import make_engine


@contextlib.contextmanager
def engine_with_probe_table(database_url: str, columns: str, *, rows: str = "",
                            pool_size: int = 4) -> Iterator[Engine]:
    """The engine, its table's name in ``engine.probe_table`` (``columns`` as in CREATE
    TABLE, ``rows`` an optional VALUES list); the table is dropped afterwards."""
    engine = make_engine(database_url, pool_size=pool_size)
    table = f"probe_{uuid.uuid4().hex[:8]}"
    with engine.begin() as conn:
        conn.execute(text(f"CREATE TABLE {table} ({columns})"))
        if rows:
            conn.execute(text(f"INSERT INTO {table} VALUES {rows}"))
    engine.probe_table = table
    try:
        yield engine
    finally:
        with engine.begin() as conn:
            conn.execute(text(f"DROP TABLE {table}"))
        engine.dispose()
