"""The baseline of the engine-overhead figure: bare Celery with Sunrise's own Celery
configuration (``shared.celery_factory.make_celery``: threads pool, late acks, JSON) and one task
that does nothing but count itself done (one Redis INCR, so the bench can see it end).

``celery -A bench.noop_worker worker --pool threads ...`` finds ``app`` through the
module ``__getattr__``, so importing this module has no side effects.
"""
from __future__ import annotations

import functools

from celery import Celery

from shared.celery_factory import make_celery
from shared.config import get_settings
from shared.redis_client import redis_for

NOOP_TASK = "bench.noop"
DONE_KEY = "sunrise:bench:noop-done"


@functools.cache
def create_app() -> Celery:
    settings = get_settings()
    app = make_celery(settings)

    @app.task(name=NOOP_TASK)
    def noop(_job_id: str) -> None:
        redis_for(settings.redis_url).incr(DONE_KEY)

    return app


def __getattr__(name: str):
    if name == "app":
        return create_app()
    raise AttributeError(name)
