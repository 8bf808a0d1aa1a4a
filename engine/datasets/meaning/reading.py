"""Text columns read as a person reads them: numbers, dates and missing values.

After an importer has made a source's tables, each VARCHAR column is looked at:

1. a bounded sample (the first ``SAMPLE_ROWS`` rows, values cut to ``SAMPLE_CHARS``) is
   read into Python and says whether the column looks like numbers or dates at all
   (at least ``LOOKS_LIKE`` of its values that are not missing markers);
2. one scan inside DuckDB checks every value of such a column against each way of
   reading it (numbers: the decimal point and the decimal comma; dates: every shape and
   its rules) and gathers what deciding needs;
3. the column is converted in DuckDB (``ALTER ... TYPE ... USING``) when every value
   that is not a missing marker reads one way, the markers becoming NULL; its original
   form, format and a description are noted on the target. A column that looked like
   numbers or dates but does not convert stays text, with a warning saying why.

Ambiguous columns (``1,234`` alone; ``03/04/2024`` alone) are decided by the source's
other columns (``evidence``), else left text with a warning. Work is bounded: Python
sees at most the sample, every whole-column step is one DuckDB statement.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.datasets.meaning import dates, numbers
from engine.datasets.meaning.evidence import Evidence
from engine.datasets.meaning.missing import is_missing, missing_sql, trimmed_sql
from engine.datasets.naming import quote_ident, sql_literal

if TYPE_CHECKING:
    from engine.datasets.target import ImportTarget

logger = logging.getLogger(__name__)

SAMPLE_ROWS = 1000
SAMPLE_CHARS = 64
# The share of a column's sampled values (markers aside) that must look like numbers
# or dates for the whole column to be checked.
LOOKS_LIKE = 0.6
# A sparse column whose first rows hold fewer values than this is sampled on its own.
SPARSE = 50
# Money: DECIMAL(18, 2) holds amounts of up to 16 digits before the point.
MONEY = "DECIMAL(18,2)"
_MONEY_DIGITS = 16
_BIGINT_DIGITS = 18
_S = "s"  # the trimmed value in the checking scans


@dataclass
class _Column:
    table: str
    name: str
    kind: str  # "number" or "date"
    stats: dict = field(default_factory=dict)


def read_as_meant(target: ImportTarget, tables: list[str]) -> None:
    """Convert the text columns of ``tables`` (one source's) that hold numbers or dates;
    note what was converted and warn about what looked like it but stays text."""
    evidence = Evidence()
    looked = [column for table in tables for column in _candidates(target, table)]
    for column in looked:
        column.stats = (_number_stats if column.kind == "number" else _date_stats)(target, column)
        _gather(column, evidence)
    for column in looked:
        if column.kind == "number":
            _convert_number(target, column, evidence)
        else:
            _convert_date(target, column, evidence)


def _candidates(target: ImportTarget, table: str) -> list[_Column]:
    """The table's text columns whose sample looks like numbers or dates."""
    names = [name for (name,) in target.con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = ? AND data_type = 'VARCHAR' "
        "ORDER BY column_index", [table]).fetchall()]
    if not names:
        return []
    cut = ", ".join(f"left({quote_ident(n)}, {SAMPLE_CHARS})" for n in names)
    rows = target.con.execute(f"SELECT {cut} FROM {quote_ident(table)} LIMIT {SAMPLE_ROWS}").fetchall()
    found = []
    for index, name in enumerate(names):
        values = _present(row[index] for row in rows)
        if len(values) < SPARSE and len(rows) == SAMPLE_ROWS:
            values = _sparse_sample(target, table, name)
        kind = _looks_like(values)
        if kind:
            found.append(_Column(table, name, kind))
    return found


def _sparse_sample(target: ImportTarget, table: str, name: str) -> list[str]:
    ident = quote_ident(name)
    trimmed = trimmed_sql(ident)
    rows = target.con.execute(
        f"SELECT left({ident}, {SAMPLE_CHARS}) FROM {quote_ident(table)} "
        f"WHERE NOT {missing_sql(trimmed)} LIMIT {SAMPLE_ROWS}").fetchall()
    return _present(value for (value,) in rows)


