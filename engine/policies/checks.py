"""Checking a dataset's policies and masks against its schema before they are kept."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp

from engine.policies.filters import FilterRefused, filter_columns, null_bound, parse_filter
from engine.policies.rules import MASKS, Mask, Policy


def check_rules(policies: Sequence[Mapping[str, Any]], masks: Sequence[Mapping[str, Any]],
                schema: Sequence[tuple[str, Sequence]], *, dialect: str = "duckdb") -> None:
    """Raise ``FilterRefused`` naming the first policy or mask that names a table or
    column not in ``schema`` (``[(table, [(column, type), ...]), ...]``), holds a filter
    that is not one condition on its table's columns, or a mask other than null, hash,
    redact. Names are matched as the engine does: case-insensitively."""
    columns = {name.lower(): {c.lower() for c, _ in cols} for name, cols in schema}
    for index, data in enumerate(policies):
        policy = Policy.from_dict(data)
        where = f"policies[{index}]"
        known = _table(columns, policy.table, where)
        try:
            tree = parse_filter(policy.filter, dialect)
        except FilterRefused as exc:
            raise FilterRefused(f"{where}.filter: {exc}") from None
        for column in filter_columns(tree):
            if column.lower() not in known:
                raise FilterRefused(f"{where}.filter: table {policy.table!r} has no column "
                                    f"{column!r}")
    for index, data in enumerate(masks):
        mask = Mask.from_dict(data)
        where = f"masks[{index}]"
        known = _table(columns, mask.table, where)
        if mask.column.lower() not in known:
            raise FilterRefused(f"{where}: table {mask.table!r} has no column {mask.column!r}")
        if mask.mask not in MASKS:
            raise FilterRefused(f"{where}.mask: {mask.mask!r} is not one of {', '.join(MASKS)}")


def _table(columns: dict[str, set[str]], table: str, where: str) -> set[str]:
    known = columns.get(table.lower())
    if known is None:
        raise FilterRefused(f"{where}.table: the dataset has no table {table!r}")
    return known


def check_statements(policies: Sequence[Mapping[str, Any]], *,
                     dialect: str = "duckdb") -> list[tuple[int, str]]:
    """For each policy, ``(index, SQL)`` that runs its filter on its table with every
    placeholder as NULL: what a save runs to prove the filter works on the engine."""
    statements = []
    for index, data in enumerate(policies):
        policy = Policy.from_dict(data)
        condition = null_bound(parse_filter(policy.filter, dialect))
        table = exp.to_table(policy.table, dialect=dialect) if "." in policy.table else \
            exp.Table(this=exp.to_identifier(policy.table, quoted=True))
        select = exp.select(exp.Count(this=exp.Star())).from_(table).where(condition)
        statements.append((index, select.sql(dialect=dialect)))
    return statements
