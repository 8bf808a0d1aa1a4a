"""Versions are built all or nothing, never overwritten, and report their progress."""
from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from api.problems import http_status
from engine.datasets import FileSource, build_version, remove_stale_builds, version_path
from engine.datasets import target as target_module
from engine.sql.sandbox import SqlSandbox
from shared.config import PROJECT_ROOT
from shared.errors import Conflict, MalformedSource, SourceTooLarge
from tests.datasets.conftest import files_under, query
from tests.utils.sql_text import run_shown


def _files(folder: Path) -> list[str]:
    return [p for p in files_under(folder) if (folder / p).is_file()]


def test_a_version_is_one_file_named_after_its_number(write, build, data_dir):
    built = build(write("a.csv", "x\n1\n"), dataset_id="sales-7", version=3)
    assert built.path == version_path(data_dir, "sales-7", 3) == data_dir / "sales-7" / "v3.duckdb"
    assert _files(data_dir) == ["sales-7/v3.duckdb"]
    assert built.rows == 1 and built.seconds >= 0


def test_a_failed_import_leaves_no_version_and_no_stray_file(write, build, data_dir):
    good = write("good.csv", "x\n" + "1\n" * 1000)
    bad = write("bad.csv", "a,b\n1,2\n3\n")
    with pytest.raises(MalformedSource, match=r"bad\.csv, line 3"):
        build(good, bad)
    assert _files(data_dir) == []


def test_a_file_over_the_limit_is_refused_before_anything_is_written(write, build, data_dir):
    path = write("big.csv", "x\n" + "123456789\n" * 20)
    with pytest.raises(SourceTooLarge) as caught:
        build(path, max_file_bytes=100)
    assert http_status(caught.value) == 413 and "big.csv" in caught.value.detail
    assert caught.value.extra["limit_bytes"] == 100
    assert not data_dir.exists()


def test_versions_are_immutable(write, build):
    build(write("a.csv", "x\n1\n"))
    with pytest.raises(Conflict, match="immutable"):
        build(write("b.csv", "x\n2\n"))


@pytest.mark.parametrize("dataset_id", ["../etc", "a/b", "", ".hidden"])
def test_a_dataset_id_cannot_leave_the_data_dir(data_dir, dataset_id):
    with pytest.raises(ValueError):
        version_path(data_dir, dataset_id, 1)


def test_refresh_builds_a_new_version_while_the_old_one_keeps_serving(write, build):
    """A job pinned to version 1 keeps reading it through the real sandbox."""
    v1 = build(write("orders.csv", "id,amount\n1,10\n2,20\n"), version=1)
    sandbox = SqlSandbox(v1.path, timeout_s=5)
    try:
        assert "30" in run_shown(sandbox, "SELECT sum(amount) AS total FROM orders", 1).text
        v2 = build(write("orders.csv", "id,amount\n1,10\n2,20\n3,70\n"), version=2)
        assert "30" in run_shown(sandbox, "SELECT sum(amount) AS total FROM orders", 2).text
    finally:
        sandbox.close()
    assert query(v2.path, "SELECT sum(amount) FROM orders") == [(100,)]
    assert query(v1.path, "SELECT sum(amount) FROM orders") == [(30,)]
    assert v1.path != v2.path


def _sqlite(path: Path, tables: dict[str, int]) -> Path:
    con = sqlite3.connect(path)
    for name, rows in tables.items():
        con.execute(f"CREATE TABLE {name} (n INTEGER)")
        con.executemany(f"INSERT INTO {name} VALUES (?)", ((i,) for i in range(rows)))
    con.commit()
    con.close()
    return path


def test_progress_reports_rows_so_far_table_by_table(tmp_path, build):
    progress = []
    build(_sqlite(tmp_path / "two.sqlite", {"alpha": 120_000, "beta": 10}), progress=progress)
    alpha = [p for p in progress if p.table == "alpha"]
    assert [p.rows for p in alpha] == [50_000, 100_000, 120_000, 120_000]
    assert [p.done for p in alpha] == [False, False, False, True]
    beta_done = progress[-1]
    assert beta_done.table == "beta" and beta_done.done and beta_done.total_rows == 120_010
    assert progress.index(alpha[-1]) < progress.index(beta_done)


def test_a_whole_file_read_reports_duckdbs_percent(write, build, monkeypatch, tmp_path):
    monkeypatch.setattr(target_module, "PROGRESS_POLL_S", 0.002)
    path = tmp_path / "wide.csv"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT i, i * 2 AS j, md5(i::VARCHAR) AS h FROM range(1500000) t(i)) "
                f"TO '{path}'")
    con.close()
    progress = []
    build(path, progress=progress)
    partial = [p for p in progress if not p.done]
    assert partial and all(p.rows is None and 0 <= p.percent <= 100 for p in partial)
    assert progress[-1].done and progress[-1].rows == 1_500_000


@pytest.mark.parametrize("raised", [RuntimeError("stop"), KeyboardInterrupt()])
def test_an_import_stopped_by_its_caller_leaves_nothing(tmp_path, data_dir, raised):
    source = FileSource(_sqlite(tmp_path / "s.sqlite", {"t": 120_000}))

    def stop(progress):
        raise raised

    with pytest.raises(type(raised)):
        build_version([source], data_dir, "ds", 1, stop)
    assert _files(data_dir) == []


_CHILD = textwrap.dedent("""
    import sys, time
    from engine.datasets import FileSource, build_version

    def hold(progress):
        print("importing", flush=True)
        time.sleep(120)

    build_version([FileSource(sys.argv[1])], sys.argv[2], "ds", 1, hold)
""")


def test_a_killed_build_leaves_files_the_next_build_removes(tmp_path, data_dir):
    source = _sqlite(tmp_path / "s.sqlite", {"t": 60_000})
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(source), str(data_dir)],
                             cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "importing"
        left = _files(data_dir)
        assert left and all(".building.duckdb" in name for name in left)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert not version_path(data_dir, "ds", 1).exists()
    assert _files(data_dir) == left, "a killed process cannot clean up after itself"
    built = build_version([FileSource(source)], data_dir, "ds", 1)  # sweeps first
    assert _files(data_dir) == ["ds/v1.duckdb"] and built.rows == 60_000


def test_remove_stale_builds_spares_live_builds_and_other_hosts_recent_ones(data_dir):
    folder = data_dir / "ds"
    folder.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())
    mine = folder / f".v1.{host}.{os.getpid()}.aa.building.duckdb"
    gone = folder / f".v2.{host}.{dead.pid}.bb.building.duckdb"
    elsewhere_new = folder / ".v3.otherhost.1.cc.building.duckdb"
    elsewhere_old = folder / ".v4.otherhost.1.dd.building.duckdb.wal"
    for path in (mine, gone, elsewhere_new, elsewhere_old):
        path.write_text("x")
    old = time.time() - 2 * 24 * 3600
    os.utime(elsewhere_old, (old, old))
    removed = remove_stale_builds(data_dir)
    assert sorted(removed) == sorted([gone, elsewhere_old])
    assert mine.exists() and elsewhere_new.exists()
