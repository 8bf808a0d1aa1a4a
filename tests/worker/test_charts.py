from __future__ import annotations

import json
import logging

import pytest
import vl_convert as vlc

from worker.answer.charts import VEGA_LITE_SCHEMA, BoundCharts, ChartSpec, bind_charts, json_safe

CARRIERS = "SELECT carrier, count(*) AS flights, avg(dep_delay) AS avg_delay FROM flights GROUP BY 1 ORDER BY 2 DESC"
MONTHLY = ("SELECT date_trunc('month', time_hour)::DATE AS month, origin, count(*) AS flights, "
           "avg(arr_delay) AS \"arr.delay\" FROM flights GROUP BY ALL ORDER BY 1, 2")


@pytest.fixture(scope="module")
def results(flights_sandbox):
    return {
        1: flights_sandbox.run(CARRIERS),
        2: flights_sandbox.run(MONTHLY),
        3: flights_sandbox.run("SELECT nope FROM flights"),
        4: flights_sandbox.run("SELECT * FROM flights"),
    }


def chart(**overrides):
    spec = {"type": "bar", "title": "Flights by carrier", "query_id": 1, "x": "carrier", "y": ["flights"],
            "series": None}
    spec.update(overrides)
    return spec


def test_bar_chart_is_bound_to_the_query_rows(results):
    bound = bind_charts([chart()], results, "UA leads {{chart:0}}.")
    assert bound == BoundCharts(bound.charts, "UA leads {{chart:0}}.", [])
    delivered = bound.charts[0]
    assert set(delivered) == {"type", "title", "query_id", "x", "y", "series", "sql", "columns", "data", "vega_lite"}
    assert delivered["columns"] == ["carrier", "flights", "avg_delay"]
    assert delivered["data"][0] == {"carrier": "UA", "flights": 58665,
                                    "avg_delay": pytest.approx(12.106073)}
    assert len(delivered["data"]) == 16
    spec = delivered["vega_lite"]
    assert spec["$schema"] == VEGA_LITE_SCHEMA
    assert spec["data"]["values"] == delivered["data"]
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["x"] == {"field": "carrier", "type": "nominal", "title": "carrier", "sort": None}
    assert spec["encoding"]["y"]["type"] == "quantitative"
    json.dumps(delivered, allow_nan=False)


@pytest.mark.parametrize(("raw", "mark"), [
    (chart(), "bar"),
    (chart(type="line", query_id=2, x="month", y="flights", series="origin"), "line"),
    (chart(type="area", query_id=2, x="month", y=["flights"], series="origin"), "area"),
    (chart(type="scatter", x="flights", y=["avg_delay"]), "point"),
    (chart(type="pie", y=["flights"]), "arc"),
    (chart(type="line", query_id=2, x="month", y=["flights", "arr.delay"]), "line"),
    (chart(type="bar", query_id=2, x="month", y=["flights", "arr.delay"], series="origin"), "bar"),
])
def test_every_chart_type_renders_to_svg(results, raw, mark):
    bound = bind_charts([raw], results, "")
    assert bound.warnings == []
    spec = bound.charts[0]["vega_lite"]
    assert spec["mark"]["type"] == mark
    svg = vlc.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "role-mark" in svg
    assert svg.count("<path") > 3


def test_field_types_are_inferred_from_values(results):
    line = bind_charts([chart(type="line", query_id=2, x="month", y="flights", series="origin")],
                       results, "").charts[0]
    enc = line["vega_lite"]["encoding"]
    assert enc["x"]["type"] == "temporal"
    assert enc["x"]["timeUnit"] == "utcyearmonthdate"  # plain dates parse as UTC in JS
    assert enc["y"]["type"] == "quantitative"
    assert enc["color"] == {"field": "origin", "type": "nominal", "title": "origin"}
    assert line["data"][0]["month"] == "2013-01-01"


def test_several_y_columns_are_folded(results):
    spec = bind_charts([chart(type="line", query_id=2, x="month", y=["flights", "arr.delay"])],
                       results, "").charts[0]["vega_lite"]
    assert spec["transform"] == [{"fold": ["flights", "arr\\.delay"], "as": ["measure", "value"]}]
    assert spec["encoding"]["y"]["field"] == "value"
    assert spec["encoding"]["color"]["field"] == "measure"


