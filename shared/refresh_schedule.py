"""A dataset's refresh schedule: a cron expression read in an IANA time zone.

The one owner of what a schedule may be and when it fires next: the API validates a
``PATCH {"refresh": ...}`` here, the view shows ``next_refresh_at`` computed here, and
the beat's tick (``worker/datasets/refresh_tick.py``) advances it here. Times stored
and compared are naive UTC (``shared/models.py``); the cron is read on the wall clock
of ``timezone``, so "0 6 * * *" in Europe/Berlin fires at 06:00 Berlin time in winter
and in summer alike (croniter on zone-aware datetimes handles the DST shifts).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import zoneinfo

from croniter import croniter

from shared.errors import ValidationFailed

# A refresh re-reads the source: firing more often than this is refused (a live
# dataset reads the source on every query already; a snapshot this often is a copy
# loop). Checked over the firings of a year from a fixed start (see ``_min_gap``).
MIN_INTERVAL = dt.timedelta(minutes=5)
_CHECK_FROM = dt.datetime(2027, 1, 1)
_CHECK_SPAN = dt.timedelta(days=366)
_CHECK_FIRINGS = 600


@dataclasses.dataclass(frozen=True)
class RefreshSchedule:
    """A checked schedule: build it with ``RefreshSchedule.parse``."""

    cron: str
    timezone: str

    @classmethod
    def parse(cls, cron: str, timezone: str) -> RefreshSchedule:
        """The schedule, or ValidationFailed naming the field (``refresh.cron``,
        ``refresh.timezone``): a cron croniter cannot read (five fields; seconds are not
        taken), a zone zoneinfo does not know, or a cron firing more often than every
        ``MIN_INTERVAL``."""
        cron = " ".join(cron.split())
        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            raise ValidationFailed(f"refresh.cron: {cron!r} is not a cron expression of "
                                   "five fields (minute hour day month weekday), e.g. "
                                   "'0 6 * * *'.", field="refresh.cron")
        try:
            zone = zoneinfo.ZoneInfo(timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValidationFailed(f"refresh.timezone: {timezone!r} is not an IANA time "
                                   "zone, e.g. 'Europe/Berlin' or 'UTC'.",
                                   field="refresh.timezone") from None
        gap = _min_gap(cron, zone)
        if gap is not None and gap < MIN_INTERVAL:
            raise ValidationFailed(
                f"refresh.cron: {cron!r} fires {_minutes(gap)} apart at times; a refresh "
                f"may run at most every {_minutes(MIN_INTERVAL)}.", field="refresh.cron")
        return cls(cron, timezone)

    def next_after(self, after: dt.datetime) -> dt.datetime:
        """The first firing strictly after ``after`` (naive UTC), as naive UTC."""
        zone = zoneinfo.ZoneInfo(self.timezone)
        local = after.replace(tzinfo=dt.UTC).astimezone(zone)
        fire = croniter(self.cron, local).get_next(dt.datetime)
        return fire.astimezone(dt.UTC).replace(tzinfo=None)

    def as_dict(self) -> dict[str, str]:
        return {"cron": self.cron, "timezone": self.timezone}


def _min_gap(cron: str, zone: zoneinfo.ZoneInfo) -> dt.timedelta | None:
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
