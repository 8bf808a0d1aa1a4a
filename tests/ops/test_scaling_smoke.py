"""The scaling benchmark in miniature, so it never rots: 1 then 2 worker processes on one
Redis and MariaDB, every job answered once, the workers' own /metrics add up.
Speed is not asserted here (bench/ owns figures); correctness is."""
from __future__ import annotations

import pytest

from bench.scaling import markdown, run

pytestmark = pytest.mark.slow


def test_scaling_bench_smoke_run_loses_nothing():
    outcome = run(smoke=True)
    rounds = outcome["details"]["rounds"]
    assert [r["workers"] for r in rounds] == [1, 2]
    for r in rounds:
        assert r["succeeded"] == r["answers"] == r["jobs"], r
        assert r["lost"] == r["not_first_attempt"] == r["left_in_broker"] == 0, r
        assert r["counted_by_workers"] == r["jobs"], r
        assert r["jobs_per_s"] > 0
    assert outcome["rows"][-1]["pass"] is True
    assert markdown(outcome).count("\n") == len(rounds) + 1
