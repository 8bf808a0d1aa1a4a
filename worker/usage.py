"""Token accounting: exact figures per LLM call, summed per job, priced per model."""
from __future__ import annotations

import dataclasses
from decimal import Decimal

from shared.config import ModelPrice

MILLION = Decimal(1_000_000)


@dataclasses.dataclass(frozen=True)
class CallUsage:
    """What one Messages API call reported, plus what Sunrise derives from it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: Decimal = Decimal(0)

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
            self.cost_usd + other.cost_usd,
        )


def price_usage(usage, price: ModelPrice, *, discount: Decimal = Decimal(1)) -> CallUsage:
    """Build a CallUsage from the SDK's ``Usage`` object, priced with ``price``.

    ``discount`` scales the whole cost (0.5 for the Message Batches API).
    """
    inp = usage.input_tokens or 0
    out = usage.output_tokens or 0
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    write = getattr(usage, "cache_creation_input_tokens", None) or 0
    write_1h = _one_hour_writes(usage)
    cost = (
        inp * price.input
        + out * price.output
        + (write - write_1h) * price.write_price()
        + write_1h * price.input * 2
        + read * price.read_price()
    ) / MILLION
    return CallUsage(inp, out, read, write, (cost * discount).quantize(Decimal("0.00000001")))


def _one_hour_writes(usage) -> int:
    # One-hour cache writes cost 2x input rather than 1.25x.
    detail = getattr(usage, "cache_creation", None)
    return (getattr(detail, "ephemeral_1h_input_tokens", None) or 0) if detail else 0
