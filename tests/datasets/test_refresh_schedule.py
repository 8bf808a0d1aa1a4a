"""Scheduled refresh: PATCH a cron and a time zone, see next_refresh_at, and drive the
beat's tick with a given "now" against the real app database and a real worker: the
refresh runs at its cron time in its zone, each slot once, and a failed refresh keeps
the version serving with its error recorded."""
from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from sqlalchemy import select, update

from shared.db import session_factory, session_scope
from shared.models import Dataset, DatasetRefreshSlot
from shared.refresh_schedule import RefreshSchedule
from tests.utils.datasets import upload, wait_imported
from worker.datasets.refresh_tick import start_due_refreshes

pytestmark = pytest.mark.usefixtures("celery_worker")

BERLIN_SIX = {"cron": "0 6 * * *", "timezone": "Europe/Berlin"}


def _parse_iso(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)


def test_the_cron_is_read_on_the_wall_clock_of_its_zone_across_dst():
    schedule = RefreshSchedule.parse("0 6 * * *", "Europe/Berlin")
    assert schedule.next_after(dt.datetime(2027, 1, 10, 12)) == dt.datetime(2027, 1, 11, 5)
    assert schedule.next_after(dt.datetime(2027, 7, 10, 12)) == dt.datetime(2027, 7, 11, 4)
    # Just before and at the slot: the slot itself, then the next day's.
    assert schedule.next_after(dt.datetime(2027, 1, 11, 4, 59)) == dt.datetime(2027, 1, 11, 5)
    assert schedule.next_after(dt.datetime(2027, 1, 11, 5)) == dt.datetime(2027, 1, 12, 5)


@pytest.fixture
def ready_dataset(client, auth) -> str:
    dataset_id = upload(client, auth, "Sched", ("t.csv", "a,b\n1,2\n3,4\n")).get_json()["dataset_id"]
    assert wait_imported(client, auth, dataset_id)["status"] == "ready"
    return dataset_id


@pytest.mark.parametrize(("refresh", "field"), [
    ({"cron": "every day", "timezone": "UTC"}, "refresh.cron"),
    ({"cron": "0 6 * * *", "timezone": "Mars/Olympus"}, "refresh.timezone"),
    ({"cron": "*/2 * * * *", "timezone": "UTC"}, "refresh.cron"),
])
def test_a_bad_schedule_is_a_422_naming_its_field(client, auth, ready_dataset, refresh, field):
    resp = client.patch(f"/v1/datasets/{ready_dataset}", headers=auth, json={"refresh": refresh})
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["detail"].startswith(field)
    view = client.get(f"/v1/datasets/{ready_dataset}", headers=auth).get_json()
    assert view["refresh"] is None and view["next_refresh_at"] is None


def test_a_scheduled_refresh_runs_at_its_cron_time_in_its_zone_once_per_slot(
        client, auth, settings, celery_app, ready_dataset):
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    view = client.patch(f"/v1/datasets/{ready_dataset}", headers=auth,
                        json={"refresh": BERLIN_SIX}).get_json()
    assert view["refresh"] == BERLIN_SIX
    slot = _parse_iso(view["next_refresh_at"])
    assert slot == RefreshSchedule.parse(**BERLIN_SIX).next_after(before)
    # 06:00 on Berlin's wall clock, whatever the season.
    berlin = slot.replace(tzinfo=dt.UTC).astimezone(zoneinfo.ZoneInfo("Europe/Berlin"))
    assert (berlin.hour, berlin.minute) == (6, 0)

    sessions = session_factory(settings.database_url)
    assert start_due_refreshes(sessions, celery_app, now=slot - dt.timedelta(seconds=1)) == []
    started = start_due_refreshes(sessions, celery_app, now=slot + dt.timedelta(seconds=1))
    assert started == [(ready_dataset, 2)]
    # The same tick again, and a tick that still sees the old slot (a second beat that
    # read it before the first committed): neither starts a second refresh.
    assert start_due_refreshes(sessions, celery_app, now=slot + dt.timedelta(seconds=2)) == []
    with session_scope(settings.database_url) as s:
        s.execute(update(Dataset).where(Dataset.id == ready_dataset)
                  .values(next_refresh_at=slot))
    assert start_due_refreshes(sessions, celery_app, now=slot + dt.timedelta(seconds=3)) == []

    done = wait_imported(client, auth, ready_dataset)
    assert done["status"] == "ready" and done["version"] == 2, done
    assert _parse_iso(done["next_refresh_at"]) == slot + dt.timedelta(days=1)
    with session_scope(settings.database_url) as s:
        slots = s.execute(select(DatasetRefreshSlot.slot_at, DatasetRefreshSlot.version)
                          .where(DatasetRefreshSlot.dataset_id == ready_dataset)).all()
    assert [tuple(r) for r in slots] == [(slot, 2)]

    cleared = client.patch(f"/v1/datasets/{ready_dataset}", headers=auth, json={"refresh": None})
    assert cleared.get_json()["refresh"] is None and cleared.get_json()["next_refresh_at"] is None
    assert start_due_refreshes(sessions, celery_app, now=slot + dt.timedelta(days=30)) == []


def test_a_scheduled_refresh_that_fails_keeps_the_version_serving(
        client, auth, settings, celery_app, ready_dataset):
    view = client.patch(f"/v1/datasets/{ready_dataset}", headers=auth,
                        json={"refresh": {"cron": "*/5 * * * *"}}).get_json()
    assert view["refresh"] == {"cron": "*/5 * * * *", "timezone": "UTC"}
    with session_scope(settings.database_url) as s:  # the source file is gone
        row = s.get(Dataset, ready_dataset)
        row.sources = [{**row.sources[0], "path": row.sources[0]["path"] + ".gone"}]
    slot = _parse_iso(view["next_refresh_at"])
    started = start_due_refreshes(session_factory(settings.database_url), celery_app,
                                  now=slot)
    assert started == [(ready_dataset, 2)]
    done = wait_imported(client, auth, ready_dataset)
    assert done["status"] == "ready" and done["version"] == 1, done
    assert done["error"]["version"] == 2 and "Version 1 keeps serving" in done["error"]["detail"]
