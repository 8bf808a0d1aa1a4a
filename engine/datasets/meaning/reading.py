"""Text columns read as a person reads them: numbers, dates and missing values.

After an importer has made a source's tables, each VARCHAR column is looked at:

1. a bounded sample (the first ``SAMPLE_ROWS`` rows, values cut to ``SAMPLE_CHARS``) is
   read into Python and says whether the column looks like numbers or dates at all
   (at least ``LOOKS_LIKE`` of its values that are not missing markers);
2. one scan inside DuckDB checks every value of such a column against each way of
   reading it that read the whole sample (numbers: the decimal point and/or the decimal
   comma; dates: the shapes seen, each with the rules and exact formats that read its
   sampled values, found with Python's ``strptime``) and gathers what deciding needs;
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
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.datasets.meaning import dates, numbers
from engine.datasets.meaning.evidence import Evidence
from engine.datasets.meaning.missing import missing_sql, present, trimmed_sql
from engine.datasets.meaning.suggestion import date_suggestion, number_suggestion
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
# Amounts in one currency with at most two decimals.
MONEY = "DECIMAL(18,2)"
# Up to 18 digits fit BIGINT and DECIMAL(18, 2); longer numbers are read as DOUBLE.
_DIGITS = 18
# How many of a shape's sampled dates find the formats (with a time of day) that read them.
DATE_SAMPLE = 200
_S = "s"  # the trimmed value in the checking scans
_DIGIT = re.compile("[0-9]")
# Words in a column's name that make it a code (postal codes): its 4- and 5-digit values
# stay text, because a leading zero ("01067", Dresden) may be lost from none of them yet.
CODE_WORDS = frozenset({"code", "codes", "postcode", "postcodes", "postal", "zip", "zipcode",
                        "plz", "postleitzahl", "npa"})
_CODE = "[0-9]{4,5}"


@dataclass
class _Column:
    """A text column that looked like ``kind`` ("number" or "date") in its sample: the
    number conventions, or per date shape the rules with the formats, that read every
    sampled value (only those are checked on the whole column)."""

    table: str
    name: str
    kind: str
    conventions: tuple[numbers.Convention, ...] = ()
    shapes: dict[str, list[tuple[dates.Rule, tuple[str, ...]]]] = field(default_factory=dict)
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
        values = present(row[index] for row in rows)
        if len(values) < SPARSE and len(rows) == SAMPLE_ROWS:
            values = _sparse_sample(target, table, name)
        column = _looks_like(table, name, values)
        if column is not None:
            found.append(column)
    return found


def _sparse_sample(target: ImportTarget, table: str, name: str) -> list[str]:
    ident = quote_ident(name)
    trimmed = trimmed_sql(ident)
    rows = target.con.execute(
        f"SELECT left({ident}, {SAMPLE_CHARS}) FROM {quote_ident(table)} "
        f"WHERE NOT {missing_sql(trimmed)} LIMIT {SAMPLE_ROWS}").fetchall()
    return present(value for (value,) in rows)


def _looks_like(table: str, name: str, values: list[str]) -> _Column | None:
    """The column as numbers or dates, if enough of its sampled values (markers left
    out) look like them; with what reads every sampled value."""
    if not values:
        return None
    needed = LOOKS_LIKE * len(values)
    # Every number and date has a digit: names and words are passed over unmatched.
    if sum(_has_digit(v) for v in values) < needed:
        return None
    if sum(any(c.matches(v) for c in numbers.CONVENTIONS) for v in values) >= needed:
        fitting = tuple(c for c in numbers.CONVENTIONS if all(c.matches(v) for v in values))
        if not fitting:  # checked all the same, to count and show what does not read
            fitting = (max(numbers.CONVENTIONS, key=lambda c: sum(map(c.matches, values))),)
        return _Column(table, name, "number", conventions=fitting)
    by_shape: dict[str, list[str]] = {}
    for value in values:
        shape = dates.shape_of(value)
        if shape is not None:
            by_shape.setdefault(shape.name, []).append(value)
    if sum(map(len, by_shape.values())) < needed:
        return None
    shapes = {}
    for shape in dates.SHAPES:
        if shape.name in by_shape:
            reading = [(rule, rule.formats_reading(by_shape[shape.name][:DATE_SAMPLE]))
                       for rule in shape.rules]
            shapes[shape.name] = [(rule, formats) for rule, formats in reading
                                  if formats is not None]
    return _Column(table, name, "date", shapes=shapes)


def _has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def _scan(target: ImportTarget, column: _Column, parts: dict[str, str]) -> dict:
    """One scan of ``column`` computing ``parts`` (SQL over the trimmed value ``s``,
    ``missing`` and ``r``, the row id); the results by name."""
    ident = quote_ident(column.name)
    trimmed = trimmed_sql(ident)
    select = ", ".join(f"{sql} AS {quote_ident(name)}" for name, sql in parts.items())
    row = target.con.execute(
        f"SELECT {select} FROM (SELECT r, {_S}, {missing_sql(_S)} AS missing FROM "
        f"(SELECT rowid AS r, {trimmed} AS {_S} FROM {quote_ident(column.table)}))").fetchone()
    return dict(zip(parts, row))


def _common(parts: dict[str, str]) -> dict[str, str]:
    return {"values": "count(*) FILTER (WHERE NOT missing)",
            "example": f"arg_min({_S}, r) FILTER (WHERE NOT missing)",
            "markers": f"list(DISTINCT {_S} ORDER BY {_S}) FILTER (WHERE missing AND {_S} <> '')",
            **parts}


def _code_named(name: str) -> bool:
    return bool(CODE_WORDS.intersection(re.split(r"[^a-z]+", name.lower())))


def _number_stats(target: ImportTarget, column: _Column) -> dict:
    """Per convention that read the sample, the values it does not read; and what
    choosing the type needs. The sample's misfit stands for a convention it ruled out."""
    parts = {}
    for c in column.conventions:
        fits = f"regexp_full_match({_S}, {sql_literal(c.pattern)})"
        parts[f"{c.name}_misfits"] = f"count(*) FILTER (WHERE NOT missing AND NOT {fits})"
        parts[f"{c.name}_misfit"] = f"arg_min({_S}, r) FILTER (WHERE NOT missing AND NOT {fits})"
        parts[f"{c.name}_fractions"] = (f"count(*) FILTER (WHERE NOT missing AND "
                                        f"contains({_S}, '{c.decimal}'))")
        parts[f"{c.name}_fraction"] = (f"max({numbers.fraction_digits_sql(_S, c)}) "
                                       f"FILTER (WHERE NOT missing AND contains({_S}, '{c.decimal}'))")
    currency = numbers.currency_sql(_S)
    separated = f"(contains({_S}, ',') OR contains({_S}, '.'))"
    parts.update({
        "digits": f"max(length(regexp_replace({_S}, '[^0-9]', '', 'g'))) FILTER (WHERE NOT missing)",
        "percent": f"count(*) FILTER (WHERE NOT missing AND {numbers.percent_sql(_S)})",
        "scaled": f"count(*) FILTER (WHERE NOT missing AND {numbers.scaled_sql(_S)})",
        "separated": f"count(*) FILTER (WHERE NOT missing AND {separated})",
        "currencies": f"list(DISTINCT {currency} ORDER BY {currency}) "
                      f"FILTER (WHERE NOT missing AND {currency} <> '')",
        "separated_example": f"arg_min({_S}, r) FILTER (WHERE NOT missing AND {separated})",
    })
    if _code_named(column.name):
        parts["codes"] = (f"count(*) FILTER (WHERE NOT missing AND "
                          f"regexp_full_match({_S}, '{_CODE}'))")
    return _scan(target, column, _common(parts))


