"""The capability table: every model the installed SDK lists is priced from the current
price list or knowingly left unpriced, and requests are resolved per model."""
from __future__ import annotations

import typing
from decimal import Decimal
from types import SimpleNamespace

import anthropic.types
import pytest

from shared.claude_models import SOURCES, TABLE, price_for, rules_for
from shared.config import Settings
from shared.usage_figures import price_call
from worker.llm.request import max_tokens_for, plan_thinking

# In the SDK's list, but on no price list we read (see the report of issue 13).
UNPRICED = {"claude-fable-5-2", "claude-mythos-5-2", "claude-mythos-preview"}


def sdk_models() -> set[str]:
    return set(typing.get_args(typing.get_args(anthropic.types.ModelParam)[0]))


def test_every_sdk_model_is_in_the_table_or_knowingly_unpriced():
    for model in sdk_models() - UNPRICED:
        assert rules_for(model) is not None, model
    assert all(rules_for(m) is None and price_for(m) is None for m in UNPRICED)
    assert set(TABLE) <= sdk_models(), "no model the SDK does not know"


def test_every_rule_cites_a_platform_page():
    assert all(url.startswith("https://platform.claude.com/docs/en/") for url in SOURCES.values())


@pytest.mark.parametrize("model,prices", [
    # Pricing page: input, output, 5-minute write, 1-hour write, cache read.
    ("claude-sonnet-5-5", ("2", "10", "2.50", "4", "0.10")),  # reads cut on 2026-10-07
    ("claude-sonnet-5", ("2", "10", "2.50", "4", "0.20")),
    ("claude-opus-5-5", ("4", "20", "5", "8", "0.20")),
    ("claude-fable-5-1", ("10", "50", "12.50", "20", "0.25")),
    ("claude-opus-4-7", ("5", "25", "6.25", "10", "0.50")),
    ("claude-sonnet-4-6", ("3", "15", "3.75", "6", "0.30")),
    ("claude-haiku-4-5-20251001", ("1", "5", "1.25", "2", "0.10")),
])
def test_list_prices(model, prices):
    price = price_for(model)
    got = (price.input, price.output, price.write_price(), price.write_1h_price(),
           price.read_price())
    assert got == tuple(Decimal(p) for p in prices)


def usage(inp=0, out=0, read=0, write=0, write_1h=0):
    return SimpleNamespace(input_tokens=inp, output_tokens=out, cache_read_input_tokens=read,
                           cache_creation_input_tokens=write,
                           cache_creation=SimpleNamespace(ephemeral_1h_input_tokens=write_1h))


def test_pricing_of_writes_reads_batches_and_long_prompts():
    sonnet = price_for("claude-sonnet-5-5")
    cost = price_call(usage(inp=1_000_000, out=1_000_000, read=1_000_000, write=2_000_000,
                             write_1h=1_000_000), sonnet).cost_usd
    assert cost == Decimal(2 + 10) + Decimal("0.10") + Decimal("2.50") + Decimal(4)
    half = price_call(usage(inp=1_000_000), sonnet, discount=Decimal("0.5")).cost_usd
    assert half == Decimal(1)
    haiku = price_for("claude-haiku-5-5")
    short = price_call(usage(inp=100_000, out=1_000_000), haiku).cost_usd
    long = price_call(usage(inp=100_001, out=1_000_000), haiku).cost_usd
    assert short == Decimal("0.01") + Decimal("0.5")
    assert long == (Decimal("100001") * Decimal("0.5") / 1_000_000 + Decimal("2.5")).quantize(
        Decimal("0.00000001")), "over 100k prompt tokens, every token at the higher rate"
    assert price_call(usage(inp=5), None).cost_usd is None


@pytest.mark.parametrize("model,thinking,effort,sent_thinking,sent_effort", [
    ("claude-sonnet-5-5", "adaptive", "medium", {"type": "adaptive", "display": "summarized"},
     "medium"),
    ("claude-sonnet-5-5", "off", "medium", {"type": "between_tools"}, "medium"),
    ("claude-sonnet-5-5", "between_tools", "max", {"type": "between_tools"}, "high"),
    ("claude-sonnet-5", "between_tools", "low", {"type": "disabled"}, "low"),
    ("claude-opus-5-5", "off", "low", {"type": "adaptive", "display": "summarized"}, "low"),
    ("claude-sonnet-4-6", "adaptive", "xhigh", {"type": "adaptive", "display": "summarized"},
     "high"),
    ("claude-haiku-4-5", "adaptive", "medium", {"type": "disabled"}, None),
])
def test_thinking_and_effort_resolve_to_what_the_model_accepts(model, thinking, effort,
                                                               sent_thinking, sent_effort):
    plan = plan_thinking(model, thinking, effort)
    assert plan.params["thinking"] == sent_thinking
    assert plan.params.get("output_config", {}).get("effort") == sent_effort
    rules = rules_for(model)
    assert sent_thinking["type"] in rules.thinking_types
    exact = (model, thinking, effort) == ("claude-sonnet-5-5", "adaptive", "medium")
    assert bool(plan.notes) is not exact, "every departure from the settings is explained"


def test_unknown_models_get_the_apis_defaults_and_max_tokens_fits_the_model():
    assert plan_thinking("claude-next-9", "adaptive", "medium").params == {}
    settings = Settings(max_tokens=100_000)
    assert max_tokens_for(settings, "claude-haiku-4-5") == 64_000
    assert max_tokens_for(settings, "claude-sonnet-5-5") == 100_000
    assert max_tokens_for(settings, "claude-next-9") == 100_000
