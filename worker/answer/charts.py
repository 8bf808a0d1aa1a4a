"""Bind the model's chart specs to the real rows of the queries they name.

The model only says *what* to plot (``{"type", "title", "query_id", "x", "y",
"series"}``); the data always comes from the query result, so a chart can
never show numbers the model made up. A chart naming an unknown or failed
query, or a column that query did not return, is dropped with a warning and
the answer is still delivered.

``{{chart:N}}`` tokens in the answer text index the model's chart list from 0.
After dropping, tokens are renumbered to index the *delivered* list, and tokens
of dropped or non-existent charts are removed.

Each delivered chart carries a Vega-Lite v5 spec. ``table`` charts carry
``"vega_lite": None``: Vega-Lite has no table mark, and a client renders
``columns`` + ``data`` as an HTML table far better than a faked text grid.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from engine.sql.query_result import QueryResult

logger = logging.getLogger(__name__)

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
CHART_TOKEN = re.compile(r"\{\{\s*chart\s*:\s*(\d+)\s*\}\}")
# A token plus the blanks before it, so removing one does not leave "a  b".
_TOKEN_WITH_LEAD = re.compile(r"([ \t]*)" + CHART_TOKEN.pattern)
_MARKS = {"bar": "bar", "line": "line", "area": "area", "scatter": "point", "pie": "arc"}
_FOLD_AS = ("measure", "value")


class ChartSpec(BaseModel):
    """One chart as the model wrote it; ``y`` is normalised to a list."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    type: Literal["bar", "line", "area", "pie", "scatter", "table"]
    title: str = ""
    query_id: int
    x: str | None = None
    y: list[str] = []
    series: str | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _lower_type(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("query_id", mode="before")
    @classmethod
    def _no_bool_ids(cls, value: Any) -> Any:
        if isinstance(value, bool):
            # ValueError, not TypeError: only ValueError becomes a ValidationError.
            raise ValueError("query_id must be an integer")
        return value

    @field_validator("y", mode="before")
    @classmethod
    def _y_as_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _needs_axes(self) -> ChartSpec:
        if self.type != "table" and (not self.x or not self.y):
            raise ValueError(f"a {self.type} chart needs an x column and at least one y column")
        if self.type == "pie" and len(self.y) != 1:
            raise ValueError("a pie chart takes exactly one y column")
        return self


@dataclass(frozen=True)
class BoundCharts:
    """Charts ready to deliver, the answer text with renumbered tokens, and why
    anything was dropped or changed."""

    charts: list[dict]
    answer_text: str
    warnings: list[str] = field(default_factory=list)


def bind_charts(
    raw_charts: Sequence[Any], results: Mapping[int, QueryResult], answer_text: str
) -> BoundCharts:
    """Validate ``raw_charts`` against ``results`` and attach their data.

    Pure apart from logging one warning per problem; never raises for bad
    model output. Each delivered chart is ``{"type", "title", "query_id", "x",
    "y", "series", "columns", "data", "vega_lite"}`` with JSON-safe ``data``.
    """
    delivered: list[dict] = []
    warnings: list[str] = []
    new_index: dict[int, int] = {}

    def warn(message: str) -> None:
        logger.warning("%s", message)
        warnings.append(message)

    for index, raw in enumerate(raw_charts or []):
        try:
            spec = ChartSpec.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'chart'}: {e['msg']}"
                                 for e in exc.errors())
            warn(f"chart {index} dropped: malformed ({problems})")
            continue
        result = results.get(spec.query_id)
        if result is None:
            warn(f"chart {index} dropped: no query has query_id={spec.query_id}")
            continue
        if result.is_error:
            warn(f"chart {index} dropped: query {spec.query_id} failed")
            continue
        named = [spec.x, *spec.y, spec.series]
        missing = [name for name in named if name is not None and name not in result.columns]
        if missing:
            warn(f"chart {index} dropped: query {spec.query_id} has no column "
                 f"{', '.join(missing)} (it has {', '.join(result.columns)})")
            continue
        if len(result.rows) < result.total_rows:
            warn(f"chart {index} plots the first {len(result.rows)} of "
                 f"{result.total_rows} rows of query {spec.query_id}")
        try:
            chart = _deliver(spec, result)
        except Exception:  # a rendering bug must cost one chart, not the answer
            logger.exception("chart %s could not be built", index)
            warn(f"chart {index} dropped: it could not be built")
            continue
        new_index[index] = len(delivered)
        delivered.append(chart)

    removed = False

    def renumber(match: re.Match) -> str:
        nonlocal removed
        lead, old = match.group(1), int(match.group(2))
        if old in new_index:
            return f"{lead}{{{{chart:{new_index[old]}}}}}"
        warn(f"token {match.group(0).strip()} removed: no delivered chart {old}")
        removed = True
        return ""

    text = _TOKEN_WITH_LEAD.sub(renumber, answer_text if isinstance(answer_text, str) else "")
    if removed:
        # A token alone on its line leaves an empty line; keep paragraphs tidy.
        text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return BoundCharts(delivered, text, warnings)


