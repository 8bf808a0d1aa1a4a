"""Batch webhooks: through the outbound policy, HMAC-signed, retried with backoff, recorded."""
from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sqlalchemy import update

from shared import batch_rows
from shared.db import session_factory, session_scope
from shared.keys import tenant_for_key
from shared.models import Batch, Job, utcnow
from shared.outbound import endpoint_of
from shared.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from worker.batches.coordinator import BatchCoordinator
from worker.batches.webhook import deliver_webhook


@contextlib.contextmanager
def receiver(statuses: list[int]):
    """An HTTP server on 127.0.0.1 answering ``statuses`` in turn (then 200); yields
    (url, received) where received collects (headers, body) per request."""
    received: list[tuple[dict, bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((dict(self.headers), body))
            self.send_response(statuses[len(received) - 1] if len(received) <= len(statuses)
                               else 200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hooks/sunrise", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _batch(settings, api_key: str, url: str | None, questions=("How many flights?",)) -> str:
    with session_scope(settings.database_url) as s:
        tenant = tenant_for_key(s, api_key)
        return batch_rows.create_batch(s, tenant_id=tenant.id, questions=list(questions),
                                       model=settings.model, webhook_url=url).id


def _row(settings, batch_id: str) -> Batch:
    with session_scope(settings.database_url) as s:
        return s.get(Batch, batch_id)


def test_only_allow_listed_hosts_are_accepted(settings, auth):
    from api import create_app

    allowing = create_app(settings=settings.model_copy(
        update={"outbound_allow": ["127.0.0.1"]})).test_client()
    redis_host, redis_port = endpoint_of(settings.redis_url)
    for refused in ("http://10.0.0.1:9/x", "http://169.254.169.254/latest/meta-data/",
                    f"http://{redis_host}:{redis_port}/",  # listed, and still never
                    "http://user:pw@127.0.0.1/x", "ftp://127.0.0.1/x",
                    "http://127.0.0.1.evil.example/x", "not a url",
                    # Python's URL parser drops tabs and newlines; HTTP clients refuse them.
                    "http://127.0.0.1\t/x", "http://127.0.0.1:9/x\n", "http://127.0.0.1:9/\x00"):
        resp = allowing.post("/v1/batches", json={"questions": ["q"], "webhook_url": refused},
                             headers=auth)
        assert resp.status_code == 422, refused
    resp = allowing.post("/v1/batches", json={"questions": ["How many flights?"],
                                              "webhook_url": "http://127.0.0.1:9/x"},
                         headers=auth)
    assert resp.status_code == 202


def test_delivery_is_signed_and_retried_until_it_succeeds(settings, tenant_key):
    hooked = settings.model_copy(update={"webhook_allowed_hosts": ["127.0.0.1"],
                                         "webhook_backoff_s": 0.05, "webhook_secret": "s3cret"})
    with receiver([503, 500]) as (url, received):
        batch_id = _batch(settings, tenant_key, url)
        status = deliver_webhook(hooked, session_factory(settings.database_url), batch_id, url,
                                 {"event": "batch.completed", "batch_id": batch_id})
    assert status == "delivered" and len(received) == 3
    headers, body = received[-1]
    assert json.loads(body) == {"event": "batch.completed", "batch_id": batch_id}
    assert verify("s3cret", headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])
    assert not verify("other", headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])
    assert len({h["X-Sunrise-Delivery"] for h, _ in received}) == 1, "one delivery id"
    row = _row(settings, batch_id)
    assert (row.webhook_status, row.webhook_attempts) == ("delivered", 3)


def test_client_errors_end_delivery_and_unlisted_hosts_are_never_called(settings, tenant_key):
    hooked = settings.model_copy(update={"webhook_allowed_hosts": ["127.0.0.1"],
                                         "outbound_allow": [], "webhook_backoff_s": 0.01})
    unlisted = settings.model_copy(update={"outbound_allow": []})
    sessions = session_factory(settings.database_url)
    with receiver([404]) as (url, received):
        batch_id = _batch(settings, tenant_key, url)
        assert deliver_webhook(hooked, sessions, batch_id, url, {}) == "failed"
        assert len(received) == 1
        # The allow-list is checked again at delivery time: it may have changed.
        assert deliver_webhook(unlisted, sessions, batch_id, url, {}) == "refused"
        assert len(received) == 1


def test_assembly_completes_a_batch_of_cancelled_jobs_and_calls_the_webhook(settings,
                                                                            tenant_key):
    hooked = settings.model_copy(update={"webhook_allowed_hosts": ["127.0.0.1"]})
    with receiver([]) as (url, received):
        batch_id = _batch(settings, tenant_key, url, questions=("a?", "b?"))
        with session_scope(settings.database_url) as s:
            s.execute(update(Job).where(Job.batch_id == batch_id).values(
                status="cancelled", finished_at=utcnow(), error_code="cancelled",
                error_message="The job was cancelled at your request."))
        coordinator = BatchCoordinator(hooked, None, None)
        assert coordinator.assemble(batch_id) == "completed"
        assert coordinator.assemble(batch_id) == "completed"  # idempotent: no second call
    assert len(received) == 1
    payload = json.loads(received[0][1])
    assert payload["event"] == "batch.completed" and payload["batch_id"] == batch_id
    assert payload["counts"]["cancelled"] == 2 and payload["status"] == "completed"
    row = _row(settings, batch_id)
    assert row.status == "completed" and row.report and row.webhook_status == "delivered"


def test_a_url_no_http_client_can_send_to_is_refused_not_raised(settings, tenant_key):
    # A row accepted before the submission check existed (or written by hand): the
    # delivery itself must still never raise.
    hooked = settings.model_copy(update={"webhook_allowed_hosts": ["127.0.0.1"]})
    sessions = session_factory(settings.database_url)
    for url in ("http://127.0.0.1\t/hooks", "http://127.0.0.1/x\r\nX-Evil: 1"):
        batch_id = _batch(settings, tenant_key, url)
        assert deliver_webhook(hooked, sessions, batch_id, url, {}) == "refused"
        assert _row(settings, batch_id).webhook_status == "refused"


def test_a_webhook_to_redis_is_refused_even_with_its_host_listed(settings, tenant_key):
    host, port = endpoint_of(settings.redis_url)
    url = f"http://{host}:{port}/"
    hooked = settings.model_copy(update={"outbound_allow": [host, f"{host}:{port}"]})
    batch_id = _batch(settings, tenant_key, url)
    assert deliver_webhook(hooked, session_factory(settings.database_url), batch_id, url,
                           {}) == "refused"


def test_a_delivery_goes_to_the_checked_address_with_the_url_s_host(settings, tenant_key):
    with receiver([]) as (url, received):
        named = url.replace("127.0.0.1", "localhost")
        batch_id = _batch(settings, tenant_key, named)
        assert deliver_webhook(settings, session_factory(settings.database_url), batch_id,
                               named, {}) == "delivered"
    assert received[0][0]["Host"] == named.split("/")[2]
