"""Prompt-cache simulation: which input tokens a call reads from, writes to, or
bypasses the cache.

The prefix is the prompt in cache order (tools, system, messages; see
`usage.prompt_blocks`). Every block carrying `cache_control` is a breakpoint; the
key of a breakpoint is a SHA-256 over the model id and the canonical JSON of
every block up to and including it, so any one-byte change before a breakpoint
changes its key (a miss). Cache entries belong to one server instance and are
scoped by model, as the real cache is.

Per call:
1. breakpoints whose prefix is shorter than the model's minimum cacheable
   length are ignored entirely (neither read nor written);
2. walking the remaining breakpoints from last to first, the first whose key is
   stored and unexpired is the hit: its prefix tokens are
   `cache_read_input_tokens`;
3. the tokens from the hit (or 0) to the last breakpoint are
   `cache_creation_input_tokens`, split into 5m / 1h buckets by the TTL of the
   breakpoint closing each segment; every breakpoint prefix is (re)stored with
   expiry now + TTL (300 s, or 3600 s for `"ttl": "1h"`), which also refreshes
   the hit;
4. everything else is `input_tokens`.
The real service's 20-block lookback limit is not simulated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from sunrise.fake_llm.clock import SimClock
from sunrise.fake_llm.usage import PromptBlock

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class CacheSplit:
    """How a request's input tokens divide between fresh, cache read and cache write."""

    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_5m: int
    cache_creation_1h: int

    @property
    def cache_creation_input_tokens(self) -> int:
        return self.cache_creation_5m + self.cache_creation_1h

    def usage(self, output_tokens: int, service_tier: str = "standard") -> dict:
        """The `usage` object of a Messages API response."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_5m,
                "ephemeral_1h_input_tokens": self.cache_creation_1h,
            },
            "output_tokens": output_tokens,
            # The offline model never thinks; the field is there because the
            # newest recorded streams carry it.
            "output_tokens_details": {"thinking_tokens": 0},
            "service_tier": service_tier,
            "inference_geo": "global",
        }


class PromptCache:
    """Per-instance store of cached prefix keys with their expiry on `clock`."""

    def __init__(self, clock: SimClock, min_tokens: Callable[[str], int]):
        self._clock = clock
        self._min_tokens = min_tokens
        self._expiry: dict[bytes, float] = {}
        self._sweep_at = 4096

    def clear(self) -> None:
        self._expiry.clear()

    def __len__(self) -> int:
        return len(self._expiry)

    def account(self, model: str, blocks: list[PromptBlock]) -> CacheSplit:
        """Split the input tokens of `blocks` for `model` and record the writes.

        Side effect: stores or refreshes every eligible breakpoint prefix.
        """
        digest = hashlib.sha256(model.encode() + b"\0")
        total = 0
        breakpoints: list[tuple[int, bytes, float]] = []
        minimum = self._min_tokens(model)
        for block in blocks:
            digest.update(len(block.canonical).to_bytes(4, "big"))
            digest.update(block.canonical)
            total += block.tokens
            if block.cache_control is not None and total >= minimum:
                ttl = TTL_SECONDS["1h" if block.cache_control.get("ttl") == "1h" else "5m"]
                breakpoints.append((total, digest.copy().digest(), ttl))

        now = self._clock.now()
        read = 0
        for prefix_tokens, key, _ in reversed(breakpoints):
            if self._expiry.get(key, 0.0) > now:
                read = prefix_tokens
                break

        created = {TTL_SECONDS["5m"]: 0, TTL_SECONDS["1h"]: 0}
        covered = read
        for prefix_tokens, key, ttl in breakpoints:
            if prefix_tokens > covered:
                created[ttl] += prefix_tokens - covered
                covered = prefix_tokens
            self._expiry[key] = max(self._expiry.get(key, 0.0), now + ttl)
        self._maybe_sweep(now)

        return CacheSplit(
            input_tokens=total - covered,
            cache_read_input_tokens=read,
            cache_creation_5m=created[TTL_SECONDS["5m"]],
            cache_creation_1h=created[TTL_SECONDS["1h"]],
        )

    def _maybe_sweep(self, now: float) -> None:
        # Expired keys are dropped in bulk, rarely, so a long benchmark with
        # ever-changing prompts keeps bounded memory without per-call cost.
        if len(self._expiry) < self._sweep_at:
            return
        self._expiry = {key: exp for key, exp in self._expiry.items() if exp > now}
        self._sweep_at = max(4096, 2 * len(self._expiry))
