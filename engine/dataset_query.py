"""One statement on a stored dataset, whatever its mode, as one principal: what the API's
``run_sql`` (``api/services/dataset_sql.py``), a verified query's check
(``api/services/verified_queries.py``) and a schedule's condition
(``worker/schedules/runner.py``) run, with the safety of the model's own queries.

``dataset_target(session, dataset_id, version, principal)`` reads, in the caller's
session, where the statement runs -- the version's DuckDB file (the deployment's
built-in file when ``dataset_id`` is None) or, for a live dataset, its source (the URL
still sealed) -- and the row policies and masks binding the principal
(``engine.policies.stored_policies``: the worker's ``applied_for`` and ``PolicedQueries``
in the version's dialect, so PostgreSQL statements are rewritten and MariaDB or Spark
ones refused under a rule, exactly as a job's).

``run_on_dataset(settings, target, sql, label=...)`` opens the data, runs the statement
through the rules and closes what it opened, holding no session meanwhile:

- a snapshot in the SQL sandbox (``engine/sql/sandbox.py``: read-only, one read
  statement, time and memory capped), opened for the call, or the process's shared one
  with ``shared_sandbox=True`` (the worker, which keeps them anyway);
- a live source through ``open_live``, which the worker's jobs open their engines with
  too (``worker/jobs/data_source.py``): the outbound policy on every connection, the SQL
  tool's timeout and row and byte caps, the fleet's ``max_concurrent_queries`` slots in
  Redis, the statement check and the read-only session of ``engine.live``. The engine is
  opened for the statement and closed after it: these callers are rare (a person's
  query, an admin's check, one condition per schedule slot) and an API process has no
  sweep that would close an idle engine, so a kept one would hold a connection to the
  source for as long as the process lives. Opening costs one connection, which the
  statement then reuses; an unreachable source fails within the outbound connect
  timeout, a silent one within the SQL timeout (``open_engine`` caps reads by it).

The result is the ``QueryResult`` the model's tool gets (a refused or failing statement
is a failed result, never an exception), so its text is the tool's.

``statement_problem`` says, without running anything, why a statement would be refused
on a dataset -- the sandbox's check for DuckDB data, the live engine's check in the
dialect of a live one's current version (a schedule's condition when it is saved).
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb
from sqlalchemy import and_, select

from engine.datasets import version_path
from engine.policies import FilterRefused, StoredPolicies, stored_policies
from engine.sql.query_result import QueryResult
from engine.sql.sandbox import SqlSandbox, get_sandbox, read_statement_problem, sandbox_settings
from shared.config import Settings
from shared.errors import (
    Conflict,
    ImportFailed,
    ServiceUnavailable,
    SourceUnreachable,
    ValidationFailed,
)
from shared.models import Dataset, DatasetVersion
from shared.outbound import OutboundPolicy
from shared.redis_client import redis_for
from shared.sealed import UnreadableSecret, unseal

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5


@dataclass(frozen=True)
class DatasetTarget:
    """Where one statement runs and the rules it runs under (``dataset_target``)."""

    dataset_id: str | None  # None: the deployment's built-in dataset
    version: int | None
    mode: str  # "snapshot" or "live"
    sealed_url: str | None  # a live dataset's source, as stored
    rules: StoredPolicies | None

    def __repr__(self) -> str:  # never the URL, even sealed
        return (f"DatasetTarget(dataset={self.dataset_id}, version={self.version}, "
                f"mode={self.mode})")


def dataset_target(session: Any, dataset_id: str | None, version: int | None,
                   principal: Any) -> DatasetTarget:
    """The target of a statement on ``version`` of ``dataset_id`` (pinned by the caller,
    access already checked) read as ``principal``."""
    row = (session.execute(select(Dataset.mode, Dataset.source_url)
                           .where(Dataset.id == dataset_id)).first() if dataset_id else None)
    mode = (row.mode if row is not None else None) or "snapshot"
    return DatasetTarget(dataset_id, version, mode, row.source_url if row is not None else None,
                         stored_policies(session, dataset_id, version, principal))


def run_on_dataset(settings: Settings, target: DatasetTarget, sql: str, *, label: str,
                   shared_sandbox: bool = False) -> QueryResult:
    """Run ``sql`` on ``target`` under its rules (see the module doc). Raises
    ``ServiceUnavailable`` when the data cannot be opened now (a snapshot file, an
    unreachable live source, a URL no configured key unseals), ``ValidationFailed`` when
    the outbound policy refuses the source as stored, ``Conflict`` when a stored row
    policy cannot be bound (an admin must correct it)."""
    with _opened(settings, target, shared_sandbox) as handle:
        try:
            policed = target.rules.police(handle) if target.rules is not None else handle
        except FilterRefused as exc:
            raise Conflict(f"A row policy of dataset {target.dataset_id} cannot be applied "
                           f"({exc}); an admin must correct it.") from None
        return policed.run(sql.strip(), label=label)


def statement_problem(session: Any, tenant_id: int, dataset_id: str | None,
                      sql: str) -> str | None:
    """Why ``sql`` is not one read-only statement ``dataset_id`` (None: the tenant's
    default dataset, else the built-in data) would run, or None. A live dataset whose
    first introspection has not finished has no dialect yet: its statement is checked
    when it runs."""
    where = (Dataset.id == dataset_id if dataset_id is not None
             else Dataset.is_default.is_(True))
    row = session.execute(
        select(Dataset.mode, DatasetVersion.engine)
        .outerjoin(DatasetVersion, and_(DatasetVersion.dataset_id == Dataset.id,
                                        DatasetVersion.version == Dataset.version))
        .where(where, Dataset.tenant_id == tenant_id, Dataset.deleted_at.is_(None))
        .limit(1)).first()
    if row is None or row.mode != "live":
        return read_statement_problem(sql)
    if not row.engine:
        return None
    from engine.live import read_statement_problem as live_statement_problem

    return live_statement_problem(sql, row.engine)


def open_live(settings: Settings, dataset_id: str, url: str) -> Any:
    """The live engine of ``dataset_id``'s source ``url`` (unsealed) as every Sunrise
    process opens it: the outbound policy, the SQL tool's limits, the fleet's query slots.
    Raises ``engine.live.open_engine``'s ``ImportFailed`` family."""
    from engine.live import LiveLimits, open_engine

    return open_engine(url, outbound=OutboundPolicy.from_settings(settings),
                       limits=LiveLimits.from_settings(settings),
                       redis=redis_for(settings.redis_url), dataset=dataset_id)


