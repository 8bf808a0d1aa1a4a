"""Token accounting: exact figures per LLM call, summed per job, priced per model.

A model without a price (see ``shared/claude_models.py``) costs ``None``, and so does
any sum it is part of: an unknown figure is never reported as another model's.
Thinking tokens are billed as output and the API counts them in ``output_tokens``.
"""
from __future__ import annotations

import dataclasses
from decimal import Decimal

from shared.claude_models import ModelPrice

MILLION = Decimal(1_000_000)


@dataclasses.dataclass(frozen=True)
class CallUsage:
    """What one Messages API call reported, plus what Sunrise derives from it."""

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
        return self.input_tokens + self.cache_creation_tokens + self.cache_read_tokens

    def as_dict(self) -> dict:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "total_effective_input": self.total_effective_input,
            "context_tokens": self.context_tokens,
            "cost_usd": self.cost_usd,
        }

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
            None if self.cost_usd is None or other.cost_usd is None
            else self.cost_usd + other.cost_usd,
        )


def price_usage(usage, price: ModelPrice | None, *, discount: Decimal = Decimal(1)) -> CallUsage:
    """Build a CallUsage from the SDK's ``Usage`` object, priced with ``price``.

    ``discount`` scales the whole cost (0.5 for the Message Batches API). A prompt
    over a price's long-prompt threshold is billed at the long-prompt rates.
    """
    inp = usage.input_tokens or 0
    out = usage.output_tokens or 0
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    write = getattr(usage, "cache_creation_input_tokens", None) or 0
    if price is None:
        return CallUsage(inp, out, read, write, None)
    rates = price.for_prompt(inp + read + write)
    write_1h = _one_hour_writes(usage)
    cost = (
        inp * rates.input
        + out * rates.output
        + (write - write_1h) * rates.write_price()
        + write_1h * rates.write_1h_price()
        + read * rates.read_price()
    ) / MILLION
    return CallUsage(inp, out, read, write, (cost * discount).quantize(Decimal("0.00000001")))


def _one_hour_writes(usage) -> int:
    detail = getattr(usage, "cache_creation", None)
    return (getattr(detail, "ephemeral_1h_input_tokens", None) or 0) if detail else 0