def _date_stats(target: ImportTarget, column: _Column) -> dict:
    """Per shape in the sample, its values and, per rule that read the sample, the values
    it does not read; the values of no such shape."""
    parts = {}
    present = [shape for shape in dates.SHAPES if shape.name in column.shapes]
    for shape in present:
        match = shape.match_sql(_S)
        parts[shape.name] = f"count(*) FILTER (WHERE NOT missing AND {match})"
        for index, (rule, formats) in enumerate(column.shapes[shape.name]):
            fails = f"NOT missing AND {match} AND {rule.value_sql(_S, formats)} IS NULL"
            parts[f"{shape.name}_{index}_fails"] = f"count(*) FILTER (WHERE {fails})"
            parts[f"{shape.name}_{index}_fail"] = f"arg_min({_S}, r) FILTER (WHERE {fails})"
    shaped = " OR ".join(shape.match_sql(_S) for shape in present)
    parts["misfits"] = f"count(*) FILTER (WHERE NOT missing AND NOT ({shaped}))"
    parts["misfit"] = f"arg_min({_S}, r) FILTER (WHERE NOT missing AND NOT ({shaped}))"
    parts["time"] = f"bool_or({dates.has_time_sql(_S)}) FILTER (WHERE NOT missing)"
    return _scan(target, column, _common(parts))


