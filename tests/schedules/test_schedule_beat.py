"""Real Celery beat with a schedule every minute (bounded: two slots): each slot is
delivered exactly once by email and by a signed webhook, across a beat restart in the
middle of a slot and with two beats running at once by mistake."""
from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import select

from shared.db import session_factory
from shared.models import ScheduleRun
from shared.webhooks import verify
from tests.utils.waiting import wait_until


@pytest.fixture
def settings(delivery_settings):
    return delivery_settings


def test_every_minute_delivers_once_per_slot_across_a_beat_restart(
        client, auth, settings, launcher, mailbox, receiver, fake_llm):
    created = client.post("/v1/schedules", headers=auth, json={
        "name": "Minutely", "questions": ["How many flights are there?"],
        "cron": "* * * * *", "timezone": "UTC",
        "deliver": [{"type": "email", "to": ["ops@example.com"]},
                    {"type": "webhook", "url": f"{receiver.url}/beat"}]}).get_json()
    sid = created["schedule_id"]
    sessions = session_factory(settings.database_url)

    def runs() -> list[ScheduleRun]:
        with sessions() as s:
            return list(s.scalars(select(ScheduleRun).where(ScheduleRun.schedule_id == sid)
                                  .order_by(ScheduleRun.slot)))

    def delivered(n: int):
        done = [r for r in runs() if r.status == "delivered"]
        return done if len(done) >= n else None

    beat = launcher.beat()
    assert wait_until(lambda: delivered(1), timeout=100), launcher.logs()
    # Restart beat within the slot that follows, then run two at once by mistake.
    first_slot = runs()[0].slot
    beat.stop()
    launcher.beat()
    launcher._start("beat-twin", ["beat", "--loglevel", "INFO", "--schedule",
                                  str(launcher.workdir / "beat-twin-schedule")])
    assert wait_until(lambda: delivered(2), timeout=100), launcher.logs()
    # A few more ticks of both beats: nothing more for the slots already run.
    time.sleep(4 * settings.schedules_tick_s)
    all_runs = runs()
    slots = [r.slot for r in all_runs]
    assert len(slots) == len(set(slots)) and slots[0] == first_slot
    finished = [r for r in all_runs if r.status == "delivered"]
    hooks = receiver.at("/beat")
    mails = [m for m in mailbox.messages if m["X-Sunrise-Schedule"] == sid]
    # Exactly one webhook and one mail per delivered slot, none for a slot twice.
    assert len(hooks) == len(finished) and len(mails) == len(finished)
    assert sorted(json.loads(h.body)["run_id"] for h in hooks) == sorted(r.id for r in finished)
    assert len({m["X-Sunrise-Run"] for m in mails}) == len(mails)
    assert all(verify(created["secret"], h.headers["X-Sunrise-Timestamp"], h.body,
                      h.headers["X-Sunrise-Signature"]) for h in hooks)
