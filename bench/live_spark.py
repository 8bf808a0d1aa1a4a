"""Spark over Connect against bare pyspark Connect (issue 34, "Measured"): a 4-row
aggregate over a ``ROWS``-row table, and a result of ``HUGE_ROWS`` rows (of which the
engine fetches its row cap and asks Spark for the summary of the whole, while the bare
session collects every row), per query, the wall time of ``SparkEngine.run`` (statement
check, slots, the table refreshed in the session, tagged and bounded fetch) against
``spark.sql(sql).collect()`` in a bare Connect session of its own, alternated in the same
run on the same server so both see the same host load.

The server is the tests' real Spark Connect server (local[2], 127.0.0.1; see
tests/utils/spark_server.py), started for the run and stopped by its pid; the table is
written by ``spark.range`` as parquet in its temporary warehouse. The figure is the
median of each side and their ratio; the target is the live engines' 1.3×.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.figures import result, row

ROWS, SMOKE_ROWS = 10_000_000, 100_000
ROUNDS, SMOKE_ROUNDS = 10, 2
HUGE_ROWS, SMOKE_HUGE_ROWS = 1_000_000, 50_000
HUGE_ROUNDS, SMOKE_HUGE_ROUNDS = 3, 1
TARGET_RATIO = 1.3
QUERY = ("SELECT region, count(*) AS n, sum(amount) AS total FROM bench_events "
         "GROUP BY region ORDER BY region")
HUGE_QUERY = "SELECT id, region, amount FROM bench_events WHERE id < {rows} ORDER BY id"
_CREATE = ("CREATE TABLE bench_events USING parquet AS SELECT id, "
           "element_at(array('north', 'south', 'east', 'west'), CAST(id % 4 AS INT) + 1) "
           "AS region, CAST((id % 1000) * 1.25 AS DECIMAL(10, 2)) AS amount "
           "FROM range(0, {rows}, 1, 2)")


def _wall_ms(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def run(smoke: bool = False) -> dict:
    from pyspark.sql.connect.session import SparkSession

    from engine.live import LiveLimits, open_engine
    from shared.outbound import AllowEntry, OutboundPolicy
    from tests.utils.spark_server import spark_connect_server

    rows = SMOKE_ROWS if smoke else ROWS
    rounds = SMOKE_ROUNDS if smoke else ROUNDS
    huge = SMOKE_HUGE_ROWS if smoke else HUGE_ROWS
    huge_rounds = SMOKE_HUGE_ROUNDS if smoke else HUGE_ROUNDS
    cases = {f"4-row aggregate over {rows:,} rows": (QUERY, 4, rounds),
             f"{huge:,}-row result": (HUGE_QUERY.format(rows=huge), huge, huge_rounds)}
    walls = {label: {"sunrise": [], "bare": []} for label in cases}
    with tempfile.TemporaryDirectory(prefix="sunrise-bench-spark-") as work, \
            spark_connect_server(Path(work)) as server:
        bare = SparkSession.builder.remote(server.url).create()
        bare.sql(_CREATE.format(rows=int(rows)))
        policy = OutboundPolicy(allow=(AllowEntry.parse("127.0.0.1"),), connect_timeout_s=10,
                                read_timeout_s=600)
        engine = open_engine(server.url, outbound=policy, limits=LiveLimits(timeout_s=600.0))
        try:
            for label, (sql, total, times) in cases.items():
                # Warm both sides (sessions, the file listing, the JIT), untimed.
                live = engine.run(sql)
                expected = bare.sql(sql).collect()
                assert not live.is_error and live.total_rows == total == len(expected), \
                    live.error
                assert [int(r[1 if total == 4 else 0]) for r in live.rows[:25]] == \
                    [int(r[1 if total == 4 else 0]) for r in expected[:25]]
                for _ in range(times):
                    walls[label]["sunrise"].append(_wall_ms(lambda sql=sql: engine.run(sql)))
                    walls[label]["bare"].append(
                        _wall_ms(lambda sql=sql: bare.sql(sql).collect()))
        finally:
            engine.close()
            bare.stop()
    figures, medians = [], {}
    for label, (_sql, _total, times) in cases.items():
        live_ms, bare_ms = (statistics.median(walls[label][s]) for s in ("sunrise", "bare"))
        ratio = live_ms / bare_ms
        medians[label] = {"sunrise_ms": round(live_ms, 3), "bare_ms": round(bare_ms, 3)}
        figures.append(row("Live engine vs bare driver", f"spark, {label} (median of {times})",
                           f"{live_ms:.1f} ms", f"{bare_ms:.1f} ms (pyspark Connect)", ratio,
                           f"≤ {TARGET_RATIO:g}×", ratio <= TARGET_RATIO))
    return result("live_spark", smoke, figures, table_rows=rows, rounds=rounds,
                  huge_rounds=huge_rounds, wall_ms=walls, median_ms=medians)


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps(outcome, indent=2, default=str))