@contextmanager
def _opened(settings: Settings, target: DatasetTarget, shared_sandbox: bool) -> Iterator[Any]:
    if target.mode == "live":
        engine = _open_source(settings, target)
        try:
            yield engine
        finally:
            engine.close()
        return
    path = (version_path(settings.data_dir, target.dataset_id, target.version)
            if target.dataset_id else settings.duckdb_path)
    if shared_sandbox:  # the process keeps it: not closed here
        yield get_sandbox(path, **sandbox_settings(settings))
        return
    try:
        sandbox = SqlSandbox(path, **{**sandbox_settings(settings), "processes": 1})
    except (duckdb.Error, RuntimeError) as exc:
        logger.warning("dataset %s v%s: cannot open it: %s", target.dataset_id,
                       target.version, exc)
        raise ServiceUnavailable("The dataset cannot be opened right now; try again.",
                                 retry_after=RETRY_AFTER_S) from None
    try:
        yield sandbox
    finally:
        sandbox.close()


def _open_source(settings: Settings, target: DatasetTarget) -> Any:
    """The live engine of ``target``, its errors as the caller can answer them."""
    name = f"Dataset {target.dataset_id}'s source"
    try:
        url = unseal(settings.secret_keys, target.sealed_url or "")
    except UnreadableSecret:
        logger.warning("dataset %s: its source URL opens with none of the secret keys",
                       target.dataset_id)
        raise ServiceUnavailable(f"{name} cannot be opened: its stored URL opens with none "
                                 "of this deployment's secret keys (an operator must fix "
                                 "SUNRISE_SECRET_KEYS).", retry_after=RETRY_AFTER_S) from None
    try:
        return open_live(settings, target.dataset_id, url)
    except SourceUnreachable as exc:
        logger.info("dataset %s: source unreachable: %s", target.dataset_id, exc.detail)
        raise ServiceUnavailable(f"{name} cannot be reached right now: {exc.detail}",
                                 retry_after=RETRY_AFTER_S, source_error=exc.code) from None
    except ImportFailed as exc:  # refused by the outbound policy, or not such a URL
        raise ValidationFailed(f"{name} is refused: {exc.detail}",
                               source_error=exc.code) from None
