"""The system prompt of one dataset version: a pure function of its profile and annotations.

It is the prompt of ``system_prompt`` (template, full schema, date as YYYY-MM-DD) with
what the dataset adds between the schema and the date: the dataset's description,
notes on tables and columns (descriptions, people's or else the import's own notes,
such as "Percentages as fractions: 50% is 0.5."; the import's warnings, such as a
column that stays text and why; and value hints: every value of a low-cardinality
text column, such as the 16 carrier codes), a glossary and example questions with
their SQL. With none of those it is exactly ``build_system_prompt``.

Prompt caching matches bytes, so identical inputs give identical bytes: tables sorted
by name, columns in table order, glossary sorted by term, examples in the order given,
whitespace in descriptions collapsed, no time of day.

It stays within ``token_budget`` (estimated as ``history.estimate_tokens`` does, an
over-estimate) by giving up, in order: value hints; then the column list, replaced
by the tables with their row counts and descriptions and the instruction to look
columns up with ``execute_sql`` on ``duckdb_columns()`` (the one tool stays the only
tool); then column descriptions; then table descriptions, cut shorter and shorter
and at last left out; then tables beyond those that fit (the prompt says how many,
and how to list them).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence

from engine.datasets.naming import sql_literal
from engine.datasets.profile import ColumnProfile, TableProfile
from shared.dataset_annotations import Annotations
from worker.agent.system_prompt import fill_template, render_schema
from worker.jobs.history import estimate_tokens

DEFAULT_TOKEN_BUDGET = 16_000
HINT_MAX_VALUES = 25
HINT_MAX_CHARS = 60
# Table descriptions in the table list are cut to these lengths, in turn, before they go.
CLIPPED_DESCRIPTION_CHARS = (120, 60, 30, 0)

LOOKUP = """\
This database has {count} tables, too many to list their columns here. Before you \
query a table, look up its columns with execute_sql, for example:
SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE table_name IN \
('<table>', '<table>') ORDER BY table_name, column_index
(information_schema.columns works too). Use only the tables listed here and the \
columns you have looked up.

Tables (name: rows. description):"""


def build_dataset_prompt(tables: Sequence[TableProfile], today: dt.date,
                         annotations: Annotations | None = None, *,
                         token_budget: int = DEFAULT_TOKEN_BUDGET) -> str:
    """The system prompt for a dataset version on ``today``; pure and deterministic."""
    annotations = annotations or Annotations()
    ordered = sorted(tables, key=lambda t: t.name)
    for section in _sections(ordered, annotations):
        prompt = fill_template(section, today)
        if estimate_tokens(prompt) <= token_budget:
            return prompt
    return fill_template(_cut_table_list(ordered, annotations, today, token_budget), today)


def _sections(tables: list[TableProfile], annotations: Annotations) -> Iterator[str]:
    schema = render_schema([(t.name, [(c.name, c.type) for c in t.columns]) for t in tables])
    yield _join(schema, _notes(tables, annotations, hints=True))
    yield _join(schema, _notes(tables, annotations, hints=False))
    listed = _table_list(tables, annotations, len(tables))
    yield _join(listed, _notes(tables, annotations, hints=False, tables_listed=True))
    rest = _notes(tables, annotations, hints=False, tables_listed=True, columns=False)
    yield _join(listed, rest)
    for chars in CLIPPED_DESCRIPTION_CHARS:
        yield _join(_table_list(tables, annotations, len(tables), description_chars=chars), rest)


def _cut_table_list(tables: list[TableProfile], annotations: Annotations, today: dt.date,
                    budget: int) -> str:
    """The longest prefix of the table list that fits (at least one table)."""
    notes = _notes(tables, annotations, hints=False, tables_listed=True, columns=False)
    low, high = 1, len(tables)
    while low < high:
        middle = (low + high + 1) // 2
        listed = _table_list(tables, annotations, middle, description_chars=0)
        if estimate_tokens(fill_template(_join(listed, notes), today)) <= budget:
            low = middle
        else:
            high = middle - 1
    return _join(_table_list(tables, annotations, low, description_chars=0), notes)


def _table_list(tables: list[TableProfile], annotations: Annotations, shown: int,
                description_chars: int | None = None) -> str:
    """The lookup instruction and ``shown`` tables with rows and descriptions (cut to
    ``description_chars`` at a word boundary; 0: none)."""
    lines = [LOOKUP.replace("{count}", f"{len(tables):,}")]
    for table in tables[:shown]:
        description = _clip(_clean(annotations.table(table.name).description or table.note),
                            description_chars)
        lines.append(f"- {table.name}: {table.rows:,} rows." + (f" {description}" if description else ""))
    if shown < len(tables):
        lines.append(f"... and {len(tables) - shown:,} more tables, not listed: find them with "
                     "SELECT table_name FROM duckdb_tables() ORDER BY table_name")
    return "\n".join(lines)


def _notes(tables: list[TableProfile], annotations: Annotations, *, hints: bool,
           tables_listed: bool = False, columns: bool = True) -> str:
    """The dataset's additions; ``tables_listed``: table descriptions are in the table list."""
    parts = []
    if annotations.description:
        parts.append(f"About this database: {_clean(annotations.description)}")
    table_lines = []
    for table in tables:
        notes = annotations.table(table.name)
        column_lines = []
        for column in table.columns if columns else ():
            said = [_clean(notes.columns.get(column.name) or column.note),
                    _value_hint(column) if hints else ""]
            if any(said):
                column_lines.append(f"  - {column.name}: " + "; ".join(s for s in said if s))
        description = "" if tables_listed else _clean(notes.description or table.note)
        warned = "" if tables_listed else " ".join(
            f"Import warning: {_clean(w)}" for w in table.warnings)
        said = " ".join(s for s in (description, warned) if s)
        if column_lines or said:
            table_lines.append(f"- {table.name} ({table.rows:,} rows)"
                               + (f": {said}" if said else ""))
            table_lines += column_lines
    if table_lines:
        parts.append("Notes on tables and columns:\n" + "\n".join(table_lines))
    if annotations.glossary:
        terms = sorted(annotations.glossary.items(), key=lambda item: (item[0].casefold(), item[0]))
        parts.append("Glossary:\n" + "\n".join(f"- {_clean(term)}: {_clean(meaning)}"
                                               for term, meaning in terms))
    if annotations.examples:
        parts.append("Example questions, with SQL that answers each:\n" + "\n".join(
            f"- Question: {_clean(e.question)}\n  SQL: " + "\n       ".join(e.sql.strip().splitlines())
            for e in annotations.examples))
    return "\n\n".join(parts)


def _value_hint(column: ColumnProfile) -> str:
    """Every value of a low-cardinality text column, most frequent first, as SQL literals."""
    if not (column.text and column.values_complete and column.distinct <= HINT_MAX_VALUES):
        return ""
    values = [str(top.value) for top in column.top_values]
    if any(len(v) > HINT_MAX_CHARS or not v.isprintable() for v in values):
        return ""
    return "values " + ", ".join(sql_literal(v) for v in values)


def _clip(text: str, chars: int | None) -> str:
    if chars is None or len(text) <= chars:
        return text
    if chars == 0:
        return ""
    return text[:chars].rsplit(" ", 1)[0].rstrip(" ,;:.") + "..."


def _clean(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _join(*parts: str) -> str:
    return "\n\n".join(p for p in parts if p)
