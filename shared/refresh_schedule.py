"""A dataset's refresh schedule: a cron expression read in an IANA time zone.

What a refresh schedule may be: the API validates a ``PATCH {"refresh": ...}`` here, the
view shows ``next_refresh_at`` computed here, and the beat's tick
(``worker/datasets/refresh_tick.py``) advances it here. The cron arithmetic itself
(zones, daylight-saving changes) is ``shared/cron_schedule.py``'s, shared with report
schedules.
"""
from __future__ import annotations

import datetime as dt

from shared.cron_schedule import CronSchedule

# A refresh re-reads the source: firing more often than this is refused (a live
# dataset reads the source on every query already; a snapshot this often is a copy
# loop). Checked over the firings of a year from a fixed start.
MIN_INTERVAL = dt.timedelta(minutes=5)


class RefreshSchedule(CronSchedule):
    """A checked refresh schedule: build it with ``RefreshSchedule.parse``."""

    @classmethod
    def parse(cls, cron: str, timezone: str) -> RefreshSchedule:  # type: ignore[override]
        """The schedule, or ValidationFailed naming ``refresh.cron`` or
        ``refresh.timezone`` (see ``CronSchedule.parse``); at most every
        ``MIN_INTERVAL``."""
        checked = CronSchedule.parse(cron, timezone, field="refresh", min_interval=MIN_INTERVAL)
        return cls(checked.cron, checked.timezone)