def _deliver(spec: ChartSpec, result: QueryResult) -> dict:
    columns = list(result.columns)
    data = [{name: json_safe(value) for name, value in zip(columns, row)} for row in result.rows]
    kinds = {name: _field_type([row[i] for row in result.rows]) for i, name in enumerate(columns)}
    date_only = {name for i, name in enumerate(columns)
                 if kinds[name] == "temporal"
                 and not any(isinstance(row[i], dt.datetime) for row in result.rows)}
    return {
        "type": spec.type,
        "title": spec.title,
        "query_id": spec.query_id,
        "x": spec.x,
        "y": list(spec.y),
        "series": spec.series,
        "sql": result.sql,
        "columns": columns,
        "data": data,
        "vega_lite": None if spec.type == "table" else vega_lite_spec(spec, data, kinds, date_only),
    }


def vega_lite_spec(spec: ChartSpec, data: list[dict], kinds: Mapping[str, str],
                   date_only: Collection[str] = ()) -> dict:
    """Build the Vega-Lite v5 spec for a non-table chart over ``data``.

    ``kinds`` maps column -> ``quantitative|temporal|nominal``; ``date_only``
    names temporal columns holding plain dates, which JavaScript parses as UTC
    midnight, so their x axis uses a UTC time unit (otherwise a browser west of
    Greenwich would label 2013-01-01 as Dec 31). Several y
    columns are folded into (measure, value) pairs coloured by measure;
    ``series`` colours by that column (combined with the measure if both;
    ignored for pie, whose colour is x).
    Discrete x axes keep the query's row order rather than sorting.
    """
    x, ys = spec.x or "", spec.y
    tooltip = [{"field": _field(n), "type": kinds[n]} for n in dict.fromkeys([x, *ys])]
    out: dict[str, Any] = {"$schema": VEGA_LITE_SCHEMA, "data": {"values": data}}
    if spec.title:
        out["title"] = spec.title
    transform: list[dict] = []
    if len(ys) > 1:
        transform.append({"fold": [_field(n) for n in ys], "as": list(_FOLD_AS)})
        y_field, y_type, y_title = _FOLD_AS[1], "quantitative", ", ".join(ys)
        color: dict | None = {"field": _FOLD_AS[0], "type": "nominal"}
        tooltip.append({"field": _FOLD_AS[0], "type": "nominal"})
    else:
        y_field, y_type, y_title = _field(ys[0]), kinds[ys[0]], ys[0]
        color = None
    if spec.series and spec.type != "pie":
        tooltip.append({"field": _field(spec.series), "type": kinds[spec.series]})
        if color is None:
            color = {"field": _field(spec.series), "type": "nominal", "title": spec.series}
        else:
            expr = f"datum[{json.dumps(spec.series)}] + ' · ' + datum.{_FOLD_AS[0]}"
            transform.append({"calculate": expr, "as": "series_measure"})
            color = {"field": "series_measure", "type": "nominal", "title": spec.series}
    if transform:
        out["transform"] = transform
    if spec.type == "pie":
        out["mark"] = {"type": "arc", "tooltip": True}
        out["encoding"] = {
            "theta": {"field": y_field, "type": "quantitative", "title": y_title},
            "color": {"field": _field(x), "type": "nominal", "title": x, "sort": None},
            "tooltip": tooltip,
        }
        return out
    x_type = kinds[x]
    if spec.type == "bar" and x_type == "quantitative":
        x_type = "ordinal"  # e.g. month numbers: one bar per value, not a number line
    x_enc: dict[str, Any] = {"field": _field(x), "type": x_type, "title": x}
    if x_type in ("nominal", "ordinal"):
        x_enc["sort"] = None
    elif x_type == "quantitative" and all(
            isinstance(row.get(x), int) for row in data if row.get(x) is not None):
        # Whole-number x (years, months, hours): no 1.5 ticks between them.
        x_enc["axis"] = {"format": "d", "tickMinStep": 1}
    elif x_type == "temporal" and x in date_only:
        x_enc["timeUnit"] = "utcyearmonthdate"
    mark: dict[str, Any] = {"type": _MARKS[spec.type], "tooltip": True}
    if spec.type == "line":
        mark["point"] = True
    out["mark"] = mark
    out["encoding"] = {"x": x_enc, "y": {"field": y_field, "type": y_type, "title": y_title},
                       "tooltip": tooltip}
    if color is not None:
        out["encoding"]["color"] = color
    return out


def json_safe(value: Any) -> Any:
    """Convert a DuckDB value into something ``json.dumps`` accepts losslessly enough.

    Dates/times -> ISO strings, Decimal -> float, NaN/inf -> None, bytes -> hex,
    nested lists/dicts converted recursively, anything else unknown -> str.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return json_safe(float(value))
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    return str(value)


def _field_type(values: Sequence[Any]) -> str:
    present = [value for value in values if value is not None]
    if not present:
        return "nominal"
    if all(isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)
           for v in present):
        return "quantitative"
    if all(isinstance(v, (dt.date, dt.datetime)) for v in present):
        return "temporal"
    return "nominal"


def _field(name: str) -> str:
    """Escape a column name for Vega-Lite, where ``.`` and ``[]`` mean nesting."""
    return re.sub(r"([.\[\]\\])", r"\\\1", name)
