"""A live query's result is the DuckDB sandbox's: the same rows, types, total and summary,
so ``execute_sql`` renders the same text. Checked against a snapshot of the same tables
run through the real SQL sandbox; and bounded: rows and bytes capped, cells cut."""
from __future__ import annotations

import dataclasses

import pytest

from engine.datasets import DatabaseSource, build_version
from engine.live import LiveLimits
from engine.sql.query_result import MAX_CELL_CHARS
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox
from tests.live.conftest import LIMITS, ORDERS
from tests.utils.waiting import wait_until

QUERIES = [
    # 3 rows: no summary.
    "SELECT region, count(*) AS n, sum(amount) AS total FROM orders GROUP BY region "
    "ORDER BY region",
    # 60 rows, all fetched: the summary over the fetched rows.
    "SELECT id, amount, qty, note FROM orders WHERE id <= 60 ORDER BY id",
    # 3000 rows, more than the row cap: the summary computed on the engine.
    "SELECT id, region, amount, qty FROM orders ORDER BY id",
    # Numbers as text are summarised as the sandbox does (more than half numeric).
    "SELECT CAST(qty AS CHAR(5)) AS qty_text, note FROM orders ORDER BY id",
]


@pytest.fixture
def sandbox_of(outbound, tmp_path):
    sandboxes = []

    def _sandbox(source) -> SqlSandbox:
        built = build_version([DatabaseSource(source.reader_url, ("orders",), outbound)],
                              tmp_path, "snap", 1)
        sandbox = SqlSandbox(built.path, timeout_s=10, chart_row_limit=LIMITS.chart_row_limit,
                             result_max_bytes=LIMITS.result_max_bytes, processes=1)
        sandboxes.append(sandbox)
        return sandbox

    yield _sandbox
    for sandbox in sandboxes:
        sandbox.close()


def test_results_render_as_the_sandbox_renders_them(source, engine, sandbox_of):
    sandbox = sandbox_of(source)
    for query in QUERIES:
        sql = query.replace("CHAR(5)", "VARCHAR(5)") if source.kind == "postgresql" else query
        live, snap = engine.run(sql, tag="t"), sandbox.run(sql)
        assert not live.is_error, live.error
        assert not snap.is_error, snap.error
        assert live.total_rows == snap.total_rows
        assert len(live.rows) == len(snap.rows)
        assert result_text(live, 1) == result_text(snap, 1), sql
    big = engine.run(QUERIES[2], tag="t")
    assert big.total_rows == ORDERS and len(big.rows) == LIMITS.chart_row_limit
    assert [s.column for s in big.summary] == ["id", "amount", "qty"]
    assert big.summary[0].total == ORDERS * (ORDERS + 1) // 2


def test_rows_are_capped_and_cells_cut(source, open_live):
    limits = dataclasses.replace(LIMITS, result_max_bytes=20_000)
    engine = open_live(source.reader_url, limits=limits)
    wide = "repeat('x', 5000)" if source.kind == "postgresql" else "REPEAT('x', 5000)"
    result = engine.run(f"SELECT id, {wide} AS blob_text FROM orders ORDER BY id", tag="t")
    assert not result.is_error, result.error
    assert result.total_rows == ORDERS  # counted on the engine
    assert all(len(row[1]) == MAX_CELL_CHARS + 1 for row in result.rows)
    # 24 + 1001 characters a row: the fetch stopped at the byte budget.
    assert len(result.rows) == 20_000 // (24 + MAX_CELL_CHARS + 1)
    assert "…" in result_text(result, 1)


def test_idle_connections_are_closed(source, open_live):
    # An idle time no test reaches: the sessions are checked before anything may close
    # them, then closed on demand as the reaper would once they are old enough.
    engine = open_live(source.reader_url, limits=LiveLimits(idle_close_s=600))
    assert not engine.run("SELECT count(*) FROM regions", tag="t").is_error
    ids = engine._pool.session_ids(engine._backend.session_id)
    assert ids and _alive(source, ids) == ids
    assert engine._pool.close_idle() == 0  # not idle for idle_close_s yet
    assert engine._pool.close_idle(older_than_s=0) == len(ids)
    assert engine._pool.idle_count() == 0
    wait_until(lambda: not _alive(source, ids), timeout=10)


def test_the_reaper_thread_closes_idle_connections_unasked(source, open_live):
    engine = open_live(source.reader_url, limits=LiveLimits(idle_close_s=0.3))
    conn, _reused = engine._pool.acquire()
    ids = {engine._backend.session_id(conn)}
    assert _alive(source, ids) == ids  # held: nothing can close it yet
    engine._pool.release(conn)  # idle from now; the reaper thread starts with it
    assert engine._pool._reaper is not None and engine._pool._reaper.is_alive()
    wait_until(lambda: engine._pool.idle_count() == 0 and not _alive(source, ids), timeout=10)


def _alive(source, ids: set[int]) -> set[int]:
    """Which of the server sessions ``ids`` still exist."""
    listed = ", ".join(str(i) for i in ids)
    if source.kind == "postgresql":
        rows = source.admin_sql(f"SELECT pid FROM pg_stat_activity WHERE pid IN ({listed})")
    else:
        rows = source.admin_sql(
            f"SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN ({listed})")
    return {int(r[0]) for r in rows}


def test_rows_inserted_after_opening_are_answered_without_a_refresh(source, engine):
    before = engine.run("SELECT count(*) AS n FROM regions", tag="t").rows[0][0]
    source.admin_sql("INSERT INTO regions VALUES ('east', 'The East')")
    try:
        after = engine.run("SELECT count(*) AS n FROM regions", tag="t").rows[0][0]
    finally:
        source.admin_sql("DELETE FROM regions WHERE code = 'east'")
    assert after == before + 1
