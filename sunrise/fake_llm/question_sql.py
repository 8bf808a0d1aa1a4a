"""Heuristic translation of a simple analytics question into one SQL query.

Only names present in the parsed schema are ever emitted. Understood shapes:

- "how many flights" -> `SELECT count(*) AS n FROM flights`;
  "how many carriers" (a column, not a table) -> `count(DISTINCT carrier)`;
- a dimension ("by/per/each/every/across/which X", "top N X", "N busiest X") ->
  `SELECT X, count(*) AS <table> FROM t GROUP BY 1 ORDER BY 2 DESC`;
- "average/mean/total/sum/max/min <numeric column>" -> avg/sum/max/min of it,
  grouped by the dimension when there is one;
- "top N ..." / "N busiest ..." -> `LIMIT N` ("top" alone: 10);
- "which X ... the most/highest/..." (X singular) -> the one top row (`LIMIT 1`);
  "... the fewest/lowest/..." -> the one bottom row (`ORDER BY 2 LIMIT 1`);
- "per month", "by month", "monthly", "trend", "over time" -> grouped by the
  `month` column (or `date_trunc('month', <date column>)`), ordered by month.
Words map to tables by name (singular or plural) and to columns by name, by
`a b` -> `a_b`, or through a small synonym list (airline -> carrier, airport ->
origin, delay -> dep_delay or arr_delay, plane -> tailnum, ...). The table is the
one whose name and columns the question mentions most (a table word in the
dimension position does not count; ties go to the widest table). Anything else
returns None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sunrise.fake_llm.schema_prompt import Column, Schema, Table

SYNONYMS = {
    "airline": ["carrier"],
    "carrier": ["carrier"],
    "airport": ["origin", "faa"],
    "origin": ["origin"],
    "destination": ["dest"],
    "dest": ["dest"],
    "delay": ["dep_delay", "arr_delay", "delay"],
    "late": ["dep_delay", "arr_delay"],
    "distance": ["distance"],
    "plane": ["tailnum"],
    "aircraft": ["tailnum"],
    "tail": ["tailnum"],
    "monthly": ["month"],
    "airtime": ["air_time"],
    "temperature": ["temp"],
    "wind": ["wind_speed"],
    "seat": ["seats"],
    "precipitation": ["precip"],
    "visibility": ["visib"],
    "altitude": ["alt"],
    "arrival delay": ["arr_delay"],
    "departure delay": ["dep_delay"],
    "arr delay": ["arr_delay"],
    "dep delay": ["dep_delay"],
    "air time": ["air_time"],
    "flight number": ["flight"],
    "departure time": ["dep_time"],
    "arrival time": ["arr_time"],
}
AGGREGATES = [
    ({"average", "avg", "mean"}, "avg"),
    ({"total", "sum"}, "sum"),
    ({"maximum", "max", "longest", "largest", "biggest"}, "max"),
    ({"minimum", "min", "shortest", "smallest"}, "min"),
]
TIME_DIMENSIONS = {"month", "year", "day", "hour", "week", "date"}
TREND = re.compile(r"\b(per|by|each|every)\s+month\b|\bmonthly\b|\btrend\b|\bover time\b")
_RANKED = r"(?:busiest|biggest|largest|most\s+[a-z]+)"
TOP = re.compile(
    rf"\btop\s+(\d+)?\s*(?:{_RANKED}\s+)?([a-z_]+)(?:\s+([a-z_]+))?|\b(\d+)\s+{_RANKED}\s+([a-z_]+)"
)
GROUP = re.compile(
    r"\b(?:by|per|each|every|across|which)\s+(?:the\s+|each\s+)?([a-z_]+)(?:\s+([a-z_]+))?"
)
# "Which carrier flew the most flights?" asks for one row, the top (or bottom) one;
# "which destinations ..." (a plural) for several.
WHICH_ONE = re.compile(
    r"\bwhich\s+([a-z_]+)\b.*?\b(?:(most|highest|largest|biggest|longest|busiest|greatest|"
    r"worst)|(fewest|least|lowest|smallest|shortest|best))\b")
COUNT_OF = re.compile(
    r"\b(?:how many|number of|count of|count)\s+(?:distinct\s+|different\s+)?([a-z_]+)"
)


@dataclass(frozen=True)
class QueryPlan:
    sql: str
    table: str
    description: str


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _ident(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else '"' + name.replace('"', '""') + '"'


def _is_table_word(word: str, table: Table) -> bool:
    return _singular(word) == _singular(table.short_name)


def _candidates(words: list[str]) -> list[str]:
    """Column names `words` (one or two words) may mean, the pair's readings first."""
    candidates = []
    if len(words) > 1:
        pair = f"{words[0]} {words[1]}"
        candidates += [pair.replace(" ", "_"), _singular(pair).replace(" ", "_")]
        candidates += SYNONYMS.get(_singular(pair), [])
    if words:
        candidates += [words[0], _singular(words[0]), *SYNONYMS.get(_singular(words[0]), [])]
    return candidates


