"""A schedule's run end to end, with a real worker subprocess: the report reaches a real
SMTP server (read back as a mail client reads it), a Slack receiver (the Block Kit
structure checked) and a webhook receiver (the signature verified with the schedule's
secret); a failing target is retried and the run is partially_delivered; a false
condition skips the run without any model call; a paused schedule delivers nothing."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import func, select

from shared.db import session_factory
from shared.models import ScheduleRun, utcnow
from shared.webhooks import verify
from tests.utils.waiting import wait_until
from worker.schedules.tick import start_due_runs


@pytest.fixture
def settings(delivery_settings):
    return delivery_settings


def _schedule(client, auth, receiver, **extra) -> dict:
    body = {"name": "Daily flights", "questions": ["How many flights are there?"],
            "cron": "0 7 * * *", "timezone": "Europe/Berlin",
            "deliver": [{"type": "email", "to": ["ops@example.com", "cfo@example.com"]},
                        {"type": "slack", "webhook_url": f"{receiver.url}/slack"},
                        {"type": "webhook", "url": f"{receiver.url}/hook"}], **extra}
    resp = client.post("/v1/schedules", headers=auth, json=body)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def _wait_run(client, auth, sid: str, run_id: str, timeout: float = 60.0) -> dict:
    def finished():
        runs = client.get(f"/v1/schedules/{sid}/runs", headers=auth).get_json()["runs"]
        run = next(r for r in runs if r["run_id"] == run_id)
        return run if run["status"] != "running" else None
    return wait_until(finished, timeout=timeout)


def check_block_kit(message: dict) -> None:
    """The structure Slack accepts for an incoming webhook's blocks (the fields used)."""
    assert isinstance(message["text"], str) and message["text"]
    blocks = message["blocks"]
    assert 1 <= len(blocks) <= 50
    for block in blocks:
        kind = block["type"]
        assert kind in {"header", "section", "context", "actions", "divider"}
        if kind == "header":
            assert block["text"]["type"] == "plain_text" and len(block["text"]["text"]) <= 150
        if kind == "section":
            assert block["text"]["type"] in {"mrkdwn", "plain_text"}
            assert 1 <= len(block["text"]["text"]) <= 3000
        if kind == "context":
            assert 1 <= len(block["elements"]) <= 10
            assert all(e["type"] in {"mrkdwn", "plain_text", "image"} for e in block["elements"])
        if kind == "actions":
            for element in block["elements"]:
                assert element["type"] == "button"
                assert element["text"]["type"] == "plain_text"
                assert len(element["text"]["text"]) <= 75
                assert element["url"].startswith("https://") and len(element["url"]) <= 3000
                assert 1 <= len(element["action_id"]) <= 255


def test_run_now_delivers_to_smtp_slack_and_a_signed_webhook(
        client, auth, launcher, mailbox, receiver, fake_llm):
    created = _schedule(client, auth, receiver)
    sid = created["schedule_id"]
    before_mail, before_posts = len(mailbox.messages), len(receiver.posts)
    run = client.post(f"/v1/schedules/{sid}/run", headers=auth)
    assert run.status_code == 202, run.get_json()
    done = _wait_run(client, auth, sid, run.get_json()["run_id"])
    assert done["status"] == "delivered", done
    assert [d["status"] for d in done["deliveries"]] == ["delivered"] * 3
    assert [d["attempts"] for d in done["deliveries"]] == [1, 1, 1]
    assert done["batch_id"] and fake_llm.message_requests()

    mail = mailbox.messages[before_mail:]
    assert len(mail) == 1
    msg = mail[0]
    assert msg["Subject"].startswith("Daily flights — ")
    assert sorted(mailbox.recipients[before_mail]) == ["cfo@example.com", "ops@example.com"]
    html = msg.get_body(preferencelist=("html",)).get_content()
    assert "<html" in html.lower() and "How many flights are there?" in html
    attachments = list(msg.iter_attachments())
    assert [a.get_content_type() for a in attachments] == ["text/csv"]
    assert f"https://sunrise.example.com/v1/batches/{done['batch_id']}/report" in \
        msg.get_body(preferencelist=("plain",)).get_content()

    posts = receiver.posts[before_posts:]
    slack = [p for p in posts if p.path == "/slack"]
    hook = [p for p in posts if p.path == "/hook"]
    assert len(slack) == 1 and len(hook) == 1
    check_block_kit(json.loads(slack[0].body))
    signed = hook[0]
    assert verify(created["secret"], signed.headers["X-Sunrise-Timestamp"], signed.body,
                  signed.headers["X-Sunrise-Signature"])
    assert not verify("another-secret", signed.headers["X-Sunrise-Timestamp"], signed.body,
                      signed.headers["X-Sunrise-Signature"])
    payload = json.loads(signed.body)
    assert payload["run_id"] == done["run_id"] and payload["schedule_id"] == sid
    assert payload["links"]["report"].startswith("https://sunrise.example.com/v1/batches/")