def test_pie_uses_theta_and_color(results):
    spec = bind_charts([chart(type="pie", y="flights")], results, "").charts[0]["vega_lite"]
    assert spec["encoding"]["theta"]["field"] == "flights"
    assert spec["encoding"]["color"]["field"] == "carrier"


def test_table_has_data_but_no_vega_lite(results):
    delivered = bind_charts([{"type": "table", "title": "All", "query_id": 2}], results, "").charts[0]
    assert delivered["vega_lite"] is None
    assert delivered["y"] == [] and delivered["x"] is None
    assert len(delivered["data"]) == results[2].total_rows


@pytest.mark.parametrize(("raw", "reason"), [
    (chart(query_id=42), "no query has query_id=42"),
    (chart(query_id=3), "query 3 failed"),
    (chart(x="airline"), "no column airline"),
    (chart(y=["flights", "delay"]), "no column delay"),
    (chart(series="origin"), "no column origin"),
    (chart(type="histogram"), "malformed"),
    (chart(query_id="one"), "malformed"),
    (chart(query_id=True), "malformed"),
    (chart(x=None), "malformed"),
    (chart(y=[]), "malformed"),
    (chart(type="pie", y=["flights", "avg_delay"]), "malformed"),
    ({"title": "no type"}, "malformed"),
    ("not a dict", "malformed"),
    (None, "malformed"),
])
def test_bad_charts_are_dropped_with_a_warning(results, raw, reason, caplog):
    with caplog.at_level(logging.WARNING, logger="worker.answer.charts"):
        bound = bind_charts([raw], results, "See {{chart:0}}.")
    assert bound.charts == []
    assert bound.answer_text == "See."
    assert any(reason in w for w in bound.warnings), bound.warnings
    assert any(reason in r.getMessage() for r in caplog.records)


def test_y_as_string_and_type_case_are_normalised():
    spec = ChartSpec.model_validate({"type": " Bar ", "query_id": "1", "x": "a", "y": "b", "extra": 1})
    assert (spec.type, spec.query_id, spec.y, spec.title, spec.series) == ("bar", 1, ["b"], "", None)


def test_tokens_are_renumbered_after_drops(results):
    raws = [chart(query_id=42), chart(title="A"), chart(x="bogus"), chart(type="pie", title="B", y="flights")]
    text = "{{chart:1}} first.\n\n{{chart:0}}\n\nThen {{ chart:3 }} and {{chart:2}} and {{chart:9}}."
    bound = bind_charts(raws, results, text)
    assert [c["title"] for c in bound.charts] == ["A", "B"]
    assert bound.answer_text == "{{chart:0}} first.\n\nThen {{chart:1}} and and."
    assert sum("removed" in w for w in bound.warnings) == 3


def test_large_results_are_capped_with_a_warning(results):
    bound = bind_charts([chart(query_id=4, x="time_hour", y="dep_delay", type="scatter")], results, "")
    assert len(bound.charts[0]["data"]) == 5000
    assert "timeUnit" not in bound.charts[0]["vega_lite"]["encoding"]["x"]
    assert any("first 5000 of 336776" in w for w in bound.warnings)
    json.dumps(bound.charts, allow_nan=False)


def test_json_safe_values():
    import datetime as dt
    import decimal
    assert json_safe(decimal.Decimal("1.50")) == 1.5
    assert json_safe(dt.datetime(2013, 1, 1, 5)) == "2013-01-01T05:00:00"
    assert json_safe(float("nan")) is None
    assert json_safe([dt.date(2020, 1, 2), {"a": b"\x01"}]) == ["2020-01-02", {"a": "01"}]


def test_decimal_and_date_columns_from_a_real_table(tiny_sandbox):
    result = tiny_sandbox.run("SELECT sold_on, amount, region FROM sales ORDER BY sold_on")
    bound = bind_charts([{"type": "area", "title": "Sales", "query_id": 1, "x": "sold_on",
                          "y": "amount", "series": "region"}], {1: result}, "{{chart:0}}")
    delivered = bound.charts[0]
    assert delivered["data"][0] == {"sold_on": "2024-01-02", "amount": 1.25, "region": "south"}
    assert delivered["vega_lite"]["encoding"]["x"]["type"] == "temporal"
    assert "role-mark" in vlc.vegalite_to_svg(delivered["vega_lite"])