def _present(values) -> list[str]:
    return [v.strip(" \t\r\n\u00a0\u202f") for v in values if v is not None and not is_missing(v)]


def _looks_like(values: list[str]) -> str | None:
    """"number", "date" or None, from a sample of a column's values (markers left out)."""
    if not values:
        return None
    needed = LOOKS_LIKE * len(values)
    if sum(any(c.matches(v) for c in numbers.CONVENTIONS) for v in values) >= needed:
        return "number"
    if sum(dates.shape_of(v) is not None for v in values) >= needed:
        return "date"
    return None


def _scan(target: ImportTarget, column: _Column, parts: dict[str, str]) -> dict:
    """One scan of ``column`` computing ``parts`` (SQL over the trimmed value ``s``,
    ``missing`` and ``r``, the row id); the results by name."""
    ident = quote_ident(column.name)
    trimmed = trimmed_sql(ident)
    select = ", ".join(f"{sql} AS {quote_ident(name)}" for name, sql in parts.items())
    row = target.con.execute(
        f"SELECT {select} FROM (SELECT rowid AS r, {trimmed} AS {_S}, "
        f"{missing_sql(trimmed)} AS missing FROM {quote_ident(column.table)})").fetchone()
    return dict(zip(parts, row))


def _common(parts: dict[str, str]) -> dict[str, str]:
    return {"values": "count(*) FILTER (WHERE NOT missing)",
            "example": f"arg_min({_S}, r) FILTER (WHERE NOT missing)",
            "markers": f"list(DISTINCT {_S} ORDER BY {_S}) FILTER (WHERE missing AND {_S} <> '')",
            **parts}


def _number_stats(target: ImportTarget, column: _Column) -> dict:
    parts = {}
    for c in numbers.CONVENTIONS:
        fits = f"regexp_full_match({_S}, {sql_literal(c.pattern)})"
        parts[f"{c.name}_misfits"] = f"count(*) FILTER (WHERE NOT missing AND NOT {fits})"
        parts[f"{c.name}_misfit"] = f"arg_min({_S}, r) FILTER (WHERE NOT missing AND NOT {fits})"
        parts[f"{c.name}_fraction"] = (f"max({numbers.fraction_digits_sql(_S, c)}) "
                                       f"FILTER (WHERE NOT missing AND {fits})")
        parts[f"{c.name}_integer"] = (f"max({numbers.integer_digits_sql(_S, c)}) "
                                      f"FILTER (WHERE NOT missing AND {fits})")
    currency = numbers.currency_sql(_S)
    parts.update({
        "percent": f"count(*) FILTER (WHERE NOT missing AND {numbers.percent_sql(_S)})",
        "scaled": f"count(*) FILTER (WHERE NOT missing AND {numbers.scaled_sql(_S)})",
        "separated": f"count(*) FILTER (WHERE NOT missing AND {numbers.separated_sql(_S)})",
        "currencies": f"list(DISTINCT {currency} ORDER BY {currency}) "
                      f"FILTER (WHERE NOT missing AND {currency} <> '')",
        "separated_example": f"arg_min({_S}, r) FILTER (WHERE NOT missing AND "
                             f"{numbers.separated_sql(_S)})",
    })
    return _scan(target, column, _common(parts))


def _date_stats(target: ImportTarget, column: _Column) -> dict:
    parts = {}
    for shape in dates.SHAPES:
        match = shape.match_sql(_S)
        parts[f"{shape.name}"] = f"count(*) FILTER (WHERE NOT missing AND {match})"
        for index, rule in enumerate(shape.rules):
            fails = f"NOT missing AND {match} AND {rule.value_sql(_S)} IS NULL"
            parts[f"{shape.name}_{index}_fails"] = f"count(*) FILTER (WHERE {fails})"
            parts[f"{shape.name}_{index}_fail"] = f"arg_min({_S}, r) FILTER (WHERE {fails})"
    shaped = " OR ".join(shape.match_sql(_S) for shape in dates.SHAPES)
    parts["misfits"] = f"count(*) FILTER (WHERE NOT missing AND NOT ({shaped}))"
    parts["misfit"] = f"arg_min({_S}, r) FILTER (WHERE NOT missing AND NOT ({shaped}))"
    parts["time"] = f"bool_or({dates.has_time_sql(_S)}) FILTER (WHERE NOT missing)"
    return _scan(target, column, _common(parts))


