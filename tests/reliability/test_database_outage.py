"""Fault (c): MariaDB goes away in the middle of a job's final write.

The worker subprocess reaches MariaDB through a TCP proxy. The test holds the job's
row lock so that the worker's final UPDATE is provably in flight, then cuts the proxy:
that transaction dies uncommitted. The worker retries the write, the database comes
back, and the job completes with exactly one answer and one set of usage figures.
"""
from __future__ import annotations

import json
import time

import pymysql
import pytest
from sqlalchemy.engine import make_url

from tests.conftest import MARIADB
from tests.utils.job_checks import all_in, assert_answered_once
from tests.utils.waiting import wait_until

pytestmark = pytest.mark.fault

BY_CARRIER = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"
ANSWER = json.dumps({"answerText": "UA flew the most flights.", "charts": []})


def _final_write_waiting(conn, database: str) -> bool:
    # FINISH is the worker's only UPDATE of jobs setting finished_at (on MariaDB it also
    # moves the conversation: "UPDATE jobs LEFT OUTER JOIN conversations ... SET ...").
    with conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = %s "
                    "AND INFO LIKE 'UPDATE jobs %%' AND INFO LIKE '%%finished_at=%%'",
                    (database,))
        return cur.fetchone()[0] > 0


def test_final_write_is_retried_through_a_database_outage(client, auth, settings, fake_llm,
                                                          launcher, mariadb_proxy):
    database = make_url(settings.database_url).database
    via_proxy = f"mysql+pymysql://root@127.0.0.1:{mariadb_proxy.port}/{database}"
    worker = launcher.worker("db-outage", concurrency=2, database_url=via_proxy)
    marker = fake_llm.scenario("db-outage", [{"tool_calls": [{"sql": BY_CARRIER}]},
                                             {"text": ANSWER}])
    fake_llm.latency(1000)
    job_id = client.post("/v1/jobs", json={"message": f"Who flew most? {marker}"},
                         headers=auth).get_json()["job_id"]
    wait_until(lambda: all_in(settings, [job_id], ("running",)), timeout=60, interval=0.05)

    holder = pymysql.connect(**MARIADB, database=database, autocommit=False)
    try:
        with holder.cursor() as cur:  # the worker's final UPDATE will queue behind this
            cur.execute("SELECT id FROM jobs WHERE id = %s FOR UPDATE", (job_id,))
        watcher = pymysql.connect(**MARIADB, autocommit=True)
        wait_until(lambda: _final_write_waiting(watcher, database), timeout=60, interval=0.05)
        mariadb_proxy.cut()  # the final transaction loses its connection mid-flight
    finally:
        holder.rollback()
        holder.close()
    time.sleep(2.0)  # a few failed retries against a database that is not there
    assert all_in(settings, [job_id], ("running",)), "nothing was committed by the cut write"
    mariadb_proxy.restore()

    wait_until(lambda: all_in(settings, [job_id], ("succeeded", "failed", "cancelled")),
               timeout=60, interval=0.1)
    assert_answered_once(settings, job_id)
    watcher.close()
    log = worker.log_path.read_text(errors="replace")
    assert "database write finish failed, retrying" in log, worker.log_tail()
