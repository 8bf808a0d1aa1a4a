"""``max_concurrent_queries`` per dataset across the fleet: Redis leases that expire, a
query waiting for a slot within its own budget, and 20 questions at once never running
more than the limit on the server (observed in pg_stat_activity)."""
from __future__ import annotations

import threading
import time
import uuid

import pytest
import redis as redis_lib

from engine.live import LiveLimits
from engine.live.query_slots import FleetSlots, SlotsBusy, wait_for_releases
from tests.live.conftest import READER


@pytest.fixture
def redis(live_redis_url):
    client = redis_lib.Redis.from_url(live_redis_url)
    yield client
    client.close()


def test_twenty_queries_from_two_workers_never_run_more_than_two_at_once(pg_source, open_live,
                                                                        redis):
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    limits = LiveLimits(timeout_s=20, max_concurrent_queries=2)
    # Two engines with their own pools: two workers of the fleet, one Redis.
    workers = [open_live(pg_source.reader_url, limits=limits, redis=redis, dataset=dataset)
               for _ in range(2)]
    seen, done = [], threading.Event()

    def watch():
        while not done.is_set():
            seen.append(len(pg_source.admin_sql(
                "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
                f"AND usename = '{READER}' AND datname = '{pg_source.database}'")))
            time.sleep(0.02)

    results = []

    def ask(engine, index):
        # The slots are the layer under test: past the statement check, so a query can
        # sleep on the server without using the machine's CPU.
        results.append(engine._run_in_slot(
            "SELECT pg_sleep(0.3)", tag=f"q{index}", budget_s=20,
            deadline=time.monotonic() + 20, started=time.perf_counter(), label=""))

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=ask, args=(workers[i % 2], i)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    done.set()
    watcher.join()
    assert len(results) == 20 and not [r.error for r in results if r.is_error]
    assert max(seen) == 2
    assert wait_for_releases()  # given back from a thread of their own
    assert redis.zcard(f"sunrise:live:slots:{dataset}") == 0  # every lease given back


def test_a_query_waits_for_a_slot_within_its_own_budget_then_fails_clearly(pg_source,
                                                                           open_live, redis):
    dataset = f"ds-{uuid.uuid4().hex[:8]}"
    engine = open_live(pg_source.reader_url, redis=redis, dataset=dataset,
                       limits=LiveLimits(timeout_s=10, max_concurrent_queries=1))
    holder = threading.Thread(target=lambda: engine._run_in_slot(
        "SELECT pg_sleep(2)", tag="long", budget_s=10, deadline=time.monotonic() + 10,
        started=time.perf_counter(), label=""))
    holder.start()
    time.sleep(0.3)
    started = time.monotonic()
    result = engine.run("SELECT count(*) FROM regions", tag="short", timeout_s=0.5)
    waited = time.monotonic() - started
    holder.join(10)
    assert result.is_error and "query slots of this dataset stayed busy" in result.error
    assert result.retryable
    assert 0.4 < waited < 1.5
    # Once the slot is free, the same question runs.
    assert engine.run("SELECT count(*) FROM regions", tag="again").rows == [(3,)]


def test_a_dead_workers_lease_expires_by_itself(redis):
    slots = FleetSlots(redis, f"ds-{uuid.uuid4().hex[:8]}", 1)
    # A worker took the slot with a 300 ms lease and died without giving it back.
    assert slots._take(keys=[slots.key], args=[1, "dead-worker", 300]) == 1
    with pytest.raises(SlotsBusy), slots.hold(time.monotonic() + 0.1):
        pass
    started = time.monotonic()
    with slots.hold(time.monotonic() + 3):
        assert time.monotonic() - started < 1.0
        assert redis.zcard(slots.key) == 1
    assert wait_for_releases()
    assert redis.zcard(slots.key) == 0


def test_a_slot_is_given_back_without_waiting_for_redis(redis):
    """The query's caller returns before the lease leaves Redis (a thread gives it back),
    and a lease whose give-back fails still expires with its lease."""
    slots = FleetSlots(redis, f"ds-{uuid.uuid4().hex[:8]}", 1)
    with slots.hold(time.monotonic() + 1):
        pass
    assert wait_for_releases() and redis.zcard(slots.key) == 0

    class Broken:
        def zrem(self, *_args):
            raise ConnectionError("Redis is away")

    broken = FleetSlots(redis, slots.key.rpartition(":")[2], 1)
    broken._redis = Broken()  # the give-back fails; taking worked through the real one
    with broken.hold(time.monotonic() + 1):
        pass
    assert wait_for_releases() and redis.zcard(slots.key) == 1  # left to expire
    assert redis.pttl(slots.key) > 0