def _gather(column: _Column, evidence: Evidence) -> None:
    """What an unambiguous column says about its source's conventions."""
    stats = column.stats
    if column.kind == "number":
        fitting = [c for c in numbers.CONVENTIONS if stats[f"{c.name}_misfits"] == 0]
        if len(fitting) == 1 and stats["separated"]:
            evidence.saw(column.table, "decimal", fitting[0].decimal)
        return
    for shape in dates.SHAPES:
        if stats[shape.name] and len(shape.rules) == 2:
            reads = [r for i, r in enumerate(shape.rules) if stats[f"{shape.name}_{i}_fails"] == 0]
            if len(reads) == 1:
                evidence.saw(column.table, "order", reads[0].order)


def _convert_number(target: ImportTarget, column: _Column, evidence: Evidence) -> None:
    stats, name = column.stats, column.name
    if not stats["values"]:
        return
    fitting = [c for c in numbers.CONVENTIONS if stats[f"{c.name}_misfits"] == 0]
    if not fitting:
        best = min(numbers.CONVENTIONS, key=lambda c: stats[f"{c.name}_misfits"])
        target.warn(column.table, (
            f"Column {name} stays text: {stats[f'{best.name}_misfits']:,} of "
            f"{stats['values']:,} values are not numbers written one way (such as "
            f"`{stats[f'{best.name}_misfit']}`)."))
        return
    if len(fitting) == 2 and stats["separated"]:
        decimal = evidence.decide(column.table, "decimal")
        if decimal is None:
            target.warn(column.table, (
                f"Column {name} stays text: a value such as `{stats['separated_example']}` "
                "reads as a different number with a decimal point than with a decimal "
                "comma, and nothing else in the file tells which is meant. Re-type the "
                "column with the format decimal_point or decimal_comma."))
            return
        fitting = [c for c in fitting if c.decimal == decimal]
    convention = fitting[0]
    values, percent, scaled = stats["values"], stats["percent"], stats["scaled"]
    currencies = stats["currencies"] or []
    for count, what in ((percent, "percentages"), (scaled, "amounts with k/M/B multipliers")):
        if 0 < count < values:
            target.warn(column.table, (
                f"Column {name} stays text: {count:,} of {values:,} values are {what} and "
                "the others are not, so they cannot be read as one kind of number."))
            return
    if len(currencies) > 1:
        target.warn(column.table, (
            f"Column {name} stays text: it mixes currencies ({', '.join(currencies)}), "
            "whose amounts cannot be added up."))
        return
    fraction = stats[f"{convention.name}_fraction"] or 0
    integer = stats[f"{convention.name}_integer"] or 0
    if percent or scaled:
        sql_type = "DOUBLE"
    elif currencies and fraction <= 2 and integer <= _MONEY_DIGITS:
        sql_type = MONEY
    elif fraction == 0 and integer <= _BIGINT_DIGITS:
        sql_type = "BIGINT"
    else:
        sql_type = "DOUBLE"
    value = convention.value_sql(_trimmed(name), sql_type, percent=bool(percent), scaled=bool(scaled))
    _alter(target, column, sql_type, value)
    fmt = numbers.format_name(convention, percent=bool(percent), scaled=bool(scaled))
    target.note_column(column.table, name, original=_original(stats), format=fmt,
                       note=_number_note(stats, convention, currencies, sql_type,
                                         percent=bool(percent), scaled=bool(scaled)))


