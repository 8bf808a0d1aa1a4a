"""The one cron owner across daylight-saving changes: a 02:30 slot in Berlin runs once on
the spring-forward day (the wall time does not exist: at 03:00 CEST) and once on the
fall-back day (the wall time exists twice: the first), while a cron that names no hours
keeps firing through both repeated hours."""
from __future__ import annotations

import datetime as dt

import pytest

from shared.cron_schedule import CronSchedule
from shared.errors import ValidationFailed


def _firings(schedule: CronSchedule, start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
    out, at = [], start
    while (at := schedule.next_after(at)) < end:
        out.append(at)
    return out


def test_a_0230_slot_on_the_spring_forward_day_runs_once():
    schedule = CronSchedule.parse("30 2 * * *", "Europe/Berlin", field="x")
    day = _firings(schedule, dt.datetime(2027, 3, 27, 22), dt.datetime(2027, 3, 28, 22))
    # 02:30 does not exist on 28 March 2027 in Berlin; it runs once, at 03:00 CEST.
    assert day == [dt.datetime(2027, 3, 28, 1, 0)]


def test_a_0230_slot_on_the_fall_back_day_runs_once():
    schedule = CronSchedule.parse("30 2 * * *", "Europe/Berlin", field="x")
    day = _firings(schedule, dt.datetime(2027, 10, 30, 22), dt.datetime(2027, 10, 31, 23))
    # 02:30 happens twice on 31 October 2027 (CEST, then CET): the first one only.
    assert day == [dt.datetime(2027, 10, 31, 0, 30)]
    assert schedule.next_after(day[0]) == dt.datetime(2027, 11, 1, 1, 30)


def test_a_cron_naming_no_hours_fires_through_both_repeated_hours():
    schedule = CronSchedule.parse("*/30 * * * *", "Europe/Berlin", field="x")
    fired = _firings(schedule, dt.datetime(2027, 10, 30, 23, 59), dt.datetime(2027, 10, 31, 2, 1))
    assert fired == [dt.datetime(2027, 10, 31, 0, 0) + dt.timedelta(minutes=30 * n)
                     for n in range(5)]


def test_a_weekly_cron_keeps_its_wall_time_in_summer_and_winter():
    schedule = CronSchedule.parse("0 7 * * 1", "Europe/Berlin", field="x")
    assert schedule.next_after(dt.datetime(2027, 1, 6)) == dt.datetime(2027, 1, 11, 6)
    assert schedule.next_after(dt.datetime(2027, 7, 6)) == dt.datetime(2027, 7, 12, 5)


def test_the_latest_missed_slot_is_found():
    schedule = CronSchedule.parse("0 * * * *", "UTC", field="x")
    assert schedule.latest_at_or_before(dt.datetime(2027, 1, 1, 5, 20),
                                        dt.datetime(2027, 1, 1, 1, 59)) == dt.datetime(2027, 1, 1, 5)
    assert schedule.latest_at_or_before(dt.datetime(2027, 1, 1, 5, 20),
                                        dt.datetime(2027, 1, 1, 5, 0)) is None


@pytest.mark.parametrize(("cron", "zone", "field"), [
    ("every monday", "UTC", "s.cron"), ("0 7 * * 1 *", "UTC", "s.cron"),
    ("0 7 * * 1", "Mars/Olympus", "s.timezone"), ("0 7 * * 1", "../etc/passwd", "s.timezone")])
def test_a_bad_cron_or_zone_names_its_field(cron, zone, field):
    with pytest.raises(ValidationFailed) as err:
        CronSchedule.parse(cron, zone, field="s")
    assert err.value.detail.startswith(field)
