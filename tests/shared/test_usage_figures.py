"""The usage figures have one owner: every store, view and sum uses its names and rules."""
from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

from shared.claude_models import price_for
from shared.models import Job, LlmCall
from shared.reports.document import standard_cost
from shared.usage_figures import (
    CALL_FIELDS,
    JOB_FIELDS,
    TOKEN_FIELDS,
    CallUsage,
    JobFigures,
    cache_hit_ratio,
    price_call,
    read_sums,
    usage_view,
)


def sdk_usage(inp=0, out=0, read=0, write=0, write_1h=0):
    return SimpleNamespace(input_tokens=inp, output_tokens=out, cache_read_input_tokens=read,
                           cache_creation_input_tokens=write,
                           cache_creation=SimpleNamespace(ephemeral_1h_input_tokens=write_1h))


def test_the_rows_store_every_figure_under_its_name():
    assert set(JOB_FIELDS) <= set(Job.__table__.c.keys())
    assert set(CALL_FIELDS) <= set(LlmCall.__table__.c.keys())
    assert set(JobFigures().row(wall_ms=5)) == set(JOB_FIELDS)


def test_derived_figures_and_sums():
    a = CallUsage(10, 5, 100, 20, Decimal("0.5"))
    b = CallUsage(1, 2, 3, 4, Decimal("0.25"))
    total = a + b
    assert (total.input_tokens, total.cache_read_tokens, total.cost_usd) == (11, 103,
                                                                            Decimal("0.75"))
    assert total.total_effective_input == 11 + 103
    assert total.context_tokens == 11 + 103 + 24
    assert (a + CallUsage(1, cost_usd=None)).cost_usd is None  # unknown stays unknown
    assert cache_hit_ratio(total) == 103 / 138
    assert cache_hit_ratio(total.as_dict(), digits=2) == 0.75
    assert cache_hit_ratio(CallUsage()) is None


def test_one_hour_writes_cost_more_and_the_report_prices_five_minute_writes_alike():
    price = price_for("claude-sonnet-4-5")
    five_minutes = price_call(sdk_usage(inp=1000, out=200, read=5000, write=3000), price)
    one_hour = price_call(sdk_usage(inp=1000, out=200, read=5000, write=3000, write_1h=3000),
                          price)
    assert one_hour.cost_usd - five_minutes.cost_usd == Decimal(3000) * (
        price.write_1h_price() - price.write_price()) / 1_000_000
    job = Job(**{name: getattr(five_minutes, name) for name in TOKEN_FIELDS})
    assert standard_cost(job, price) == five_minutes.cost_usd
    assert price_call(sdk_usage(inp=1000), None).cost_usd is None


def test_views_and_sums_show_an_unknown_cost_as_null():
    job = Job(input_tokens=3, output_tokens=None, cost_usd=Decimal("0.125"))
    view = usage_view(job)
    assert list(view) == list(JOB_FIELDS)
    assert view["output_tokens"] == 0 and view["cost_usd"] == 0.125
    row = SimpleNamespace(input_tokens=Decimal(7), output_tokens=0, cache_read_tokens=0,
                          cache_creation_tokens=0, cost_usd=Decimal(1), unpriced=1)
    assert read_sums(row, (*TOKEN_FIELDS, "cost_usd")) == {
        "input_tokens": 7, "output_tokens": 0, "cache_read_tokens": 0,
        "cache_creation_tokens": 0, "cost_usd": None}
