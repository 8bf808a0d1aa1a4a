"""The policies that apply to one principal on one dataset, and queries run under them.

``applied_for(policies, masks, principal, schema)`` binds the stored rules to a principal
(``rules.py``, ``filters.py``): the result rewrites every statement (``rewrite.py``),
describes itself for the audit, and gives a key that differs whenever what the
principal may see differs (prompt and result caches are keyed by it).

``PolicedQueries`` wraps a job's data handle (the SQL sandbox, a live engine's handle):
each statement is rewritten before it runs; a statement that cannot be policed comes
back as a failed ``QueryResult`` the model can act on; and the quoted literals of an
engine's error message are blanked, because an engine may evaluate an expression on a
row before the policy's filter drops it (``CAST(region AS INT)`` quoting ``'US'``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot

from engine.policies.filters import bind_filter, parse_filter
from engine.policies.rewrite import PolicyRefused, TableRule, rewrite
from engine.policies.rules import Mask, Policy, binding
from engine.sql.query_result import QueryResult

logger = logging.getLogger(__name__)

# Engines whose SQL the rewrite handles; others refuse every query under a policy.
POLICED_DIALECTS = ("duckdb", "postgres")
_QUOTED = re.compile(r"'(?:[^']|'')*'")


@dataclass(frozen=True)
class AppliedPolicies:
    """The rules binding one principal: ``policies`` and ``masks`` as stored."""

    policies: tuple[Policy, ...] = ()
    masks: tuple[Mask, ...] = ()
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.policies and not self.masks

    def tables(self) -> set[str]:
        """The tables whose rows or values this principal sees only in part."""
        return {p.table for p in self.policies} | {m.table for m in self.masks}

    def rules(self, dialect: str = "duckdb") -> dict[str, TableRule]:
        """Per table, its bound conditions and masks (attribute values as literals)."""
        out: dict[str, TableRule] = {}
        for table in self.tables():
            conditions = tuple(bind_filter(parse_filter(p.filter, dialect), self.attributes)
                               for p in self.policies if p.table == table)
            masks = {m.column: m.mask for m in self.masks if m.table == table}
            out[table] = TableRule(conditions, masks)
        return out

    def describe(self) -> list[str]:
        """One short line per rule applied, with the values bound (for the audit)."""
        lines = []
        for table, rule in sorted(self.rules().items()):
            for condition in rule.conditions:
                lines.append(f"{table}: rows where {condition.sql('duckdb')}")
            for column, mask in sorted(rule.masks.items()):
                lines.append(f"{table}.{column}: {mask}")
        return lines

    def key(self) -> str:
        """Equal for two principals exactly when they see the same (empty: no policy)."""
        if self.empty:
            return ""
        return hashlib.sha256(json.dumps(self.describe()).encode()).hexdigest()[:16]


def applied_for(policies: Iterable[Mapping] | None, masks: Iterable[Mapping] | None,
                principal: Any) -> AppliedPolicies:
    """The stored rules (a dataset's ``policies`` and ``masks`` JSON) binding ``principal``."""
    bound_policies, bound_masks = binding(policies, masks, principal)
    return AppliedPolicies(tuple(bound_policies), tuple(bound_masks),
                           dict(principal.attributes))


class PolicedQueries:
    """A data handle whose every query runs rewritten under ``applied`` (module doc)."""

    def __init__(self, inner: Any, applied: AppliedPolicies, *, dialect: str = "duckdb",
                 schema: Sequence | None = None, views: Iterable[str] = ()) -> None:
        self.inner = inner
        self.applied = applied
        self.dialect = dialect
        self._schema = schema
        self._views = tuple(views)
        self._rules = applied.rules(dialect) if dialect in POLICED_DIALECTS else {}

    def __getattr__(self, name: str) -> Any:  # first_query_at, data_years, ...
        return getattr(self.inner, name)

    def describe_schema(self) -> list:
        return self.inner.describe_schema()

    def police(self, sql: str) -> str:
        """``sql`` rewritten; raises ``PolicyRefused``."""
        if self.dialect not in POLICED_DIALECTS:
            raise PolicyRefused("this dataset has row policies, and queries on its engine "
                                "cannot be policed yet; ask an admin")
        schema = self._schema if self._schema is not None else self.inner.describe_schema()
        return rewrite(sql, self._rules, schema, dialect=self.dialect,
                       refused_names=self._views)

    def run(self, sql: str, **kwargs: Any) -> QueryResult:
        text = sql.strip() if isinstance(sql, str) else repr(sql)
        try:
            policed = self.police(sql)
        except PolicyRefused as refused:
            return QueryResult.failed(text, refused.message, 0.0)
        except (sqlglot.errors.SqlglotError, ValueError, TypeError) as exc:
            logger.warning("a statement could not be policed: %r", exc)
            return QueryResult.failed(text, "this dataset has row policies and the statement "
                                      "could not be rewritten under them; simplify it", 0.0)
        result = self.inner.run(policed, **kwargs)
        if result.is_error and result.error:
            result = QueryResult.failed(result.sql, blank_quoted(result.error), result.ms)
        return result


def blank_quoted(message: str) -> str:
    """``message`` with every quoted literal replaced by ``'…'``."""
    return _QUOTED.sub("'…'", message)
