"""Checking a PATCH's re-types before they are kept: every value of each re-typed column
must convert, on the dataset's current version, or the PATCH is a 422 naming the row and
the value.

The check is ``engine/datasets/retype.py``'s ``failures_sql``, one scan per table, run in
the SQL sandbox (read-only, time and memory capped, in a process of its own) like the
examples' check (``api/example_check.py``); all of a PATCH's tables share one time
budget, ``CHECK_BUDGET_S``.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import duckdb

from engine.datasets import version_path
from engine.datasets.retype import Retype, failures_sql, refusals
from engine.sql.sandbox import SqlSandbox, sandbox_settings
from shared.config import Settings
from shared.dataset_corrections import TablePatch
from shared.errors import ServiceUnavailable, ValidationFailed

logger = logging.getLogger(__name__)

# Seconds every table's check of one PATCH may take together.
CHECK_BUDGET_S = 30.0


def plan_retypes(tables: Mapping[str, TablePatch],
                 profiles: Sequence[dict]) -> dict[str, list[Retype]]:
    """The re-types a PATCH asks for (not the ones it drops), per table, with each
    column's current type from the version's ``profiles``. Raises ``ValidationFailed``
    for a format its type does not take. Names are checked already
    (``check_corrections``)."""
    types = {t["name"]: {c["name"]: c["type"] for c in t["columns"]} for t in profiles}
    plans: dict[str, list[Retype]] = {}
    for table, part in tables.items():
        for column, asked in sorted(part.retypes().items()):
            if asked.type is None:
                continue
            retype = Retype(column, types[table][column], asked.type, asked.format)
            try:
                failures_sql(table, [retype])
            except ValueError as exc:
                raise ValidationFailed(f"{table}.{column}: {str(exc).rstrip('.')}.", table=table,
                                       column=column) from None
            plans.setdefault(table, []).append(retype)
    return plans


def check_retypes(settings: Settings, data_dir: str, dataset_id: str, version: int,
                  plans: Mapping[str, Sequence[Retype]]) -> None:
    """Raise ``ValidationFailed`` naming, for each re-typed column with values that do not
    convert, the first one's row and value (and how many there are); returns quietly
    when every value converts."""
    if not plans:
        return
    try:
        sandbox = SqlSandbox(version_path(data_dir, dataset_id, version),
                             **{**sandbox_settings(settings), "processes": 1})
    except (duckdb.Error, RuntimeError) as exc:
        logger.warning("dataset %s v%s: cannot open it to check re-types: %s", dataset_id,
                       version, exc)
        raise ServiceUnavailable(f"Version {version} of dataset {dataset_id} cannot be "
                                 "opened to check the re-types; try again.",
                                 retry_after=5) from None
    deadline = time.monotonic() + CHECK_BUDGET_S
    refused = []
    try:
        for table, plan in plans.items():
            result = sandbox.run(failures_sql(table, plan),
                                 timeout_s=max(0.1, deadline - time.monotonic()),
                                 label=f"dataset {dataset_id} re-type check of {table}")
            if result.is_error:
                raise ValidationFailed(
                    f"The re-types of {table} could not be checked on every value: "
                    f"{result.error}. Re-type fewer columns at once.", table=table)
            refused += refusals(table, plan, result.rows[0])
    finally:
        sandbox.close()
    if refused:
        raise ValidationFailed("Not every value converts: "
                               + "; ".join(r.message() for r in refused) + ".",
                               failures=[r.as_dict() for r in refused])
