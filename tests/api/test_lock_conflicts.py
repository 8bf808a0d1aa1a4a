"""A request whose transaction MariaDB picks as a deadlock victim is run again, not
answered 500: a real deadlock between ``POST /v1/jobs`` and another transaction."""
from __future__ import annotations

import threading
import time
import uuid

from sqlalchemy import insert, text

from api.idempotency import body_hash
from api.schemas.jobs import JobCreate
from shared.db import make_engine, session_scope
from shared.keys import tenant_for_key
from shared.models import Conversation, Job, new_id
from tests.utils.waiting import wait_until


def _lock_waits(conn) -> int:
    # Every test session shares the server: count only waits on this test's database.
    return conn.scalar(text(
        "SELECT count(*) FROM information_schema.INNODB_TRX t JOIN "
        "information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "
        "WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()"))


def test_a_submit_chosen_as_deadlock_victim_is_retried_and_accepted(client, auth, settings,
                                                                    tenant_key):
    with session_scope(settings.database_url) as s:
        tenant_id = tenant_for_key(s, tenant_key).id
        conversation_id = new_id()
        s.add(Conversation(id=conversation_id, tenant_id=tenant_id, title="locks"))
    body = {"message": "How many flights?", "conversation_id": conversation_id}
    key = f"deadlock-{uuid.uuid4().hex}"
    engine = make_engine(settings.database_url, pool_size=2)
    scratch = f"deadlock_weight_{uuid.uuid4().hex[:8]}"
    response: dict = {}

    def submit() -> None:
        response["resp"] = client.post("/v1/jobs", json=body,
                                       headers={**auth, "Idempotency-Key": key})

    try:
        with engine.connect() as other, engine.connect() as watcher:
            other.execute(text(f"CREATE TABLE {scratch} (id INT PRIMARY KEY)"))
            other.commit()
            # Undo weight, so that InnoDB picks the request as the cheaper victim.
            other.execute(text(f"INSERT INTO {scratch} SELECT seq FROM seq_1_to_200"))
            # The same idempotency key, uncommitted: the request's insert waits for it.
            other.execute(insert(Job.__table__).values(
                id=new_id(), tenant_id=tenant_id, conversation_id=new_id(), message="x",
                model="m", idempotency_key=key,
                request_hash=body_hash(JobCreate(**body))))
            request = threading.Thread(target=submit)
            request.start()
            # The request holds the conversation row and waits for the key's index entry.
            # InnoDB refreshes INNODB_TRX only after 0.1 s without readers: poll slower.
            wait_until(lambda: _lock_waits(watcher) >= 1, timeout=30, interval=0.25)
            time.sleep(0.2)
            # Now this transaction wants the conversation row the waiting request holds: a
            # cycle. This statement returning (not raising 1213) proves the request was
            # the victim -- nothing else releases that row lock.
            other.execute(text("SELECT id FROM conversations WHERE id = :c FOR UPDATE"),
                          {"c": conversation_id})
            other.rollback()
            request.join(30)
            other.execute(text(f"DROP TABLE {scratch}"))
            other.commit()
    finally:
        engine.dispose()
    resp = response["resp"]
    assert resp.status_code == 202, resp.get_data(as_text=True)
    assert resp.get_json()["conversation_id"] == conversation_id
