"""Datasets on the terminal (rich): the import's progress, the list, one dataset's schema."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from sunrise.cli.console_output import LiveProgress

TOP_VALUES_SHOWN = 5
# Words of a column name that make its integers labels, not quantities: printed as
# stored ("2013", "10001"), never with thousands separators.
CODE_WORDS = frozenset({"id", "ids", "pk", "code", "codes", "key", "zip", "zipcode", "postcode",
                        "serial", "sku"})
YEAR_WORDS = frozenset({"year", "years", "yr", "yyyy"})


class ImportProgressBar(LiveProgress):
    """One bar per table from the import's events: DuckDB's percentage while it reads a
    file in one statement, the rows copied so far otherwise. Off a terminal, one line
    per finished table."""

    def __init__(self, console: Console):
        super().__init__(console, Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[rows]}"),
            TimeElapsedColumn(), console=console))
        self.tasks: dict[str, TaskID] = {}

    def update(self, event: str, data: dict[str, Any]) -> None:
        """Show one event of ``GET /v1/datasets/{id}/events``."""
        table = data.get("table") if isinstance(data, dict) else None
        if not table:
            return
        if table not in self.tasks:
            self.tasks[table] = self.progress.add_task(escape(table), total=100, rows="")
        rows = data.get("rows")
        rows_text = "" if rows is None else f"{rows:,} rows"
        if data.get("done"):
            self.progress.update(self.tasks[table], completed=100, rows=rows_text)
            if not self.live:
                self.console.print(f"{escape(table)}: {rows_text or 'done'}")
        elif data.get("percent") is not None:
            self.progress.update(self.tasks[table], completed=float(data["percent"]),
                                 rows=rows_text)
        else:
            self.progress.update(self.tasks[table], rows=rows_text)


def print_datasets(items: Sequence[dict[str, Any]], console: Console) -> None:
    """A table of the tenant's datasets."""
    if not items:
        console.print("no datasets yet: add one with `sunrise datasets add NAME FILE...`")
        return
    table = Table(title="datasets")
    # The id is what every other command takes: never cut, even in a narrow terminal.
    table.add_column("id", no_wrap=True, min_width=36)
    for header in ("name", "status", "version", "tables", "rows", "default"):
        table.add_column(header)
    for d in items:
        tables = d.get("tables") or []
        table.add_row(d["dataset_id"], escape(str(d.get("name"))), d.get("status", ""),
                      str(d.get("version") or "-"), str(len(tables)),
                      f"{sum(t.get('rows') or 0 for t in tables):,}",
                      "yes" if d.get("default") else "")
    console.print(table)


def print_dataset(dataset: dict[str, Any], console: Console) -> None:
    """One dataset: its state, error, then each table's columns with type, description and
    profile (nulls, distinct, min, max, most frequent values)."""
    console.print(f"[bold]{escape(str(dataset.get('name')))}[/bold] ({dataset['dataset_id']}): "
                  f"{dataset.get('status')}, version {dataset.get('version') or '-'}"
                  + (", the tenant's default" if dataset.get("default") else ""))
    if dataset.get("description"):
        console.print(escape(dataset["description"]))
    if dataset.get("error"):
        error = dataset["error"]
        console.print(f"[red]error[/red]: {escape(str(error.get('detail') or error))}")
    for t in dataset.get("tables") or []:
        grid = Table(title=f"{t['name']} ({t.get('rows') or 0:,} rows)"
                     + (f": {t['description']}" if t.get("description") else ""),
                     title_justify="left")
        for header in ("column", "type", "nulls", "distinct", "min", "max", "top values",
                       "description"):
            grid.add_column(header)
        for c in t.get("columns") or []:
            grid.add_row(c["name"], c.get("type") or "", _fraction(c.get("null_fraction")),
                         _plain(c.get("distinct")), _value(c["name"], c.get("min")),
                         _value(c["name"], c.get("max")), _top_values(c.get("top_values")),
                         c.get("description") or "")
        console.print(grid)


def _fraction(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _plain(value: Any) -> str:
    if value is None:
        return ""
    countable = isinstance(value, int) and not isinstance(value, bool)
    return escape(f"{value:,}" if countable else str(value))


def _value(column: str, value: Any) -> str:
    """A column's value as people read it: quantities with thousands separators, but a
    year (1000-2999 in a column named like one) or an id, code, key, zip or serial as
    written."""
    if isinstance(value, int) and is_label(column, value):
        return escape(str(value))
    return _plain(value)


def is_label(column: str, value: int) -> bool:
    """Whether ``value`` of ``column`` names something rather than counts it."""
    # model_year, fiscalYear, ZIP-code, CustomerID -> their words, in lower case.
    words = set(re.split(r"[^a-z]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", column).lower()))
    return bool(words & CODE_WORDS) or (bool(words & YEAR_WORDS) and 1000 <= value <= 2999)


def _top_values(values: Sequence[dict] | None) -> str:
    return escape(", ".join(f"{v.get('value')} ({v.get('count'):,})" if isinstance(v, dict)
                            else str(v) for v in (values or [])[:TOP_VALUES_SHOWN]))
