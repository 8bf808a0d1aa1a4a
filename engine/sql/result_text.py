"""The text an ``execute_sql`` result carries back to the model, rendered from the data
the SQL sandbox returned (``engine/sql/query_result.py``).

Format (CSV, one header row, never JSON -- it is re-sent on every later call)::

    query_id=3 rows=10000 shown=25
    carrier,flights,avg_delay
    UA,58665,12.1
    ... (25 data rows in all)

    summary over all 10000 rows
    column,count,total,min,max,avg
    flights,10000,336776,1,58665,33.68

Up to ``SHOWN_ROWS`` rows are listed in full and nothing else follows. Above
that, the first 25 rows are followed by a summary computed by DuckDB over the
whole result (see ``engine/sql/result_sql.py``), so the model never has to add up a
truncated column. A column is summarised when more than half of all its values
are numeric; names ending in ``_id``, ``_pk`` or ``_code`` are skipped because
their sums mean nothing. When no column qualifies only the ``summary over all
N rows`` line is printed, which still tells the model the true row count.

Bounds, for results no context window could hold: only the first ``MAX_COLUMNS``
columns are shown (and summarised), the header and rows stop before
``TEXT_BUDGET_CHARS`` characters (``shown`` says how many rows made it), and a
line ``cut: ...`` says what was left out and how to ask better. Ordinary results
are far inside these bounds and unaffected. The whole text never exceeds
``MAX_TEXT_CHARS``.

Value rendering: NULL is empty; integers as written; floats and decimals with
at most 4 decimals and trailing zeros stripped (``avg`` with 2), except that a
non-zero magnitude too small to survive the rounding is shown with 4
significant digits rather than as a misleading ``0``; dates and times ISO 8601;
booleans ``true``/``false``; nested values as JSON. Cells longer than
``MAX_CELL_CHARS`` are cut with an ellipsis to protect the context window.

Everything here is pure: no database access, no side effects.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from engine.sql.query_result import MAX_CELL_CHARS, SHOWN_ROWS, ColumnSummary, QueryResult

# About 8,000 tokens: the header and rows of one result; the summary follows.
TEXT_BUDGET_CHARS = 30_000
MAX_TEXT_CHARS = 60_000
SUMMARY_HEADER = ("column", "count", "total", "min", "max", "avg")


def format_error(message: str) -> str:
    """Return the tool-result text for a failed query: ``error: <message>``."""
    return f"error: {message}"


def format_result(
    query_id: int,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    total_rows: int,
    summary: Sequence[ColumnSummary] | None,
    max_rows: int = SHOWN_ROWS,
    *,
    total_columns: int = 0,
) -> str:
    """Render a query result as the tool-result text described in the module doc.

    ``rows`` may hold more than ``SHOWN_ROWS`` rows (the sandbox keeps more for
    charts); only the first 25 are shown, as many as fit ``TEXT_BUDGET_CHARS``.
    ``summary`` is printed only when ``total_rows`` exceeds the rows shown, and its
    header only when it is non-empty. ``columns`` (at most ``MAX_COLUMNS``) are those
    of the rows; ``total_columns`` is how many the result had, if more. ``max_rows``
    other than 25 (0: all of ``rows``) exists for benchmarks only.
    """
    wanted = rows[:max_rows] if max_rows else rows
    body = io.StringIO()
    writer = csv.writer(body, lineterminator="\n")
    writer.writerow([_cap(str(name)) for name in columns])
    size, shown = body.tell(), 0
    for row in wanted:
        writer.writerow([format_value(value) for value in row])
        if body.tell() > TEXT_BUDGET_CHARS:
            body.seek(size)
            body.truncate()
            break
        size, shown = body.tell(), shown + 1
    text = io.StringIO()
    text.write(f"query_id={query_id} rows={total_rows} shown={shown}\n{body.getvalue()}")
    cut = []
    if shown < (min(max_rows, total_rows) if max_rows else len(rows)):
        cut.append(f"{shown} rows shown, as the text of one result stops at "
                   f"{TEXT_BUDGET_CHARS:,} characters")
    if total_columns > len(columns):
        cut.append(f"the first {len(columns)} of {total_columns} columns")
    if cut:
        text.write(f"\ncut: {'; '.join(cut)}; select fewer or narrower columns, or "
                   "aggregate\n")
    if total_rows > shown:
        text.write(f"\nsummary over all {total_rows} rows\n")
        if summary:
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(SUMMARY_HEADER)
            for item in summary:
                writer.writerow([
                    _cap(item.column),
                    str(item.count),
                    format_value(item.total),
                    format_value(item.min),
                    format_value(item.max),
                    format_value(item.avg, decimals=2),
                ])
    rendered = text.getvalue().rstrip("\n")
    if len(rendered) > MAX_TEXT_CHARS:
        rendered = rendered[:MAX_TEXT_CHARS] + f"\ncut: the text stops at {MAX_TEXT_CHARS:,} characters"
    return rendered


def result_text(result: QueryResult, query_id: int, fmt: str = "csv",
                max_rows: int = SHOWN_ROWS) -> str:
    """The tool-result text of ``result`` under ``query_id``: as shipped, CSV with 25
    rows (``format_result``) or ``error: <message>``. JSON rows (records with raw values)
    and other row counts exist so benchmarks can price the naive way.
    """
    if result.is_error:
        return format_error(result.error or "")
    if fmt == "csv":
        return format_result(query_id, result.columns, result.rows, result.total_rows,
                             result.summary, max_rows, total_columns=result.total_columns)
    shown = result.rows[:max_rows] if max_rows else result.rows
    payload: dict[str, Any] = {
        "query_id": query_id, "rows": result.total_rows, "shown": len(shown),
        "data": [dict(zip(result.columns, row, strict=False)) for row in shown]}
    if result.total_rows > len(shown):
        payload["summary"] = [vars(item) for item in result.summary or []]
    return json.dumps(payload, default=str, ensure_ascii=False)


def format_value(value: Any, *, decimals: int = 4) -> str:
    """Render one cell for the CSV text (see the module doc for the rules)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float(value, decimals)
    if isinstance(value, decimal.Decimal):
        return _format_decimal(value, decimals)
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _cap("\\x" + bytes(value).hex())
    if isinstance(value, (list, tuple, dict)):
        return _cap(json.dumps(value, default=str, ensure_ascii=False))
    return _cap(str(value))


def _format_float(value: float, decimals: int) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    magnitude = abs(value)
    if magnitude >= 1e16:
        return f"{value:.6g}"
    if 0 < magnitude < 0.5 * 10 ** -decimals:
        return f"{value:.4g}"
    return _strip_zeros(f"{value:.{decimals}f}")


def _format_decimal(value: decimal.Decimal, decimals: int) -> str:
    if not value.is_finite():
        return _format_float(float(value), decimals)
    try:
        rounded = value.quantize(decimal.Decimal(1).scaleb(-decimals), rounding=decimal.ROUND_HALF_EVEN)
    except decimal.InvalidOperation:
        # More digits than the context holds: a float rendering is close enough.
        return _format_float(float(value), decimals)
    if rounded == 0 and value != 0:
        return f"{float(value):.4g}"
    return _strip_zeros(f"{rounded:f}")


def _strip_zeros(text: str) -> str:
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _cap(text: str) -> str:
    if len(text) > MAX_CELL_CHARS:
        return text[:MAX_CELL_CHARS] + "…"
    return text
