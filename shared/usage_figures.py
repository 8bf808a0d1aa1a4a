"""The usage figures: what a Claude call and a job used and cost, under one set of names.

Every figure of "Token accounting" (``../shared/DESIGN.md``) is named here, with how it
is derived, how figures add up, what tokens cost and the prompt-cache hit ratio;
everything else (the job row, the API, the events, the reports, the metrics) imports
them. Adding a figure starts here.

- ``TOKEN_FIELDS``: what the API reports per call. ``input_tokens`` is uncached input,
  ``output_tokens`` includes thinking (billed as output).
- ``CALL_FIELDS``: kept per call (``llm_calls``) and per job: the tokens, then
  ``total_effective_input = input + cache_read`` (the reference system's figure),
  ``context_tokens = input + cache_creation + cache_read`` (everything the call saw),
  and ``cost_usd``.
- ``JOB_COUNTERS``: a job's work besides tokens; ``JOB_FIELDS`` is a job's ``usage``.

Cost: per model and token kind from the price table (``shared/claude_models.py``);
cache writes of the 1-hour kind at their own price; a prompt over a price's long-prompt
threshold billed at the long-prompt rates; the Message Batches API at a discount. A
model without a price costs ``None``, and so does every sum it is part of: an unknown
figure is never reported as another model's, nor as a smaller total.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from sqlalchemy import func

from shared.claude_models import ModelPrice

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
CALL_FIELDS = (*TOKEN_FIELDS, "total_effective_input", "context_tokens", "cost_usd")
JOB_COUNTERS = ("llm_retries", "tool_rounds", "sql_executed", "sql_cache_hits", "llm_ms",
                "sql_ms", "wall_ms")
JOB_FIELDS = (*CALL_FIELDS, *JOB_COUNTERS)
# What each figure means, for the API's schema.
MEANINGS = {
    "input_tokens": "Input tokens not read from the prompt cache.",
    "output_tokens": "Output tokens, thinking included.",
    "cache_read_tokens": "Prompt tokens read from the prompt cache.",
    "cache_creation_tokens": "Prompt tokens written to the prompt cache.",
    "total_effective_input": "input_tokens + cache_read_tokens.",
    "context_tokens": "input_tokens + cache_creation_tokens + cache_read_tokens: all the "
                      "calls saw.",
    "cost_usd": "US dollars; null when a call went to a model without a known price.",
    "llm_retries": "Streams retried after a mid-stream error event.",
    "tool_rounds": "Rounds in which the model called tools.",
    "sql_executed": "SQL statements run (repeats answered from the per-job cache excluded).",
    "sql_cache_hits": "Repeated statements answered from the per-job cache.",
    "llm_ms": "Milliseconds spent in model calls.",
    "sql_ms": "Milliseconds spent running SQL.",
    "wall_ms": "Milliseconds the worker spent on the job.",
}
MILLION = Decimal(1_000_000)
CENT_FRACTION = Decimal("0.00000001")  # what a money column keeps (Numeric(16, 8))


@dataclasses.dataclass(frozen=True)
class CallUsage:
    """The tokens and cost of one Messages API call, or of several added up."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: Decimal | None = Decimal(0)

    @property
    def total_effective_input(self) -> int:
        """The reference system's figure: uncached input plus cache reads."""
        return self.input_tokens + self.cache_read_tokens

    @property
    def context_tokens(self) -> int:
        """Everything the call saw, including tokens it paid to write to the cache."""
        return prompt_tokens(self)

    def as_dict(self) -> dict[str, Any]:
        """The ``CALL_FIELDS``, cost as a Decimal (or None)."""
        return {name: getattr(self, name) for name in CALL_FIELDS}

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(
            *(getattr(self, name) + getattr(other, name) for name in TOKEN_FIELDS),
            add_costs(self.cost_usd, other.cost_usd),
        )


def prompt_tokens(figures: Any) -> int:
    """Prompt tokens of a call or a sum (a mapping or an object with the figures):
    uncached input, cache reads and cache writes."""
    get = _getter(figures)
    return get("input_tokens") + get("cache_read_tokens") + get("cache_creation_tokens")


def cache_hit_ratio(figures: Any, *, digits: int | None = None) -> float | None:
    """Share of prompt tokens read from the prompt cache (rounded to ``digits`` if given);
    None before any prompt."""
    prompt = prompt_tokens(figures)
    if not prompt:
        return None
    ratio = _getter(figures)("cache_read_tokens") / prompt
    return ratio if digits is None else round(ratio, digits)


