"""A PATCH's row policies and column masks: who may set them, and their check.

Only admins and owners set them (``current_principal().is_admin``; Forbidden otherwise).
Each is checked against the current version's tables (422 naming the unknown table or
column, or why a filter is not one condition on its table's columns), then -- for a
snapshot -- each filter is run on that version in the SQL sandbox with its placeholders
as NULL (422 with DuckDB's error). A live dataset's filters are checked by name only:
running them would query the source from the API.
"""
from __future__ import annotations

from typing import Any

import duckdb
from flask import has_request_context

from api.acting import current_principal
from api.schemas.datasets import DatasetPatch
from engine.datasets import version_path
from engine.policies import FilterRefused, applied_for, check_rules, check_statements
from engine.sql.sandbox import SqlSandbox, sandbox_settings
from shared.config import Settings
from shared.errors import Conflict, Forbidden, ServiceUnavailable, ValidationFailed
from shared.models import Dataset, DatasetVersion
from shared.principal import Principal

RULE_KEYS = frozenset({"policies", "masks"})


def check_policies(settings: Settings, row: Dataset, current: DatasetVersion | None,
                   body: DatasetPatch) -> dict[str, list[dict[str, Any]]] | None:
    """The policies and masks the PATCH sets (``{"policies"?, "masks"?}`` as stored), or
    None when it sets neither; raises Forbidden, Conflict (no ready version to check
    against) or ValidationFailed (module doc)."""
    given = body.model_fields_set & RULE_KEYS
    if not given:
        return None
    if not current_principal().is_admin:
        raise Forbidden("Only the tenant's admins and owners set row policies and masks.")
    if current is None:
        raise Conflict(f"Dataset {row.id} has no ready version to check policies against yet.")
    rules = {key: [item.model_dump() for item in getattr(body, key) or ()]
             for key in given}
    policies = rules.get("policies", row.policies or [])
    schema = [(t["name"], [(c["name"], c["type"]) for c in t.get("columns", ())])
              for t in current.tables]
    try:
        check_rules(policies, rules.get("masks", row.masks or []), schema,
                    dialect=_dialect(current))
    except FilterRefused as exc:
        raise ValidationFailed(str(exc)) from None
    if "policies" in given and (row.mode or "snapshot") == "snapshot" and policies:
        _run_filters(settings, row.id, current.version, policies)
    return rules


def set_policies(row: Dataset, rules: dict[str, list[dict[str, Any]]] | None) -> None:
    """Store what ``check_policies`` returned on ``row`` ([] is kept as null: none)."""
    for key, value in (rules or {}).items():
        setattr(row, key, value or None)


def _dialect(current: DatasetVersion) -> str:
    return (current.engine or {}).get("dialect") or "duckdb"


def _run_filters(settings: Settings, dataset_id: str, version: int, policies: list) -> None:
    try:
        sandbox = SqlSandbox(version_path(settings.data_dir, dataset_id, version),
                             **{**sandbox_settings(settings), "processes": 1})
    except (duckdb.Error, RuntimeError):
        raise ServiceUnavailable(f"Version {version} of dataset {dataset_id} cannot be "
                                 "opened to check the policies; try again.",
                                 retry_after=5) from None
    try:
        for index, sql in check_statements(policies):
            result = sandbox.run(sql, label=f"dataset {dataset_id} policy {index + 1}")
            if result.is_error:
                raise ValidationFailed(f"policies[{index}].filter does not run: {result.error}")
    finally:
        sandbox.close()


def visible_view(row: Dataset, view: dict) -> dict:
    """``view`` (the dataset's JSON) as the asking principal may see it: for each table a
    policy or mask binds them, the profile's figures (row count, top values, min, max,
    distinct count, suggestions) are left out -- they describe rows they may not see --
    and so are the examples. Outside a request (a stream's late read) it assumes a viewer
    with no attributes: never more than any user may see."""
    if not (row.policies or row.masks):
        return view
    principal = (current_principal() if has_request_context()
                 else Principal(tenant_id=row.tenant_id, role="viewer"))
    bound = {name.lower() for name in applied_for(row.policies, row.masks, principal).tables()}
    if not bound:
        return view
    tables = [_without_figures(t) if t["name"].lower() in bound else t
              for t in view.get("tables", ())]
    return {**view, "tables": tables, "examples": []}


def _without_figures(table: dict) -> dict:
    table = {**table, "rows": None}
    if "columns" in table:
        table["columns"] = [{**c, "min": None, "max": None, "top_values": [], "distinct": None,
                             "suggestion": None} for c in table["columns"]]
    return table