def _convert_date(target: ImportTarget, column: _Column, evidence: Evidence) -> None:
    stats, name = column.stats, column.name
    if not stats["values"]:
        return
    if stats["misfits"]:
        target.warn(column.table, (
            f"Column {name} stays text: {stats['misfits']:,} of {stats['values']:,} values "
            f"are not dates (such as `{stats['misfit']}`)."))
        return
    chosen: list[tuple[dates.Shape, dates.Rule]] = []
    for shape in dates.SHAPES:
        if not stats[shape.name]:
            continue
        reads = [r for i, r in enumerate(shape.rules) if stats[f"{shape.name}_{i}_fails"] == 0]
        if len(reads) > 1:
            order = evidence.decide(column.table, "order")
            reads = [r for r in reads if r.order == order]
            if not reads:
                example = _first_of_shape(stats, shape)
                target.warn(column.table, (
                    f"Column {name} stays text: its dates (such as `{example}`) read with "
                    f"the day first ({shape.rules[0].name}) as well as the month first "
                    f"({shape.rules[1].name}), and nothing else in the file tells which is "
                    "meant. Re-type the column with the format that is meant."))
                return
        if not reads:
            fail = stats[f"{shape.name}_0_fail"]
            target.warn(column.table, (
                f"Column {name} stays text: its dates are not all written one way (`{fail}` "
                f"does not read as {' or '.join(r.name for r in shape.rules)})."))
            return
        chosen.append((shape, reads[0]))
    sql_type = "TIMESTAMP" if stats["time"] else "DATE"
    cases = " ".join(f"WHEN {shape.match_sql(_trimmed(name))} THEN {rule.value_sql(_trimmed(name))}"
                     for shape, rule in chosen)
    _alter(target, column, sql_type, f"CAST(CASE {cases} END AS {sql_type})")
    fmt = " | ".join(rule.name for _, rule in chosen)
    orders = {rule.order for _, rule in chosen if rule.order}
    how = f" ({'day' if orders == {'day'} else 'month'} first)" if len(orders) == 1 else ""
    target.note_column(column.table, name, original=_original(stats), format=fmt,
                       note=f"Dates read from text like `{stats['example']}`{how}."
                            + _markers_said(stats))


def _first_of_shape(stats: dict, shape: dates.Shape) -> str:
    return stats["example"] if shape.matches(stats["example"] or "") else shape.rules[0].name


def _trimmed(name: str) -> str:
    return trimmed_sql(quote_ident(name))


def _alter(target: ImportTarget, column: _Column, sql_type: str, value: str) -> None:
    """Retype the column in place: markers NULL, every other value through ``value``."""
    ident = quote_ident(column.name)
    missing = missing_sql(trimmed_sql(ident))
    target.con.execute(f"ALTER TABLE {quote_ident(column.table)} ALTER {ident} TYPE {sql_type} "
                       f"USING (CASE WHEN {missing} THEN NULL ELSE {value} END)")
    logger.info("read column %s.%s as %s", column.table, column.name, sql_type)


def _original(stats: dict) -> str:
    return f"text like `{stats['example']}`"


def _markers_said(stats: dict) -> str:
    markers = stats["markers"] or []
    if not markers:
        return ""
    shown = ", ".join(f"`{m}`" for m in markers[:5])
    return f" {shown} {'was' if len(markers) == 1 else 'were'} read as missing."


def _number_note(stats: dict, convention: numbers.Convention, currencies: list[str],
                 sql_type: str, *, percent: bool, scaled: bool) -> str:
    example = stats["example"]
    said = [f"Numbers read from text like `{example}`"]
    if stats["separated"]:
        said.append(f" (decimal {'point' if convention.decimal == '.' else 'comma'})")
    said.append(".")
    if currencies:
        said.append(f" Amounts in {currencies[0]}.")
    if percent:
        said.append(" Percentages as fractions: 50% is 0.5.")
    if scaled:
        said.append(" k, M and B multiplied out: 1.2M is 1200000.")
    return "".join(said) + _markers_said(stats)
