"""A live dataset's source, checked when the dataset is created: its role, quickly.

A role that can write is refused before anything is kept (422 ``writable_role``, naming
one privilege it has and how to create a read-only role: ``shared/live_role.py``),
unless the source says ``allow_writable_role`` (then the dataset starts with the
warning). The check connects with short timeouts (``CONNECT_TIMEOUT_S``, statements
``CHECK_TIMEOUT_S``) so that a request never waits long on a slow source: a source that
does not answer in time is not refused here, and the import, which checks the role
again on every introspection, fails the dataset with the error instead.

Spark (``sc://``) has no role model to read (its engine's ``writable_privilege`` is
always None: what a Connect user may do is the cluster's own business), so a Spark
source is never refused for its role; opening its engine here still applies the
outbound policy and tells an unreachable server early.
"""
from __future__ import annotations

import dataclasses
import logging

from engine.datasets import DatabaseSource
from engine.datasets.sources import source_database
from shared.errors import SourceRefused, SourceUnreachable
from shared.live_role import judge_role

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3.0
CHECK_TIMEOUT_S = 5.0


def check_role_now(source: DatabaseSource, *, allow_writable: bool) -> list[str] | None:
    """The dataset's warnings from its role (``[]``: read-only), or None when the source
    did not answer in time (the import decides). Raises ``WritableRole``, and
    ``SourceRefused`` for a destination the outbound policy refuses."""
    from engine.live import LiveLimits, open_engine

    policy = dataclasses.replace(source.outbound, connect_timeout_s=min(
        source.outbound.connect_timeout_s, CONNECT_TIMEOUT_S), read_timeout_s=min(
        source.outbound.read_timeout_s, CHECK_TIMEOUT_S + 2))
    try:
        engine = open_engine(source.url, outbound=policy,
                             limits=LiveLimits(timeout_s=CHECK_TIMEOUT_S,
                                               max_concurrent_queries=1, idle_close_s=1.0))
    except SourceRefused:
        raise
    except SourceUnreachable as exc:
        logger.info("live source %s not checked at creation (%s); the import checks it",
                    source.display, exc.detail)
        return None
    try:
        tables = list(source.tables) if source.tables else None
        privilege = engine.writable_privilege(tables)
    except SourceUnreachable as exc:
        logger.info("live source %s: role not read at creation (%s)", source.display, exc.detail)
        return None
    finally:
        engine.close()
    return judge_role(privilege, display=source.display, kind=engine.name,
                      database=source_database(source), allow_writable=allow_writable)
