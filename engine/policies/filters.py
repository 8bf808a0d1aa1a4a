"""A policy's filter: parsed once with sqlglot, checked, and bound for one principal.

``{user.<attribute>}`` placeholders are never pasted into SQL text: each becomes a
sqlglot literal node (a list: the values of an ``IN (...)``; ``=`` and ``<>`` against a
list become ``IN`` and ``NOT IN``), so a value such as ``' OR 1=1 --`` is one string
literal, escaped by the generator. A missing attribute, an empty list, or a list where
no ``IN`` can take it makes the whole filter ``FALSE``: the user sees no row.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import sqlglot
from sqlglot import exp

_PLACEHOLDER = re.compile(r"\{\s*user\.([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_MARK = "__sunrise_user__"
MAX_FILTER_CHARS = 4000


class FilterRefused(ValueError):
    """The filter cannot be used; the message says why in words an admin can act on."""


def parse_filter(text: str, dialect: str = "duckdb") -> exp.Expression:
    """The filter's expression tree with placeholders as ``__sunrise_user__.<attr>``
    columns; raises ``FilterRefused`` for text that is not one boolean expression over
    the table's own columns (no subquery, no other table, no braces but placeholders)."""
    if not isinstance(text, str) or not text.strip():
        raise FilterRefused("a filter is a non-empty SQL condition such as "
                            "\"region = {user.region}\"")
    if len(text) > MAX_FILTER_CHARS:
        raise FilterRefused(f"a filter is at most {MAX_FILTER_CHARS} characters")
    marked = _PLACEHOLDER.sub(lambda m: f"{_MARK}.{m.group(1)}", text)
    if "{" in marked or "}" in marked:
        raise FilterRefused("the only braces a filter may hold are placeholders such as "
                            "{user.region}")
    if ";" in marked:
        raise FilterRefused("a filter is one condition, without ';'")
    try:
        tree = sqlglot.parse_one(marked, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise FilterRefused(f"the filter is not a SQL condition: {_first_line(exc)}") from None
    if isinstance(tree, exp.Query) or tree.find(exp.Query, exp.Table, exp.Subquery) is not None:
        raise FilterRefused("a filter may not hold a query or name another table; it is a "
                            "condition on the table's own columns")
    for column in tree.find_all(exp.Column):
        if column.table and column.table != _MARK:
            raise FilterRefused(f"a filter names its table's columns unqualified; "
                                f"{column.sql(dialect)!r} is qualified")
    return tree


def filter_columns(tree: exp.Expression) -> list[str]:
    """The table's column names the filter reads (placeholders excluded), in order."""
    seen: list[str] = []
    for column in tree.find_all(exp.Column):
        if column.table != _MARK and column.name not in seen:
            seen.append(column.name)
    return seen


def filter_attributes(tree: exp.Expression) -> list[str]:
    """The user attributes the filter reads."""
    return sorted({c.name for c in tree.find_all(exp.Column) if c.table == _MARK})


def bind_filter(tree: exp.Expression, attributes: Mapping[str, Any]) -> exp.Expression:
    """A copy of ``tree`` with every placeholder replaced by the user's attribute as
    literals; ``FALSE`` when an attribute is missing or cannot be bound (module doc)."""
    holder = exp.Paren(this=tree.copy())  # so that the root itself can be replaced
    for column in list(holder.find_all(exp.Column)):
        if column.table != _MARK:
            continue
        value = attributes.get(column.name)
        if value is None:
            return exp.false()
        if isinstance(value, Sequence) and not isinstance(value, str):
            if not _bind_list(column, list(value)):
                return exp.false()
        else:
            column.replace(literal(value))
    if any(c.table == _MARK for c in holder.find_all(exp.Column)):
        return exp.false()  # never let a placeholder through as a column
    return holder.this


def _bind_list(column: exp.Column, values: list[Any]) -> bool:
    if not values or any(v is None or isinstance(v, (list, dict)) for v in values):
        return False
    literals = [literal(v) for v in values]
    parent = column.parent
    if isinstance(parent, exp.In) and column in parent.expressions:
        index = parent.expressions.index(column)
        parent.set("expressions", parent.expressions[:index] + literals
                   + parent.expressions[index + 1:])
        return True
    if isinstance(parent, (exp.EQ, exp.NEQ)):
        other = parent.expression if parent.this is column else parent.this
        if isinstance(other, exp.Column) and other.table == _MARK:
            return False
        contains = exp.In(this=other.copy(), expressions=literals)
        parent.replace(contains if isinstance(parent, exp.EQ) else exp.Not(this=contains))
        return True
    return False


def literal(value: Any) -> exp.Expression:
    """One attribute value as a SQL literal node (booleans and numbers keep their type)."""
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__


def null_bound(tree: exp.Expression) -> exp.Expression:
    """A copy of ``tree`` with every placeholder as ``NULL``: the filter as it would run,
    for checking when it is saved (whatever the attribute's type)."""
    holder = exp.Paren(this=tree.copy())
    for column in list(holder.find_all(exp.Column)):
        if column.table == _MARK:
            column.replace(exp.null())
    return holder.this