def _date_reads(column: _Column, shape_name: str) -> list[tuple[dates.Rule, tuple[str, ...]]]:
    """The rules (with their formats) of a shape that read all of the column's values of it."""
    return [(rule, formats) for index, (rule, formats) in enumerate(column.shapes[shape_name])
            if column.stats[f"{shape_name}_{index}_fails"] == 0]


def _gather(column: _Column, evidence: Evidence) -> None:
    """What an unambiguous column says about its source's conventions."""
    stats = column.stats
    if column.kind == "number":
        fitting = [c for c in column.conventions if stats[f"{c.name}_misfits"] == 0]
        if len(fitting) == 1 and stats["separated"]:
            evidence.saw(column.table, "decimal", fitting[0].decimal)
        return
    for shape in dates.SHAPES:
        if shape.name in column.shapes and len(shape.rules) == 2:
            reads = _date_reads(column, shape.name)
            if len(reads) == 1 and stats[shape.name]:
                evidence.saw(column.table, "order", reads[0][0].order)


def _convert_number(target: ImportTarget, column: _Column, evidence: Evidence) -> None:
    stats, name = column.stats, column.name
    if not stats["values"]:
        return
    if stats.get("codes") == stats["values"]:
        target.note_column(column.table, name, note=(
            f"Codes such as `{stats['example']}`, kept as text as written (a code's leading "
            "zeros are part of it)."))
        return
    fitting = [c for c in column.conventions if stats[f"{c.name}_misfits"] == 0]
    if not fitting:
        misfits = {c.name: stats[f"{c.name}_misfits"] for c in column.conventions}
        best = min(misfits, key=misfits.get) if misfits else None
        example = stats[f"{best}_misfit"] if best else None
        counted = (f"{misfits[best]:,} of {stats['values']:,} values are not numbers"
                   if best else "its values are not numbers")
        target.warn(column.table, (
            f"Column {name} stays text: {counted} written one way"
            + (f" (such as `{example}`)." if example else ".")))
        if best:
            _suggest_number(target, column, next(c for c in column.conventions
                                                 if c.name == best))
        return
    if len(fitting) == 2 and stats["separated"]:
        decimal = evidence.decide(column.table, "decimal")
        if decimal is None:
            target.warn(column.table, (
                f"Column {name} stays text: a value such as `{stats['separated_example']}` "
                "reads as a different number with a decimal point than with a decimal "
                "comma, and nothing else in the file tells which is meant. Re-type the "
                "column with the format decimal_point or decimal_comma."))
            # Offer the reading as whole numbers (1,234 as 1234), groups of three digits
            # being thousands far more often than decimals.
            whole = [c for c in fitting if not stats[f"{c.name}_fractions"]]
            _suggest_number(target, column, (whole or fitting)[0])
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
            _suggest_number(target, column, convention)
            return
    if len(currencies) > 1:
        target.warn(column.table, (
            f"Column {name} stays text: it mixes currencies ({', '.join(currencies)}), "
            "whose amounts cannot be added up."))
        return
    sql_type = _number_type(stats, convention, currencies,
                            percent=bool(percent), scaled=bool(scaled))
    value = convention.value_sql(_trimmed(name), sql_type, percent=bool(percent),
                                 scaled=bool(scaled), checked=True)
    _alter(target, column, sql_type, value)
    fmt = numbers.format_name(convention, percent=bool(percent), scaled=bool(scaled))
    target.note_column(column.table, name, original=_original(stats), format=fmt,
                       note=_number_note(stats, convention, currencies,
                                         percent=bool(percent), scaled=bool(scaled)))


def _number_type(stats: dict, convention: numbers.Convention, currencies: list[str], *,
                 percent: bool, scaled: bool) -> str:
    """The type a column's numbers read with ``convention`` are converted to."""
    fraction = stats[f"{convention.name}_fraction"] or 0
    whole = not stats[f"{convention.name}_fractions"]
    if percent or scaled or (stats["digits"] or 0) > _DIGITS:
        return "DOUBLE"
    if currencies and fraction <= 2:
        return MONEY
    return "BIGINT" if whole else "DOUBLE"


