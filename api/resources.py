"""Per-app resources (settings, DB sessions, Redis, Celery, event log), built lazily."""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

from celery import Celery
from flask import Flask, current_app
from sqlalchemy.orm import Session

from api.event_hub import BLOCK_MS, EventHub
from api.tenant_cache import TenantCache
from shared.celery_factory import make_celery
from shared.config import Settings
from shared.db import session_factory
from shared.driver_sql import DriverSQL
from shared.events import EventLog
from shared.redis_client import dedicated_redis, redis_for


class Resources:
    """What the app's requests share; one per app (``init_app``), found with
    ``resources()``. Redis, Celery and the event hubs are built on first use."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.sessions = session_factory(settings.database_url)

    @functools.cached_property
    def driver(self) -> DriverSQL:
        """Transactions of prebuilt statements on the sessions' pool, run on the DBAPI
        cursor (``shared/driver_sql.py``): the submit's hot path."""
        return DriverSQL(self.sessions.kw["bind"])

    @functools.cached_property
    def tenant_ids(self) -> TenantCache:
        """Valid keys' tenants, remembered for ``key_cache_s`` (a revoked key's grace)."""
        return TenantCache(self.settings.key_cache_s)

    @functools.cached_property
    def redis(self):
        return redis_for(self.settings.redis_url)

    @functools.cached_property
    def celery(self) -> Celery:
        return make_celery(self.settings)

    @functools.cached_property
    def events(self) -> EventLog:
        return self._event_log()

    @functools.cached_property
    def event_hub(self) -> EventHub:
        """Wakes every client waiting for job events through one Redis reader."""
        return EventHub(self.events, self._hub_connection)

    @functools.cached_property
    def batch_events(self) -> EventLog:
        return self._event_log("batch")

    @functools.cached_property
    def batch_event_hub(self) -> EventHub:
        """The same for batch progress streams."""
        return EventHub(self.batch_events, self._hub_connection)

    @functools.cached_property
    def dataset_events(self) -> EventLog:
        """Dataset imports' progress streams (``shared/dataset_state.import_stream``)."""
        return self._event_log("dataset")

    @functools.cached_property
    def dataset_event_hub(self) -> EventHub:
        return EventHub(self.dataset_events, self._hub_connection)

    def _event_log(self, kind: str = "job") -> EventLog:
        return EventLog(self.redis, maxlen=self.settings.events_maxlen,
                        ttl_s=self.settings.events_ttl_s, kind=kind)

    def _hub_connection(self):
        # Longer than the hub's blocking read, so only a hung Redis trips it.
        return dedicated_redis(self.settings.redis_url, socket_timeout=BLOCK_MS / 1000 + 5)

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A short-lived session: commit on success, rollback on error, always closed."""
        with self.sessions() as s, s.begin():
            yield s


def init_app(app: Flask, settings: Settings) -> None:
    app.extensions["sunrise"] = Resources(settings)


def resources() -> Resources:
    return current_app.extensions["sunrise"]
