"""Running one caller-written SQL statement on a dataset (``POST /v1/datasets/{id}/sql``
and the MCP ``run_sql`` tool): the same guarded, bounded execution and the same result
text as the model's ``execute_sql`` tool.

The statement runs in the SQL sandbox (``engine/sql/sandbox.py``: read-only, one read
statement, time and memory capped, in a process of its own) on the dataset's current
version, opened for the call and closed after it, as the example check does
(``api/example_check.py``); its text is ``engine/sql/result_text.py``'s. Live datasets
are refused for now: their queries run through the worker's live engines.

The caller reads what their jobs would: a dataset whose ``access`` does not grant them is
NotFound (``pin_dataset`` with the principal), and the dataset's row policies and masks
binding them rewrite the statement (``engine.policies.stored_policies``, the worker's
rules), so neither the rows nor the text carry hidden rows or masked values.
"""
from __future__ import annotations

import logging
from typing import Any

import duckdb
from sqlalchemy import select

from engine.datasets import version_path
from engine.policies import FilterRefused, StoredPolicies, stored_policies
from engine.sql.result_text import result_text
from engine.sql.sandbox import SqlSandbox, sandbox_settings
from shared.dataset_state import pin_dataset
from shared.errors import Conflict, Forbidden, ServiceUnavailable, ValidationFailed
from shared.models import Dataset
from shared.principal import Principal

logger = logging.getLogger(__name__)

SCOPE = "datasets"  # the key scope run_sql needs: it bypasses the model
MAX_SQL_CHARS = 20_000


def run_dataset_sql(res, principal: Principal, dataset_id: str | None, sql: str) -> dict[str, Any]:
    """Run ``sql`` on ``dataset_id`` (None: the default or built-in dataset).

    Returns ``{"dataset_id", "dataset_version", "text", "rows", "sql", "error"}``; a
    statement the guard or DuckDB refuses is a ValidationFailed whose detail is the
    tool's ``error: ...`` text. Raises Forbidden without the ``datasets`` scope,
    NotFound for another tenant's dataset, Conflict for a live one or one not ready.
    """
    if SCOPE not in principal.scopes:
        raise Forbidden(f"run_sql needs a key with the '{SCOPE}' scope.")
    if not isinstance(sql, str) or not sql.strip():
        raise ValidationFailed("sql: give one SELECT statement.")
    if len(sql) > MAX_SQL_CHARS:
        raise ValidationFailed(f"sql: at most {MAX_SQL_CHARS} characters.")
    with res.session() as s:
        pinned, version = pin_dataset(s, principal.tenant_id, dataset_id, principal)
        mode = s.scalar(select(Dataset.mode).where(Dataset.id == pinned)) if pinned else None
        if mode == "live":
            raise Conflict(f"Dataset {pinned} is live; run_sql runs on snapshot datasets "
                           "only. Ask a question instead (ask).")
        rules = stored_policies(s, pinned, version, principal)
    return _run(res, rules, pinned, version, sql)


def _run(res, rules: StoredPolicies | None, pinned: str | None, version: int | None,
         sql: str) -> dict[str, Any]:
    settings = res.settings
    path = (version_path(settings.data_dir, pinned, version) if pinned
            else settings.duckdb_path)
    try:
        sandbox = SqlSandbox(path, **{**sandbox_settings(settings), "processes": 1})
    except (duckdb.Error, RuntimeError) as exc:
        logger.warning("dataset %s v%s: cannot open it for run_sql: %s", pinned, version, exc)
        raise ServiceUnavailable("The dataset cannot be opened right now; try again.",
                                 retry_after=5) from None
    try:
        try:
            handle = rules.police(sandbox) if rules is not None else sandbox
        except FilterRefused as exc:
            raise Conflict(f"A row policy of dataset {pinned} cannot be applied ({exc}); "
                           "an admin must correct it.") from None
        result = handle.run(sql.strip(), label=f"run_sql dataset {pinned}")
    finally:
        sandbox.close()
    text = result_text(result, 1, settings.tool_result_format, settings.tool_result_max_rows)
    if result.is_error:
        raise ValidationFailed(text, sql=result.sql)
    return {"dataset_id": pinned, "dataset_version": version, "sql": result.sql,
            "rows": result.total_rows, "text": text}