def _resolve(candidates: list[str], table: Table, numeric: bool = False) -> Column | None:
    for name in candidates:
        column = table.column(name)
        if column and (column.numeric or not numeric):
            return column
    return None


def _column(words: list[str], table: Table, numeric: bool = False) -> Column | None:
    """The column of `table` named by `words` (one or two words), trying the pair first."""
    return _resolve(_candidates(words), table, numeric)


def _dimension_words(question: str) -> set[str]:
    return {
        word
        for pattern in (TOP, GROUP)
        for match in pattern.finditer(question)
        for word in match.groups()
        if word and not word.isdigit()
    }


def _pick_table(question: str, schema: Schema) -> Table | None:
    # A table named where a dimension goes ("top 3 busiest airports") is what
    # rows are grouped by, not what is counted, so it does not select the table.
    words = question.split()
    dimension_words = _dimension_words(question)
    subject_words = {_singular(word) for word in words if word not in dimension_words}
    readings = [_candidates(words[i : i + 2]) for i in range(len(words))]

    def score(table: Table) -> tuple[int, int]:
        named = 3 if _singular(table.short_name) in subject_words else 0
        mentioned = {c.name for names in readings if (c := _resolve(names, table))}
        return named + len(mentioned), len(table.columns)

    scored = [(score(table), index, table) for index, table in enumerate(schema.tables)]
    # Highest score, then the widest table, then the one declared first.
    best = max(scored, key=lambda item: (item[0], -item[1]), default=None)
    return best[2] if best is not None and best[0][0] > 0 else None


def _measure(question: str, table: Table) -> tuple[str, Column] | None:
    words = question.split()
    for names, function in AGGREGATES:
        for i, word in enumerate(words):
            if word in names:
                for j in range(i + 1, min(i + 5, len(words))):
                    if _is_table_word(words[j], table):
                        continue
                    column = _column(words[j : j + 2], table, numeric=True)
                    if column:
                        if column.name in ("dep_delay", "arr_delay") and "arriv" in question:
                            column = table.column("arr_delay") or column
                        return function, column
    return None


def _dimension(question: str, table: Table, exclude: str | None) -> tuple[str | None, int | None]:
    """(dimension column name, limit) named by the question."""
    if TREND.search(question):
        if table.column("month"):
            return "month", None
        dated = next((c for c in table.columns if c.temporal), None)
        if dated:
            return f"date_trunc('month', {_ident(dated.name)})", None
    for match in TOP.finditer(question):
        limit = match.group(1) or match.group(4)
        words = [w for w in (match.group(2), match.group(3), match.group(5)) if w]
        column = _column(words, table)
        if column and column.name != exclude:
            return column.name, int(limit) if limit else 10
    for match in GROUP.finditer(question):
        column = _column([w for w in match.groups() if w], table)
        if column and column.name != exclude:
            return column.name, None
    return None, None


def plan_query(question: str, schema: Schema) -> QueryPlan | None:
    """One SQL query answering `question` over `schema`, or None if not understood."""
    text = " ".join(re.findall(r"[a-z0-9_]+", question.lower()))
    table = _pick_table(text, schema)
    if table is None:
        return None
    source = _ident(table.name) if "." not in table.name else table.name
    measure = _measure(text, table)
    dimension, limit = _dimension(text, table, measure[1].name if measure else None)
    counted = COUNT_OF.search(text)
    if measure:
        function, column = measure
        prefix = {"avg": "avg", "sum": "total", "max": "max", "min": "min"}[function]
        expr = f"{function}({_ident(column.name)})"
        expr = f"round({expr}, 2)" if function == "avg" else expr
        expr, label = f"{expr} AS {prefix}_{column.name}", f"{function} of {column.name}"
    elif dimension or counted or "most" in text.split():
        distinct = _column([counted.group(1)], table) if counted and not dimension else None
        if distinct and not _is_table_word(counted.group(1), table):
            alias = _ident(_singular(distinct.name) + "s")
            expr, label = (
                f"count(DISTINCT {_ident(distinct.name)}) AS {alias}",
                f"distinct {distinct.name}",
            )
        else:
            expr = f"count(*) AS {_ident(table.short_name) if dimension else 'n'}"
            label = f"count of {table.short_name}"
    else:
        return None
    if dimension is None:
        return QueryPlan(f"SELECT {expr} FROM {source}", table.name, label)
    select_dim = dimension if dimension.startswith("date_trunc") else _ident(dimension)
    alias = " AS month" if dimension.startswith("date_trunc") else ""
    which = WHICH_ONE.search(text) if limit is None else None
    if which and _singular(which.group(1)) == which.group(1):
        limit = 1
    else:
        which = None
    by_time = (alias or dimension in TIME_DIMENSIONS) and limit is None
    order = "1" if by_time else "2" if which and which.group(3) else "2 DESC"
    sql = f"SELECT {select_dim}{alias}, {expr} FROM {source} GROUP BY 1 ORDER BY {order}"
    if limit:
        sql += f" LIMIT {limit}"
    return QueryPlan(sql, table.name, f"{label} by {alias[4:] or dimension}")