def add_costs(total: Decimal | None, cost: Decimal | None) -> Decimal | None:
    """``total + cost``, unknown (None) when either is."""
    return None if total is None or cost is None else total + cost


def token_cost(rates: ModelPrice, *, input_tokens: int, output_tokens: int,
               cache_read_tokens: int, cache_creation_tokens: int,
               one_hour_writes: int = 0) -> Decimal:
    """What the tokens cost at ``rates`` (USD per MTok), unrounded: the one price formula.

    ``one_hour_writes`` of the cache writes are 1-hour entries, billed at their own price.
    """
    return (input_tokens * rates.input
            + output_tokens * rates.output
            + (cache_creation_tokens - one_hour_writes) * rates.write_price()
            + one_hour_writes * rates.write_1h_price()
            + cache_read_tokens * rates.read_price()) / MILLION


def price_call(usage: Any, price: ModelPrice | None, *,
               discount: Decimal = Decimal(1)) -> CallUsage:
    """The ``CallUsage`` of the SDK's ``Usage`` object, priced with ``price``.

    ``discount`` scales the whole cost (0.5 for the Message Batches API). A prompt over
    the price's long-prompt threshold is billed at the long-prompt rates.
    """
    tokens = {
        "input_tokens": usage.input_tokens or 0,
        "output_tokens": usage.output_tokens or 0,
        "cache_read_tokens": getattr(usage, "cache_read_input_tokens", None) or 0,
        "cache_creation_tokens": getattr(usage, "cache_creation_input_tokens", None) or 0,
    }
    if price is None:
        return CallUsage(**tokens, cost_usd=None)
    rates = price.for_prompt(prompt_tokens(tokens))
    cost = token_cost(rates, **tokens, one_hour_writes=_one_hour_writes(usage))
    return CallUsage(**tokens, cost_usd=(cost * discount).quantize(CENT_FRACTION))


def _one_hour_writes(usage: Any) -> int:
    detail = getattr(usage, "cache_creation", None)
    return (getattr(detail, "ephemeral_1h_input_tokens", None) or 0) if detail else 0


@dataclasses.dataclass
class JobFigures:
    """A job's figures while it runs: the calls' usage added up and the counters.

    The loop counts calls, rounds and retries; the SQL tool counts its queries.
    """

    usage: CallUsage = dataclasses.field(default_factory=CallUsage)
    llm_calls: int = 0
    llm_retries: int = 0
    tool_rounds: int = 0
    sql_executed: int = 0
    sql_cache_hits: int = 0
    llm_ms: int = 0
    sql_ms: int = 0

    def row(self, wall_ms: int) -> dict[str, Any]:
        """The ``JOB_FIELDS`` as the job row stores them (cost a Decimal or None)."""
        counters = {name: wall_ms if name == "wall_ms" else getattr(self, name)
                    for name in JOB_COUNTERS}
        return {**self.usage.as_dict(), **counters}


def usage_view(source: Any, fields: tuple[str, ...] = JOB_FIELDS) -> dict[str, Any]:
    """``fields`` of a row or mapping as the API shows them: whole numbers, and the cost
    a float, or None when unknown."""
    get = _getter(source)
    return {name: _money(get(name)) if name == "cost_usd" else int(get(name) or 0)
            for name in fields}


def _money(cost: Any) -> float | None:
    return None if cost is None else float(cost)


def _getter(source: Any):
    return source.get if isinstance(source, Mapping) else lambda name: getattr(source, name)


def sum_columns(entity: Any, fields: tuple[str, ...]) -> list[Any]:
    """SELECT expressions summing ``fields`` of ``entity`` (a model), each labelled with its
    name, plus ``unpriced``: how many rows have no known cost (read with
    :func:`read_sums`)."""
    sums = [func.coalesce(func.sum(getattr(entity, name)), 0).label(name) for name in fields]
    unpriced = (func.count() - func.count(entity.cost_usd)).label("unpriced")
    return [*sums, unpriced]


def read_sums(row: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """The :func:`sum_columns` of ``row`` as :func:`usage_view` shows figures: a cost
    summed over any row without a known price is unknown (None), never smaller."""
    sums = {name: getattr(row, name) for name in fields}
    if "cost_usd" in sums and row.unpriced:
        sums["cost_usd"] = None
    return usage_view(sums, fields)
