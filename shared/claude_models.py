"""What each Claude model accepts and costs: the one capability table.

The worker's request builder, the pricing of usage, ``sunrise doctor`` and the
offline model all read this table; nothing else hard-codes a model rule. Every
rule names the Claude platform page it comes from (``SOURCES``). Where pages
disagree, the pricing page wins for prices: Sonnet 5.5's cache reads were cut to
$0.10 / MTok on 2026-10-07, and model pages written before the cut still show $0.20.

A model id is found exactly or as a dated snapshot of a listed id
(``claude-sonnet-4-5-20250929``). Anything else is unknown: no rules are applied
to the request and its cost is ``None`` (never another model's price).
"""
from __future__ import annotations

import dataclasses
import logging
import re
from decimal import Decimal

from pydantic import BaseModel

logger = logging.getLogger(__name__)

DOCS = "https://platform.claude.com/docs/en"
SOURCES = {
    "prices": f"{DOCS}/about-claude/pricing",
    "context_window": f"{DOCS}/about-claude/models/overview",
    "max_output": f"{DOCS}/about-claude/models/overview",
    "thinking": f"{DOCS}/build-with-claude/adaptive-thinking",
    "between_tools": f"{DOCS}/models/sonnet-5-5/whats-new-sonnet-5-5",
    "display": f"{DOCS}/build-with-claude/extended-thinking",
    "effort": f"{DOCS}/build-with-claude/effort",
    "sampling": f"{DOCS}/models/sonnet-5/overview",
    "forced_tool_choice": f"{DOCS}/models/sonnet-5-5/whats-new-sonnet-5-5",
    "thinking_with_tools": f"{DOCS}/build-with-claude/extended-thinking",
    "cache_min_tokens": f"{DOCS}/build-with-claude/prompt-caching",
    "cache_lookback": f"{DOCS}/build-with-claude/prompt-caching",
    "batch_discount": f"{DOCS}/about-claude/pricing",
    "stop_reasons": f"{DOCS}/build-with-claude/handling-stop-reasons",
    "errors": f"{DOCS}/api/errors",
}

# Message Batches: "50% discount on input and output" on every model page.
BATCH_DISCOUNT = Decimal("0.5")
# A breakpoint finds earlier cache entries at most this many blocks back.
CACHE_LOOKBACK_BLOCKS = 20
# What each Sunrise thinking setting asks for, from most thinking to least.
THINKING_LADDER = ("adaptive", "between_tools", "off")
EFFORTS = ("low", "medium", "high", "xhigh", "max")


class ModelPrice(BaseModel):
    """USD per million tokens. Unset cache prices follow the pricing page's multipliers of
    input: 1.25x for a 5-minute write, 2x for a 1-hour write, 0.1x for a read.

    ``long_prompt_over``/``long_prompt``: above that many prompt tokens (input + cache
    reads + cache writes) every token of the request is billed at ``long_prompt``.
    """

    input: Decimal
    output: Decimal
    cache_write: Decimal | None = None
    cache_write_1h: Decimal | None = None
    cache_read: Decimal | None = None
    long_prompt_over: int | None = None
    long_prompt: ModelPrice | None = None

    def write_price(self) -> Decimal:
        return self.cache_write if self.cache_write is not None else self.input * Decimal("1.25")

    def write_1h_price(self) -> Decimal:
        return self.cache_write_1h if self.cache_write_1h is not None else self.input * 2

    def read_price(self) -> Decimal:
        return self.cache_read if self.cache_read is not None else self.input * Decimal("0.1")

    def for_prompt(self, prompt_tokens: int) -> ModelPrice:
        """The rates that apply to a request whose prompt holds ``prompt_tokens``."""
        if self.long_prompt is not None and self.long_prompt_over is not None \
                and prompt_tokens > self.long_prompt_over:
            return self.long_prompt
        return self


ModelPrice.model_rebuild()


def _price(inp: str, out: str, write: str, write_1h: str, read: str, **tier) -> ModelPrice:
    return ModelPrice(input=Decimal(inp), output=Decimal(out), cache_write=Decimal(write),
                      cache_write_1h=Decimal(write_1h), cache_read=Decimal(read), **tier)


@dataclasses.dataclass(frozen=True)
class ModelRules:
    """One model's request rules and prices (see ``SOURCES`` for each field's page).

    ``thinking_types``: the ``thinking.type`` values the API accepts; ``thinking_default``:
    what the model does when ``thinking`` is omitted; ``display_default``: what an
    adaptive thinking block carries when ``display`` is omitted. ``efforts`` is empty
    when the model rejects ``output_config.effort``. ``sampling``: False when a
    non-default ``temperature``/``top_p``/``top_k`` is a 400. ``forced_tool_choice``:
    False when ``tool_choice`` ``any``/``tool`` is a 400. ``text_between_tools_as_thinking``:
    the short notes written between tool calls come back as thinking blocks.
    """

    model: str
    price: ModelPrice
    context_window: int
    max_output: int
    cache_min_tokens: int
    thinking_types: frozenset[str]
    thinking_default: str
    display_default: str = "summarized"
    efforts: tuple[str, ...] = ()
    effort_default: str | None = None
    between_tools_efforts: tuple[str, ...] = ()
    sampling: bool = True
    forced_tool_choice: bool = True
    text_between_tools_as_thinking: bool = False
    cache_lookback_blocks: int = CACHE_LOOKBACK_BLOCKS

    def lowest_thinking(self) -> str:
        """The Sunrise setting closest to 'no thinking' that this model accepts."""
        return next(s for s in reversed(THINKING_LADDER) if self.accepts_setting(s))

    def accepts_setting(self, setting: str) -> bool:
        """Whether the Sunrise thinking setting (``THINKING_LADDER``) maps onto this model."""
        wire = {"adaptive": "adaptive", "between_tools": "between_tools", "off": "disabled"}
        return wire[setting] in self.thinking_types


