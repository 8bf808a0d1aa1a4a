"""Fixtures for the import engine: a data dir, a way to build a version from files written
on the spot, and a read-only look into a built version. Everything is real DuckDB."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from worker.datasets import BuiltVersion, FileSource, ImportProgress, build_version


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
def build(data_dir: Path) -> Callable[..., BuiltVersion]:
    """build(*paths_or_sources, version=1, progress=None, **kwargs) -> BuiltVersion."""

    def _build(*sources, version: int = 1, dataset_id: str = "ds",
               progress: list[ImportProgress] | None = None, **kwargs) -> BuiltVersion:
        items = [s if not isinstance(s, Path) else FileSource(s) for s in sources]
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
