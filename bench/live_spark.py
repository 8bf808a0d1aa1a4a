"""Spark over Connect against bare pyspark Connect (issue 34, "Measured"): a 4-row
aggregate over a ``ROWS``-row table, per query, the wall time of ``SparkEngine.run``
(statement check, slots, the table refreshed in the session, tagged and bounded fetch)
against ``spark.sql(sql).collect()`` in a bare Connect session of its own, alternated in
the same run on the same server so both see the same host load.

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
TARGET_RATIO = 1.3
QUERY = ("SELECT region, count(*) AS n, sum(amount) AS total FROM bench_events "
         "GROUP BY region ORDER BY region")
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
    walls: dict[str, list[float]] = {"sunrise": [], "bare": []}
    with tempfile.TemporaryDirectory(prefix="sunrise-bench-spark-") as work, \
            spark_connect_server(Path(work)) as server:
        bare = SparkSession.builder.remote(server.url).create()
        bare.sql(_CREATE.format(rows=int(rows)))
        policy = OutboundPolicy(allow=(AllowEntry.parse("127.0.0.1"),), connect_timeout_s=10,
                                read_timeout_s=600)
        engine = open_engine(server.url, outbound=policy, limits=LiveLimits(timeout_s=600.0))
        try:
            # Warm both sides (sessions, the file listing, the JIT), untimed.
            live = engine.run(QUERY)
            expected = bare.sql(QUERY).collect()
            assert not live.is_error and live.total_rows == 4 == len(expected), live.error
            assert [int(r[1]) for r in live.rows] == [int(r["n"]) for r in expected]
            for _ in range(rounds):
                walls["sunrise"].append(_wall_ms(lambda: engine.run(QUERY)))
                walls["bare"].append(_wall_ms(lambda: bare.sql(QUERY).collect()))
        finally:
            engine.close()
            bare.stop()
    live_ms, bare_ms = (statistics.median(walls[s]) for s in ("sunrise", "bare"))
    ratio = live_ms / bare_ms
    figures = [row("Live engine vs bare driver",
                   f"spark, 4-row aggregate over {rows:,} rows (median of {rounds})",
                   f"{live_ms:.1f} ms", f"{bare_ms:.1f} ms (pyspark Connect)", ratio,
                   f"≤ {TARGET_RATIO:g}×", ratio <= TARGET_RATIO)]
    return result("live_spark", smoke, figures, table_rows=rows, rounds=rounds,
                  wall_ms=walls, median_ms={"sunrise_ms": round(live_ms, 3),
                                            "bare_ms": round(bare_ms, 3)})


if __name__ == "__main__":
    outcome = run(smoke="--smoke" in sys.argv[1:])
    print(json.dumps(outcome, indent=2, default=str))
