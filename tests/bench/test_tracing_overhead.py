"""bench/tracing_overhead.py in its smoke size: both rows measured, and the rounds really
ran with tracing off and on (the off path timed with tracing off again afterwards)."""
from __future__ import annotations

from tests.bench.test_bench_smoke import _check_shape


def test_tracing_overhead_measures_on_against_off():
    from bench import tracing_overhead
    from shared import tracing

    outcome = tracing_overhead.run(smoke=True)
    _check_shape(outcome, "tracing_overhead")
    on_row, off_row = outcome["rows"]
    assert on_row["ratio"] > 0 and off_row["ratio"] < 1
    cpu = outcome["details"]["cpu_ms_per_job"]
    assert len(cpu["off"]) == len(cpu["on"]) == tracing_overhead.SMOKE_ROUNDS
    assert all(v > 0 for v in cpu["off"] + cpu["on"])
    assert not tracing.enabled()  # the bench leaves the process as it found it
