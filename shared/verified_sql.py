"""When an answer's query "is" a verified query: the same SQL, or the same SQL with only
literal values changed (another month, carrier or limit).

Both sides are parsed (DuckDB's dialect) and printed back with every literal replaced by
a placeholder, so spacing, case of keywords and quoting do not matter either. SQL that
does not parse is compared by its whitespace-collapsed, lower-cased text.
"""
from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from typing import Any

import sqlglot
from sqlglot import exp

logger = logging.getLogger(__name__)

_SPACES = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)
def sql_shape(sql: str) -> str:
    """``sql`` with literals as ``?``, normalised; never raises. Remembered: a dataset's
    verified queries are compared with every answer's query."""
    text = sql.strip().rstrip(";").strip()
    try:
        tree = sqlglot.parse_one(text, read="duckdb")
    except Exception:  # sqlglot raises several types; the fallback is the contract
        return _SPACES.sub(" ", text).lower()

    def blank(node: exp.Expression) -> exp.Expression:
        # GROUP BY 1 / ORDER BY 2 name columns, not values: they stay.
        if isinstance(node, exp.Literal) and not isinstance(node.parent, (exp.Group, exp.Ordered)):
            return exp.Placeholder()
        return node

    try:
        return tree.transform(blank).sql(dialect="duckdb", normalize=True).lower()
    except Exception:
        return _SPACES.sub(" ", text).lower()


def matching_verified(sql: str | None, verified: Iterable[Any]) -> Any | None:
    """The first of ``verified`` (objects with ``.sql``) whose SQL has ``sql``'s shape."""
    if not sql:
        return None
    shape = sql_shape(sql)
    for candidate in verified:
        if sql_shape(candidate.sql) == shape:
            return candidate
    return None
