"""Rewrite one model-written statement so that every table it reads is policed.

The statement is parsed with sqlglot in the engine's dialect and generated again from
the tree: what runs is exactly what was checked. Under a policy:

- only a query (``SELECT``, set operations, ``WITH``) may run -- no ``SUMMARIZE``,
  ``DESCRIBE``, ``SHOW`` or ``PIVOT`` statement, which name a table outside a ``FROM``;
- every table reference must name one of the dataset's tables (any quoting or case; the
  default schema or catalog prefix allowed) or a CTE of the statement; anything else --
  ``information_schema``, ``pg_catalog``, ``duckdb_tables()`` and other table functions, a
  view, another catalog -- is refused, and a CTE may not take a table's name;
- each reference to a table that a policy or mask binds becomes a derived table
  ``(SELECT <columns, masked> FROM <table> WHERE <filters>) AS <its alias>``, so every
  scan of it -- a join, a ``UNION`` branch, a correlated subquery -- sees only the
  allowed rows, and the masked values.

Raises ``PolicyRefused`` (message for the model) when the statement cannot be policed.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

# Table functions that make rows from their arguments alone.
_ROW_MAKERS = (exp.GenerateSeries, exp.Unnest, exp.ExplodingGenerateSeries)
DEFAULT_SCHEMA = {"duckdb": "main", "postgres": "public"}
# Catalogs of column names and types only (no rows, no row counts): the prompt of a large
# schema tells the model to look columns up in them.
_COLUMN_CATALOG_FUNCTIONS = frozenset({"duckdb_columns"})
_COLUMN_CATALOG_TABLES = frozenset({("information_schema", "columns")})


class PolicyRefused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class TableRule:
    """What one table shows a principal: ``conditions`` all hold (ANDed), ``masks`` maps a
    column name to ``null|hash|redact``."""

    conditions: tuple[exp.Expression, ...] = ()
    masks: dict[str, str] = field(default_factory=dict)


def rewrite(sql: str, rules: dict[str, TableRule], schema: Sequence[tuple[str, Sequence]],
            *, dialect: str = "duckdb", refused_names: Iterable[str] = ()) -> str:
    """``sql`` with every policed table read through its rule (module doc).

    ``rules`` are keyed by table name as ``schema`` names it (``schema.table`` outside the
    default schema); ``schema`` is ``[(table, [(column, type), ...]), ...]``;
    ``refused_names`` are further relations (views) that may not be read at all.
    """
    tables = {_key(name): (name, columns) for name, columns in schema}
    rules = {_key(name): rule for name, rule in rules.items()}
    refused = {_key(name) for name in refused_names}
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise PolicyRefused("this dataset has row policies and the statement could not be "
                            f"read to apply them: {_first_line(exc)}") from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1 or not isinstance(trees[0], exp.Query):
        raise PolicyRefused("this dataset has row policies: send exactly one SELECT (or WITH "
                            "... SELECT) statement; SUMMARIZE, DESCRIBE, SHOW and PIVOT "
                            "statements cannot be policed")
    tree = trees[0]
    if tree.find(exp.Command) is not None:  # text sqlglot kept unparsed: unchecked
        raise PolicyRefused("this dataset has row policies and part of the statement could "
                            "not be read to apply them; write it as a plain SELECT")
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for name in ctes:
        if name in {k[-1] for k in tables} or name in {k[-1] for k in refused}:
            raise PolicyRefused(f"a CTE may not be named like the table {name!r}; rename it")
    default = DEFAULT_SCHEMA.get(dialect, "main")
    for table in list(tree.find_all(exp.Table)):
        _police(table, tables, refused, ctes, rules, default, dialect)
    return tree.sql(dialect=dialect)


def _police(table: exp.Table, tables: dict, refused: set, ctes: set, rules: dict,
            default: str, dialect: str) -> None:
    if not isinstance(table.this, exp.Identifier):
        if isinstance(table.this, _ROW_MAKERS) or (
                isinstance(table.this, exp.Anonymous) and not table.this.expressions
                and table.this.name.lower() in _COLUMN_CATALOG_FUNCTIONS):
            return
        raise PolicyRefused("this dataset has row policies: table functions such as "
                            f"{table.this.sql(dialect)[:60]!r} cannot be read; query the "
                            "dataset's tables")
    name = table.name.lower()
    db = table.db.lower() if table.db else None
    if table.catalog:
        raise PolicyRefused(f"this dataset has row policies: name the table {table.name!r} "
                            "without a catalog prefix")
    if db is None and name in ctes:
        return
    if (db, name) in _COLUMN_CATALOG_TABLES and not table.catalog:
        return
    key = (name,) if db in (None, default) else (db, name)
    if key in refused or key not in tables:
        raise PolicyRefused(f"this dataset has row policies and {table.sql(dialect)!r} is "
                            "not one of its tables; query only the tables in the schema")
    original, columns = tables[key]
    rule = rules.get(_key(original))
    if rule is None:
        return
    table.replace(_derived(table, original, columns, rule, dialect))


def _derived(table: exp.Table, original: str, columns: Sequence, rule: TableRule,
             dialect: str) -> exp.Subquery:
    alias = table.args.get("alias")
    if alias is None or not alias.name:
        alias = exp.TableAlias(this=exp.to_identifier(table.name, quoted=True),
                               columns=alias.columns if alias is not None else None)
    source = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                       db=exp.to_identifier(table.db, quoted=True) if table.db else None)
    projection = [_masked(col, typ, rule.masks.get(col), dialect) for col, typ in columns]
    select = exp.Select().select(*projection, copy=False).from_(source, copy=False)
    if rule.conditions:
        conditions = [c.copy() for c in rule.conditions]
        for condition in conditions:  # the policed table's columns, never an outer one
            for column in condition.find_all(exp.Column):
                column.set("table", exp.to_identifier(table.name, quoted=True))
                if table.db:
                    column.set("db", exp.to_identifier(table.db, quoted=True))
        select = select.where(exp.and_(*conditions, copy=False), copy=False)
    return exp.Subquery(this=select, alias=alias.copy())


def _masked(column: str, typ: str, mask: str | None, dialect: str) -> exp.Expression:
    ident = exp.column(exp.to_identifier(column, quoted=True))
    if mask is None:
        return ident
    if mask == "null":
        try:
            value: exp.Expression = exp.cast(exp.null(), exp.DataType.build(typ, dialect=dialect))
        except (sqlglot.errors.SqlglotError, ValueError):
            value = exp.null()
    elif mask == "hash":
        value = exp.MD5(this=exp.cast(ident.copy(), exp.DataType.build("text")))
    else:
        value = exp.If(this=ident.copy().is_(exp.null()), true=exp.null(),
                       false=exp.Literal.string("[redacted]"))
    return exp.alias_(value, exp.to_identifier(column, quoted=True))


def _key(name: str) -> tuple[str, ...]:
    parts = name.lower().split(".", 1)
    return tuple(parts)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
