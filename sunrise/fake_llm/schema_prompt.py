"""Reading the database schema and today's date out of a Sunrise system prompt.

The worker's system prompt holds one line per table,
`CREATE TABLE <name> (<col> <TYPE>, <col> <TYPE>, ...);` (a statement may span
lines; types may carry parentheses such as `DECIMAL(10,2)`), and a line
`Today's date: YYYY-MM-DD`. Anything else in the prompt is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CREATE = re.compile(
    r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"]+)\s*\((.*?)\)\s*;",
    re.IGNORECASE | re.DOTALL,
)
_TODAY = re.compile(r"Today's date:\s*(\d{4}-\d{2}-\d{2})")
_NUMERIC = re.compile(
    r"^(TINYINT|SMALLINT|INTEGER|INT\d*|BIGINT|HUGEINT|U(TINY|SMALL|BIG)?INT(EGER)?|FLOAT\d*"
    r"|REAL|DOUBLE|DECIMAL|NUMERIC)\b",
    re.IGNORECASE,
)
_TEMPORAL = re.compile(r"^(DATE|TIMESTAMP|DATETIME)", re.IGNORECASE)
_CONSTRAINTS = {"primary", "foreign", "unique", "check", "constraint"}


@dataclass(frozen=True)
class Column:
    name: str
    type: str

    @property
    def numeric(self) -> bool:
        return bool(_NUMERIC.match(self.type))

    @property
    def temporal(self) -> bool:
        return bool(_TEMPORAL.match(self.type))


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name.lower(): c for c in reversed(self.columns)})

    @property
    def short_name(self) -> str:
        """The name without schema qualifier or quotes, for matching words."""
        return self.name.split(".")[-1].strip('"').lower()

    def column(self, lowercase_name: str) -> Column | None:
        """The column with this name, compared case-insensitively (pass it lowercased)."""
        return self._by_name.get(lowercase_name)


@dataclass(frozen=True)
class Schema:
    tables: tuple[Table, ...]
    today: str | None


def _split_top_level(body: str) -> list[str]:
    if "(" not in body:
        return [part.strip() for part in body.split(",") if part.strip()]
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [part.strip() for part in parts if part.strip()]


def _column(definition: str) -> Column | None:
    if definition.startswith('"'):
        end = definition.find('"', 1)
        name, rest = definition[1:end], definition[end + 1 :]
        if end < 0 or not rest.strip():
            return None
    else:
        parts = definition.split(None, 1)
        if len(parts) < 2 or parts[0].lower() in _CONSTRAINTS:
            return None
        name, rest = parts
    return Column(name, " ".join(rest.split()))


def parse_schema(system_text: str) -> Schema:
    """All tables and columns declared in `system_text`, in prompt order."""
    tables = []
    for match in _CREATE.finditer(system_text):
        columns = tuple(
            column for column in map(_column, _split_top_level(match.group(2))) if column
        )
        if columns:
            tables.append(Table(match.group(1), columns))
    today = _TODAY.search(system_text)
    return Schema(tuple(tables), today.group(1) if today else None)
