"""Entry point for ``celery -A worker.celery_app``: the app is built on first access.

Module ``__getattr__`` keeps importing this module free of side effects; Celery's
app finder asks for ``app`` and gets the configured instance.
"""
from __future__ import annotations

import functools

from celery import Celery

from shared.config import get_settings
from shared.queue import make_celery
from worker.observability import install_observability
from worker.tasks import register_tasks


@functools.cache
def create_app() -> Celery:
    app = make_celery(get_settings())
    register_tasks(app, get_settings)
    install_observability(app, get_settings)
    return app


def __getattr__(name: str):
    if name == "app":
        return create_app()
    raise AttributeError(name)
