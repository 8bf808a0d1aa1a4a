"""A cron expression read on the wall clock of an IANA time zone: the one cron owner.

Dataset refresh (``shared/refresh_schedule.py``) and report schedules
(``shared/schedules/``) both validate and advance their crons here. Times stored and
compared are naive UTC (``shared/models.py``); the cron is read in ``timezone``, so
"0 7 * * 1" in Europe/Berlin fires at 07:00 Berlin time in winter and summer alike.

Daylight-saving changes: a wall time skipped by the spring-forward (02:30 on the last
Sunday of March in Berlin) fires once, at the first instant after the gap (croniter's
behaviour); a wall time repeated by the fall-back fires once, at its first occurrence,
when the cron names its hours. A cron whose hour field is ``*`` fires in both repeated
hours: "every 30 minutes" keeps being every 30 minutes of real time.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import zoneinfo

from croniter import croniter

from shared.errors import ValidationFailed

# Firings examined to find the shortest gap of a cron (see ``min_gap``).
_CHECK_FROM = dt.datetime(2027, 1, 1)
_CHECK_SPAN = dt.timedelta(days=366)
_CHECK_FIRINGS = 600


@dataclasses.dataclass(frozen=True)
class CronSchedule:
    """A checked cron in a zone: build it with ``CronSchedule.parse``."""

    cron: str
    timezone: str

    @classmethod
    def parse(cls, cron: str, timezone: str, *, field: str = "",
              min_interval: dt.timedelta | None = None) -> CronSchedule:
        """The schedule, or ValidationFailed naming ``[<field>.]cron`` or
        ``[<field>.]timezone``: a cron croniter cannot read (five fields; seconds are not
        taken), a zone zoneinfo does not know, or (with ``min_interval``) a cron firing
        more often than that."""
        prefix = f"{field}." if field else ""
        cron = " ".join(str(cron).split())
        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            raise ValidationFailed(f"{prefix}cron: {cron!r} is not a cron expression of "
                                   "five fields (minute hour day month weekday), e.g. "
                                   "'0 6 * * *'.", field=f"{prefix}cron")
        zone = zone_of(timezone, field=f"{prefix}timezone")
        if min_interval is not None:
            gap = min_gap(cron, zone)
            if gap is not None and gap < min_interval:
                raise ValidationFailed(
                    f"{prefix}cron: {cron!r} fires {_minutes(gap)} apart at times; it may "
                    f"fire at most every {_minutes(min_interval)}.", field=f"{prefix}cron")
        return cls(cron, zone.key)

    def next_after(self, after: dt.datetime) -> dt.datetime:
        """The first firing strictly after ``after`` (naive UTC), as naive UTC."""
        zone = zoneinfo.ZoneInfo(self.timezone)
        local = after.replace(tzinfo=dt.UTC).astimezone(zone)
        it = croniter(self.cron, local)
        names_hours = self.cron.split()[1] != "*"
        while True:
            fire = it.get_next(dt.datetime)
            if names_hours and _repeated(fire):
                continue
            return fire.astimezone(dt.UTC).replace(tzinfo=None)

    def latest_at_or_before(self, now: dt.datetime, since: dt.datetime) -> dt.datetime | None:
        """The last firing in ``(since, now]`` (naive UTC), None if there is none. Walks
        forward from ``since``: callers bound ``since`` (a missed-slot window)."""
        latest, fire = None, self.next_after(since)
        while fire <= now:
            latest, fire = fire, self.next_after(fire)
        return latest

    def as_dict(self) -> dict[str, str]:
        return {"cron": self.cron, "timezone": self.timezone}


def zone_of(timezone: str, *, field: str) -> zoneinfo.ZoneInfo:
    """The zone named ``timezone``, or ValidationFailed naming ``field``."""
    try:
        return zoneinfo.ZoneInfo(str(timezone))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationFailed(f"{field}: {timezone!r} is not an IANA time zone, e.g. "
                               "'Europe/Berlin' or 'UTC'.", field=field) from None


def _repeated(fire: dt.datetime) -> bool:
    """True if ``fire`` is the second occurrence of a wall time the fall-back repeats."""
    return fire.utcoffset() != fire.replace(fold=0).utcoffset()


def min_gap(cron: str, zone: zoneinfo.ZoneInfo) -> dt.timedelta | None:
    """The shortest time between two firings over a year (at most ``_CHECK_FIRINGS``
    of them: a cron firing that often is refused long before), None if it fired once."""
    start = _CHECK_FROM.replace(tzinfo=zone)
    it = croniter(cron, start)
    previous, shortest = None, None
    for _ in range(_CHECK_FIRINGS):
        fire = it.get_next(dt.datetime)
        if previous is not None:
            gap = fire.astimezone(dt.UTC) - previous.astimezone(dt.UTC)
            shortest = gap if shortest is None else min(shortest, gap)
        if fire - start > _CHECK_SPAN:
            break
        previous = fire
    return shortest


def _minutes(gap: dt.timedelta) -> str:
    minutes = gap.total_seconds() / 60
    return f"{minutes:g} minute" + ("" if minutes == 1 else "s")