def test_a_failing_target_is_retried_and_the_run_is_partially_delivered(
        client, auth, launcher, mailbox, receiver, fake_llm):
    receiver.status_by_path["/broken"] = 500
    receiver.status_by_path["/gone"] = 404
    sid = _schedule(client, auth, receiver, deliver=[
        {"type": "webhook", "url": f"{receiver.url}/broken"},
        {"type": "webhook", "url": f"{receiver.url}/gone"},
        {"type": "email", "to": ["ops@example.com"]}])["schedule_id"]
    before = len(mailbox.messages)
    run_id = client.post(f"/v1/schedules/{sid}/run", headers=auth).get_json()["run_id"]
    done = _wait_run(client, auth, sid, run_id)
    assert done["status"] == "partially_delivered", done
    broken, gone, mail = done["deliveries"]
    assert (broken["status"], broken["attempts"], broken["last_error"]) == ("failed", 3, "HTTP 500")
    assert (gone["status"], gone["attempts"], gone["last_error"]) == ("failed", 1, "HTTP 404")
    assert mail["status"] == "delivered" and len(mailbox.messages) == before + 1


def test_a_false_condition_skips_the_run_without_a_model_call(
        client, auth, launcher, receiver, fake_llm):
    sid = _schedule(client, auth, receiver, condition={
        "sql": "SELECT count(*) FROM flights", "op": "<", "value": 0})["schedule_id"]
    before_posts = len(receiver.posts)
    run_id = client.post(f"/v1/schedules/{sid}/run", headers=auth).get_json()["run_id"]
    done = _wait_run(client, auth, sid, run_id)
    assert done["status"] == "skipped" and done["batch_id"] is None, done
    assert done["condition_value"] > 0
    assert fake_llm.message_requests() == []
    assert len(receiver.posts) == before_posts


def test_a_true_condition_runs_and_records_its_value(client, auth, launcher, receiver, fake_llm):
    sid = _schedule(client, auth, receiver, deliver=[
        {"type": "webhook", "url": f"{receiver.url}/hook"}], condition={
        "sql": "SELECT count(*) FROM flights", "op": ">", "value": 0})["schedule_id"]
    run_id = client.post(f"/v1/schedules/{sid}/run", headers=auth).get_json()["run_id"]
    done = _wait_run(client, auth, sid, run_id)
    assert done["status"] == "delivered" and done["condition_value"] > 0, done
    assert fake_llm.message_requests()


def test_a_due_slot_runs_once_however_many_ticks_and_a_paused_one_never(
        client, auth, settings, launcher, receiver, fake_llm):
    due = _schedule(client, auth, receiver, cron="* * * * *", timezone="UTC",
                    deliver=[{"type": "webhook", "url": f"{receiver.url}/tick"}])["schedule_id"]
    paused = _schedule(client, auth, receiver, cron="* * * * *", timezone="UTC", paused=True,
                       deliver=[{"type": "webhook", "url": f"{receiver.url}/paused"}])
    assert paused["next_run_at"] is None
    sessions = session_factory(settings.database_url)
    from shared.celery_factory import make_celery

    celery = make_celery(settings)
    now = utcnow() + dt.timedelta(minutes=2)
    started = [start_due_runs(sessions, celery, now) for _ in range(3)]
    ours = [r for batch in started for r in batch]
    with sessions() as s:
        runs = s.scalars(select(ScheduleRun).where(ScheduleRun.schedule_id == due)
                         .order_by(ScheduleRun.slot)).all()
        assert s.scalar(select(func.count()).select_from(ScheduleRun)
                        .where(ScheduleRun.schedule_id == paused["schedule_id"])) == 0
    # The latest slot runs; the one missed before it is recorded as skipped.
    assert [r.status for r in runs][-1] == "running" and len(runs) >= 2
    assert all(r.status == "skipped" and r.reason.startswith("missed") for r in runs[:-1])
    assert runs[-1].id in ours and len([r for r in ours if r == runs[-1].id]) == 1
    done = _wait_run(client, auth, due, runs[-1].id)
    assert done["status"] == "delivered"
    assert len(receiver.at("/tick")) == 1 and receiver.at("/paused") == []


