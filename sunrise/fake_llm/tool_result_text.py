"""Parsing the worker's `execute_sql` tool-result text (the format in DESIGN.md).

    query_id=3 rows=16 shown=16
    carrier,flights
    UA,58665
    ...
    <blank line>
    summary over all 16 rows        (only when rows > shown)
    column,count,total,min,max,avg
    ...

An error result is the single line `error: <message>`.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

_HEAD = re.compile(r"query_id=(\d+)\s+rows=(\d+)\s+shown=(\d+)")


@dataclass(frozen=True)
class QueryResult:
    query_id: int
    total_rows: int
    header: list[str]
    rows: list[list[str]]

    def numeric_columns(self) -> list[str]:
        """Columns whose every non-empty shown value parses as a number."""
        numeric = []
        for index, name in enumerate(self.header):
            values = [row[index] for row in self.rows if index < len(row) and row[index] != ""]
            if values and all(_is_number(value) for value in values):
                numeric.append(name)
        return numeric

    def value(self, row: list[str], column: str) -> str:
        index = self.header.index(column)
        return row[index] if index < len(row) else ""


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def as_number(value: str) -> float:
    """The value as a float; non-numbers sort below every number."""
    try:
        return float(value)
    except ValueError:
        return float("-inf")


def error_message(text: str) -> str | None:
    """The message of an `error: ...` result, else None."""
    stripped = text.strip()
    return stripped[len("error:") :].strip() if stripped.startswith("error:") else None


def parse_tool_result(text: str) -> QueryResult | None:
    """The query result in `text`, or None when it is not in the documented format."""
    lines = text.strip("\n").split("\n")
    match = _HEAD.match(lines[0].strip()) if lines else None
    if not match or len(lines) < 2:
        return None
    table_lines = []
    for line in lines[1:]:
        if not line.strip():
            break  # the summary block, if any, follows the blank line
        table_lines.append(line)
    parsed = list(csv.reader(table_lines))
    return QueryResult(int(match.group(1)), int(match.group(2)), parsed[0], parsed[1:])
