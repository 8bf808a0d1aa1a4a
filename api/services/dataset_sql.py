"""Running one caller-written SQL statement on a dataset (``POST /v1/datasets/{id}/sql``
and the MCP ``run_sql`` tool): the same guarded, bounded execution and the same result
text as the model's ``execute_sql`` tool.

The statement runs through ``engine.dataset_query`` on the dataset's current version,
whatever its mode: a snapshot in the SQL sandbox (read-only, one read statement, time
and memory capped, in a process of its own), a live dataset on its source with the
safety of the model's live queries (statement check, read-only session, timeout, row and
byte caps, the fleet's query slots, the outbound policy); either is opened for the call
and closed after it. Its text is ``engine/sql/result_text.py``'s. A live source that
cannot be reached is a 503 saying so, within the outbound connect timeout.

The caller reads what their jobs would: a dataset whose ``access`` does not grant them is
NotFound (``pin_dataset`` with the principal), and the dataset's row policies and masks
binding them rewrite the statement (``engine.policies.stored_policies``, the worker's
rules; a live MariaDB or Spark dataset under one refuses it, as a job's query), so
neither the rows nor the text carry hidden rows or masked values.
"""
from __future__ import annotations

from typing import Any

from engine.dataset_query import dataset_target, run_on_dataset
from engine.sql.result_text import result_text
from shared.dataset_state import pin_dataset
from shared.errors import Forbidden, ServiceUnavailable, ValidationFailed
from shared.principal import Principal

SCOPE = "datasets"  # the key scope run_sql needs: it bypasses the model
MAX_SQL_CHARS = 20_000


def run_dataset_sql(res, principal: Principal, dataset_id: str | None, sql: str) -> dict[str, Any]:
    """Run ``sql`` on ``dataset_id`` (None: the default or built-in dataset).

    Returns ``{"dataset_id", "dataset_version", "text", "rows", "sql"}``; a statement
    the guard, DuckDB or the live source refuses is a ValidationFailed whose detail is
    the tool's ``error: ...`` text. Raises Forbidden without the ``datasets`` scope,
    NotFound for another tenant's dataset, Conflict for one not ready or under a row
    policy that cannot be bound, ServiceUnavailable when its data cannot be opened now
    or the query failed for the source's sake, not the statement's (a live source
    unreachable or lost mid-query, its query slots busy or out of reach).
    """
    if SCOPE not in principal.scopes:
        raise Forbidden(f"run_sql needs a key with the '{SCOPE}' scope.")
    if not isinstance(sql, str) or not sql.strip():
        raise ValidationFailed("sql: give one SELECT statement.")
    if len(sql) > MAX_SQL_CHARS:
        raise ValidationFailed(f"sql: at most {MAX_SQL_CHARS} characters.")
    with res.session() as s:
        pinned, version = pin_dataset(s, principal.tenant_id, dataset_id, principal)
        target = dataset_target(s, pinned, version, principal)
    settings = res.settings
    result = run_on_dataset(settings, target, sql, label=f"run_sql dataset {pinned}")
    text = result_text(result, 1, settings.tool_result_format, settings.tool_result_max_rows)
    if result.is_error and result.retryable:  # the source, not the statement
        raise ServiceUnavailable(text, retry_after=5)
    if result.is_error:
        raise ValidationFailed(text, sql=result.sql)
    return {"dataset_id": pinned, "dataset_version": version, "sql": result.sql,
            "rows": result.total_rows, "text": text}
