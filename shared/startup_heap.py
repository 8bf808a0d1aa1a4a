"""A long-running process's start-up objects, kept out of the garbage collector's way.

Why: a worker or API process imports thousands of modules' worth of objects (the
SDK, pydantic models, Celery, SQLAlchemy, Flask) that live as long as the process.
CPython's full (generation 2) collection walks every one of them: measured on figure
4's stack, 120-155 ms per collection in the worker and the API alike, about once a
minute under load, stopping every thread, so the job it hits waits that long for
its terminal event (figure 4's p99). Frozen after start-up they sit in the permanent
generation, which collections skip; only what the process allocates afterwards is
walked.
"""
from __future__ import annotations

import gc
import logging

logger = logging.getLogger(__name__)


def freeze_startup_objects() -> None:
    """Collect once, then move every object the process holds now to the permanent
    generation (``gc.freeze``); call it when start-up is over. Objects created later
    are collected as usual."""
    gc.collect()
    gc.freeze()
    logger.debug("%d start-up objects frozen out of garbage collection", gc.get_freeze_count())