def _suggest_number(target: ImportTarget, column: _Column,
                    convention: numbers.Convention) -> None:
    """Offer the re-type that reads the column's numbers with ``convention``; its
    percentages or multipliers where most values have them."""
    stats = column.stats
    percent, scaled = (2 * stats[key] > stats["values"] for key in ("percent", "scaled"))
    sql_type = _number_type(stats, convention, (stats["currencies"] or [])[:1],
                            percent=percent, scaled=scaled)
    target.note_column(column.table, column.name, suggestion=number_suggestion(
        convention, sql_type, percent=percent, scaled=scaled))


def _convert_date(target: ImportTarget, column: _Column, evidence: Evidence) -> None:
    stats, name = column.stats, column.name
    if not stats["values"]:
        return
    if stats["misfits"]:
        target.warn(column.table, (
            f"Column {name} stays text: {stats['misfits']:,} of {stats['values']:,} values "
            f"are not dates written like the others (such as `{stats['misfit']}`)."))
        _suggest_date(target, column, evidence)
        return
    chosen: list[tuple[dates.Shape, dates.Rule, tuple[str, ...]]] = []
    for shape in dates.SHAPES:
        if shape.name not in column.shapes or not stats[shape.name]:
            continue
        reads = _date_reads(column, shape.name)
        if len(reads) > 1:
            order = evidence.decide(column.table, "order")
            reads = [(rule, formats) for rule, formats in reads if rule.order == order]
            if not reads:
                target.warn(column.table, (
                    f"Column {name} stays text: its dates (such as `{stats['example']}`) read "
                    f"with the day first ({shape.rules[0].name}) as well as the month first "
                    f"({shape.rules[1].name}), and nothing else in the file tells which is "
                    "meant. Re-type the column with the format that is meant."))
                _suggest_date(target, column, evidence)
                return
        if not reads:
            fails = [stats.get(f"{shape.name}_{i}_fail") for i in range(len(column.shapes[shape.name]))]
            example = next((f for f in fails if f), stats["example"])
            target.warn(column.table, (
                f"Column {name} stays text: its dates are not all written one way (`{example}` "
                f"does not read as {' or '.join(r.name for r in shape.rules)} like the others)."))
            _suggest_date(target, column, evidence)
            return
        chosen.append((shape, *reads[0]))
    sql_type = "TIMESTAMP" if stats["time"] else "DATE"
    trimmed = _trimmed(name)
    cases = " ".join(f"WHEN {shape.match_sql(trimmed)} THEN {rule.value_sql(trimmed, formats)}"
                     for shape, rule, formats in chosen)
    _alter(target, column, sql_type, f"CAST(CASE {cases} END AS {sql_type})")
    fmt = " | ".join(rule.name for _, rule, _ in chosen)
    orders = {rule.order for _, rule, _ in chosen if rule.order}
    how = f" ({'day' if orders == {'day'} else 'month'} first)" if len(orders) == 1 else ""
    target.note_column(column.table, name, original=_original(stats), format=fmt,
                       note=f"Dates read from text like `{stats['example']}`{how}."
                            + _markers_said(stats))


def _suggest_date(target: ImportTarget, column: _Column, evidence: Evidence) -> None:
    """Offer the re-type that reads each date shape of the column with one rule: the one
    that reads all its values (the file's order, else the day first, where both do),
    else the one that fails on the fewest."""
    stats, formats = column.stats, []
    for shape in dates.SHAPES:
        if shape.name not in column.shapes or not stats[shape.name]:
            continue
        reads = _date_reads(column, shape.name)
        order = evidence.decide(column.table, "order")
        if reads:
            rule = next((r for r, _ in reads if r.order == order), reads[0][0])
        elif column.shapes[shape.name]:
            rule = min(enumerate(column.shapes[shape.name]),
                       key=lambda item: stats[f"{shape.name}_{item[0]}_fails"])[1][0]
        else:
            rule = shape.rules[0]
        formats.append(rule.name)
    if formats:
        target.note_column(column.table, column.name, suggestion=date_suggestion(
            formats, "TIMESTAMP" if stats["time"] else "DATE"))


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


def _number_note(stats: dict, convention: numbers.Convention, currencies: list[str], *,
                 percent: bool, scaled: bool) -> str:
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
