"""Small files for dataset tests, shaped like real uploads."""
from __future__ import annotations

from pathlib import Path

import duckdb

# NA marks missing values, so units and price must still arrive numeric.
SALES_CSV = """city,sold_on,units,price,channel
Oslo,2024-01-05,12,9.5,web
Bergen,2024-01-06,NA,12.25,store
Oslo,2024-02-07,7,NA,store
Tromso,2024-02-09,3,4.75,web
Bergen,2024-03-11,NA,8.0,web
"""
# Line 4 has a field too many.
RAGGED_CSV = "a,b\n1,2\n3,4\n5,6,7\n8,9\n"


def write_file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def duckdb_file(path: Path, *statements: str) -> Path:
    """A DuckDB database file at ``path`` made by running ``statements`` in it."""
    con = duckdb.connect(str(path))
    for sql in statements:
        con.execute(sql)
    con.close()
    return path