M, K = 1_000_000, 1_000
FIVE_EFFORTS = EFFORTS
FOUR_EFFORTS = ("low", "medium", "high", "max")
ALWAYS_ADAPTIVE = frozenset({"adaptive"})
ADAPTIVE_OR_OFF = frozenset({"adaptive", "disabled"})
EXTENDED = frozenset({"enabled", "disabled"})
ADAPTIVE_OR_EXTENDED = frozenset({"adaptive", "enabled", "disabled"})

FABLE_PRICE = _price("10", "50", "12.50", "20", "1")
FABLE_51_PRICE = _price("10", "50", "12.50", "20", "0.25")
OPUS_PRICE = _price("5", "25", "6.25", "10", "0.50")
SONNET_4_PRICE = _price("3", "15", "3.75", "6", "0.30")


def _current(model: str, price: ModelPrice, *, thinking=ALWAYS_ADAPTIVE, effort="high",
             cache_min=512, **rules) -> ModelRules:
    # The 5.x generation: 1M context, 128K output, adaptive thinking, thinking text
    # omitted unless asked for, all five effort levels.
    return ModelRules(model=model, price=price, context_window=1 * M, max_output=128 * K,
                      cache_min_tokens=cache_min, thinking_types=thinking,
                      thinking_default="adaptive", display_default="omitted",
                      efforts=FIVE_EFFORTS, effort_default=effort, **rules)


_TABLE = [
    _current("claude-sonnet-5-5", _price("2", "10", "2.50", "4", "0.10"),
             thinking=frozenset({"adaptive", "between_tools"}),
             between_tools_efforts=("low", "medium", "high"), sampling=False,
             forced_tool_choice=False, text_between_tools_as_thinking=True),
    _current("claude-haiku-5-5",
             _price("0.10", "0.50", "0.125", "0.20", "0.01", long_prompt_over=100_000,
                    long_prompt=_price("0.50", "2.50", "0.625", "1", "0.05")),
             thinking=ADAPTIVE_OR_OFF, effort="medium"),
    _current("claude-opus-5-5", _price("4", "20", "5", "8", "0.20"), effort="medium",
             text_between_tools_as_thinking=True),
    _current("claude-fable-5-1", FABLE_51_PRICE, text_between_tools_as_thinking=True),
    _current("claude-mythos-5-1", FABLE_51_PRICE, text_between_tools_as_thinking=True),
    _current("claude-sonnet-5", _price("2", "10", "2.50", "4", "0.20"), thinking=ADAPTIVE_OR_OFF,
             cache_min=1024, sampling=False),
    _current("claude-fable-5", FABLE_PRICE),
    _current("claude-mythos-5", FABLE_PRICE),
    _current("claude-opus-5", OPUS_PRICE, thinking=ADAPTIVE_OR_OFF),
    _current("claude-opus-4-8", OPUS_PRICE, thinking=ADAPTIVE_OR_OFF, cache_min=1024),
    _current("claude-opus-4-7", OPUS_PRICE, cache_min=2048),
    ModelRules("claude-opus-4-6", OPUS_PRICE, 1 * M, 128 * K, 4096, ADAPTIVE_OR_EXTENDED,
               "disabled", efforts=FOUR_EFFORTS, effort_default="high"),
    ModelRules("claude-sonnet-4-6", SONNET_4_PRICE, 1 * M, 64 * K, 1024, ADAPTIVE_OR_EXTENDED,
               "disabled", efforts=FOUR_EFFORTS, effort_default="high"),
    ModelRules("claude-opus-4-5", OPUS_PRICE, 200 * K, 64 * K, 4096, EXTENDED, "disabled",
               efforts=("low", "medium", "high"), effort_default="high"),
    ModelRules("claude-sonnet-4-5", SONNET_4_PRICE, 200 * K, 64 * K, 1024, EXTENDED, "disabled"),
    ModelRules("claude-haiku-4-5", _price("1", "5", "1.25", "2", "0.10"), 200 * K, 64 * K, 4096,
               EXTENDED, "disabled"),
]
TABLE: dict[str, ModelRules] = {rules.model: rules for rules in _TABLE}
_SNAPSHOT = re.compile(r"^(?P<base>.+)-\d{8}$")
_warned: set[str] = set()


def rules_for(model: str) -> ModelRules | None:
    """The rules of ``model`` (exact id or a dated snapshot of one), or None if unknown."""
    rules = TABLE.get(model)
    if rules is None and (snapshot := _SNAPSHOT.match(model)):
        rules = TABLE.get(snapshot.group("base"))
    return rules


def warn_unknown_once(model: str, what: str) -> None:
    """Log, once per process and model, that ``model`` is not in the table."""
    if model not in _warned:
        _warned.add(model)
        logger.warning("model %r is not in Sunrise's capability table (shared/claude_models.py): "
                       "%s", model, what)


def price_for(model: str, overrides: dict[str, ModelPrice] | None = None) -> ModelPrice | None:
    """The price of ``model``: ``SUNRISE_PRICES`` first (exact id, then the longest id
    it starts with), then the table. None, with a warning logged once, when unknown."""
    overrides = overrides or {}
    if model in overrides:
        return overrides[model]
    for known in sorted(overrides, key=len, reverse=True):
        if model.startswith(known):
            return overrides[known]
    rules = rules_for(model)
    if rules is None:
        warn_unknown_once(model, "its cost is recorded as null; set SUNRISE_PRICES to price it")
        return None
    return rules.price