def test_a_delivery_taken_over_after_a_crash_sends_only_what_was_not_sent(
        client, auth, settings, launcher, mailbox, receiver, fake_llm):
    """A worker killed mid-delivery leaves the run claimed with some targets done: once
    the claim is older than the lease, the next delivery (sent by the tick) sends the
    rest only, and the run ends delivered once."""
    from sqlalchemy import update

    from shared.celery_factory import make_celery
    from shared.events import EventLog
    from shared.redis_client import redis_for
    from worker.schedules.runner import ScheduleRunner
    from worker.schedules.tick import DELIVERY_LEASE, RESEND_AFTER, resend_stale

    sid = _schedule(client, auth, receiver, deliver=[
        {"type": "webhook", "url": f"{receiver.url}/first"},
        {"type": "webhook", "url": f"{receiver.url}/second"}])["schedule_id"]
    run_id = client.post(f"/v1/schedules/{sid}/run", headers=auth).get_json()["run_id"]
    done = _wait_run(client, auth, sid, run_id)
    assert done["status"] == "delivered"
    # As a crash after the first target would have left it: claimed, second not sent.
    sessions = session_factory(settings.database_url)
    first = done["deliveries"][0]
    with sessions.begin() as s:
        s.execute(update(ScheduleRun).where(ScheduleRun.id == run_id).values(
            status="running", finished_at=None, deliveries=[first],
            delivery_claimed_at=utcnow() - DELIVERY_LEASE / 2))
    runner = ScheduleRunner(settings, None, EventLog(redis_for(settings.redis_url)))
    assert runner.deliver(run_id) is None  # the claim still holds: nothing sent
    assert len(receiver.at("/second")) == 1
    # The worker died: its claim outlives the lease, and the tick sends the run again.
    with sessions.begin() as s:
        s.execute(update(ScheduleRun).where(ScheduleRun.id == run_id).values(
            delivery_claimed_at=utcnow() - DELIVERY_LEASE - dt.timedelta(minutes=1)))
    assert resend_stale(sessions, make_celery(settings), utcnow() + RESEND_AFTER) >= 1
    ended = _wait_run(client, auth, sid, run_id)
    assert ended["status"] == "delivered", ended
    assert len(receiver.at("/first")) == 1 and len(receiver.at("/second")) == 2


def test_a_tenant_over_its_block_budget_starts_no_scheduled_batch(
        client, auth, settings, launcher, receiver, fake_llm):
    """A schedule's run is new work: over a block budget it ends failed, naming the
    budget, with no batch started and no model call (issue 38 §4)."""
    from decimal import Decimal

    from shared.db import session_scope
    from shared.models import LlmCall, new_id
    from tests.people.helpers import tenant_of

    sid = _schedule(client, auth, receiver, deliver=[
        {"type": "webhook", "url": f"{receiver.url}/over-budget"}])["schedule_id"]
    budget = client.patch("/v1/tenant", headers=auth, json={
        "budget": {"monthly_usd": 1, "on_exceed": "block"}})
    assert budget.status_code == 200, budget.get_data(as_text=True)
    tenant_id, _ = tenant_of(settings, auth["Authorization"].split()[1])
    with session_scope(settings.database_url) as s:
        s.add(LlmCall(job_id=new_id(), tenant_id=tenant_id, round=0, model="m",
                      created_at=utcnow(), cost_usd=Decimal("1.5")))
    try:
        run_id = client.post(f"/v1/schedules/{sid}/run", headers=auth).get_json()["run_id"]
        done = _wait_run(client, auth, sid, run_id)
        assert done["status"] == "failed" and done["batch_id"] is None, done
        assert "budget" in done["reason"], done
        assert fake_llm.message_requests() == []
        assert receiver.at("/over-budget") == []
    finally:  # the tenant is shared by the module's other tests
        client.patch("/v1/tenant", headers=auth, json={"budget": None})
