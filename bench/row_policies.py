"""A row policy's cost per query (issue 35, "Measured"): the same statements on a 10M-row
DuckDB table, run through the SQL sandbox bare and under a policy, alternated in the same
run so that both see the same host load.

Two policies: `region = {user.region}` for a user in one of 10 regions (keeps a tenth of
the rows, the usual case), and the same filter for a user whose list attribute names all
10 regions (keeps every row: the filter's whole cost with no rows saved), with a `hash`
mask on a column the statements do not read. The figure per statement is the median
wall time of `run()` (rewrite included) over the median of the bare runs; the rewrite's
own time (sqlglot parse and generate) is reported apart. Report only: no target.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from bench.figures import result, row
from engine.policies import PolicedQueries, applied_for
from engine.sql.sandbox import SqlSandbox
from shared.principal import Principal

ROWS, SMOKE_ROWS = 10_000_000, 200_000
ROUNDS, SMOKE_ROUNDS = 9, 3
REGIONS = [f"R{i}" for i in range(10)]
POLICY = [{"table": "sales", "filter": "region = {user.region}"}]
MASK = [{"table": "sales", "column": "customer", "mask": "hash"}]
STATEMENTS = {
    "sum by region": "SELECT region, sum(amount) AS revenue FROM sales GROUP BY region ORDER BY 1",
    "count, filtered": "SELECT count(*) FROM sales WHERE amount > 500",
    "top 10 days": "SELECT day, sum(amount) AS revenue FROM sales GROUP BY day "
                   "ORDER BY revenue DESC LIMIT 10",
}


def _build(path: Path, rows: int) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute(f"""CREATE TABLE sales AS SELECT i AS sale_id,
            'R' || (i % 10) AS region, (i * 7919 % 1000)::DOUBLE AS amount,
            DATE '2024-01-01' + (i % 365)::INTEGER AS day, 'customer-' || (i % 50000) AS customer
            FROM range({rows}) t(i)""")
    finally:
        con.close()


def _wall_s(handle, sql: str) -> float:
    started = time.perf_counter()
    outcome = handle.run(sql, timeout_s=120)
    elapsed = time.perf_counter() - started
    if outcome.is_error:
        raise RuntimeError(f"{sql}: {outcome.error}")
    return elapsed


def run(smoke: bool = False) -> dict:
    rows_n, rounds = (SMOKE_ROWS, SMOKE_ROUNDS) if smoke else (ROWS, ROUNDS)
    with tempfile.TemporaryDirectory(prefix="bench-policies-") as folder:
        path = Path(folder) / "sales.duckdb"
        _build(path, rows_n)
        sandbox = SqlSandbox(path, timeout_s=120, processes=1, memory_limit="2GB")
        try:
            handles = {"bare": sandbox}
            for name, region in (("one region of 10", "R3"), ("all 10 regions", REGIONS)):
                viewer = Principal(tenant_id=1, user_id=1, role="viewer",
                                   attributes={"region": region})
                handles[name] = PolicedQueries(sandbox, applied_for(POLICY, MASK, viewer))
            walls = {(h, s): [] for h in handles for s in STATEMENTS}
            for handle in handles.values():  # warm DuckDB's buffers, untimed
                for sql in STATEMENTS.values():
                    _wall_s(handle, sql)
            for _ in range(rounds):
                for statement, sql in STATEMENTS.items():
                    for name, handle in handles.items():
                        walls[(name, statement)].append(_wall_s(handle, sql))
            policed = handles["one region of 10"]
            started = time.perf_counter()
            for _ in range(200):
                for sql in STATEMENTS.values():
                    policed.police(sql)
            rewrite_ms = (time.perf_counter() - started) * 1000 / (200 * len(STATEMENTS))
        finally:
            sandbox.close()
    median = {key: statistics.median(values) for key, values in walls.items()}
    table_rows = []
    for statement in STATEMENTS:
        bare = median[("bare", statement)]
        for name in handles:
            if name == "bare":
                continue
            value = median[(name, statement)]
            table_rows.append(row("Row policy cost", f"{statement}, policy keeps {name} "
                                  f"({rows_n:,} rows; median of {rounds})",
                                  f"{value * 1000:.1f} ms", f"{bare * 1000:.1f} ms (no policy)",
                                  value / bare, "report"))
    table_rows.append(row("Row policy cost", "rewriting one statement (sqlglot parse, "
                          "rewrite, generate)", f"{rewrite_ms:.2f} ms", "", None, "report"))
    return result("row_policies", smoke, table_rows, table_rows_n=rows_n, rounds=rounds,
                  rewrite_ms=round(rewrite_ms, 3),
                  median_ms={f"{h} / {s}": round(v * 1000, 2) for (h, s), v in median.items()})


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv[1:]), indent=2, default=str))
