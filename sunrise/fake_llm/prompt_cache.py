"""Prompt-cache simulation: which input tokens a call reads from, writes to, or
bypasses the cache.

The prefix is the prompt in cache order (tools, system, messages; see
`usage.prompt_blocks`). Every block carrying `cache_control` is a breakpoint; the
key of a breakpoint is a SHA-256 over the model id and the canonical JSON of
every block up to and including it, so any one-byte change before a breakpoint
changes its key (a miss). Cache entries belong to one server instance and are
scoped by model, as the real cache is.

Per call, with the model's rules from `shared/claude_models.py`
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching):
1. breakpoints whose prefix is shorter than the model's minimum cacheable
   length are ignored entirely (neither read nor written);
2. the read: from each remaining breakpoint, last to first, the cache is checked
   at that block and at each block boundary before it, at most the model's
   lookback (20 blocks) back; the first stored, unexpired prefix
   found is the hit and its tokens are `cache_read_input_tokens`. An entry more
   than 20 blocks before every breakpoint is not found (a miss);
3. the tokens from the hit (or 0) to the last breakpoint are
   `cache_creation_input_tokens`, split into 5m / 1h buckets by the TTL of the
   breakpoint closing each segment; every breakpoint prefix is (re)stored with
   expiry now + TTL (300 s, or 3600 s for `"ttl": "1h"`), and the hit is
   refreshed with its own TTL;
4. everything else is `input_tokens`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from shared.claude_models import CACHE_LOOKBACK_BLOCKS, rules_for
from sunrise.fake_llm.clock import SimClock
from sunrise.fake_llm.token_estimate import PromptBlock

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
# A model missing from the table caches like the most common current minimum.
UNKNOWN_MODEL_MIN_TOKENS = 1024


def cache_limits(model: str) -> tuple[int, int]:
    """(minimum cacheable prefix in tokens, lookback in blocks) of `model`."""
    rules = rules_for(model)
    if rules is None:
        return UNKNOWN_MODEL_MIN_TOKENS, CACHE_LOOKBACK_BLOCKS
    return rules.cache_min_tokens, rules.cache_lookback_blocks


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

    def usage(self, output_tokens: int, service_tier: str = "standard",
              thinking_tokens: int = 0) -> dict:
        """The `usage` object of a Messages API response (thinking is part of output)."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_creation_5m,
                "ephemeral_1h_input_tokens": self.cache_creation_1h,
            },
            "output_tokens": output_tokens,
            "output_tokens_details": {"thinking_tokens": thinking_tokens},
            "service_tier": service_tier,
            "inference_geo": "global",
        }


class PromptCache:
    """Per-instance store of cached prefix keys with their expiry on `clock`."""

    def __init__(self, clock: SimClock,
                 limits: Callable[[str], tuple[int, int]] = cache_limits):
        self._clock = clock
        self._limits = limits
        self._expiry: dict[bytes, tuple[float, float]] = {}  # key -> (expiry, ttl)
        self._sweep_at = 4096

    def clear(self) -> None:
        self._expiry.clear()

    def __len__(self) -> int:
        return len(self._expiry)

    def account(self, model: str, blocks: list[PromptBlock]) -> CacheSplit:
        """Split the input tokens of `blocks` for `model` and record the writes.

        Side effect: stores or refreshes every eligible breakpoint prefix and the hit.
        """
        digest = hashlib.sha256(model.encode() + b"\0")
        total = 0
        keys: list[bytes] = []  # the prefix key at every block boundary
        ends: list[int] = []  # the prefix's tokens at every block boundary
        breakpoints: list[tuple[int, float]] = []  # (block index, ttl)
        minimum, lookback = self._limits(model)
        for index, block in enumerate(blocks):
            digest.update(len(block.canonical).to_bytes(4, "big"))
            digest.update(block.canonical)
            total += block.tokens
            keys.append(digest.copy().digest())
            ends.append(total)
            if block.cache_control is not None and total >= minimum:
                ttl = TTL_SECONDS["1h" if block.cache_control.get("ttl") == "1h" else "5m"]
                breakpoints.append((index, ttl))

        now = self._clock.now()
        hit = self._lookup(keys, [index for index, _ in breakpoints], lookback, now)
        read = ends[hit] if hit is not None else 0
        if hit is not None:
            _, ttl = self._expiry[keys[hit]]
            self._expiry[keys[hit]] = (now + ttl, ttl)

        created = {TTL_SECONDS["5m"]: 0, TTL_SECONDS["1h"]: 0}
        covered = read
        for index, ttl in breakpoints:
            if ends[index] > covered:
                created[ttl] += ends[index] - covered
                covered = ends[index]
            expiry, _ = self._expiry.get(keys[index], (0.0, ttl))
            self._expiry[keys[index]] = (max(expiry, now + ttl), ttl)
        self._maybe_sweep(now)

        return CacheSplit(
            input_tokens=total - covered,
            cache_read_input_tokens=read,
            cache_creation_5m=created[TTL_SECONDS["5m"]],
            cache_creation_1h=created[TTL_SECONDS["1h"]],
        )

    def _lookup(self, keys: list[bytes], breakpoints: list[int], lookback: int,
                now: float) -> int | None:
        """The block index of the longest stored prefix some breakpoint can see: its own
        block or one of the `lookback` blocks before it."""
        for breakpoint in reversed(breakpoints):
            for index in range(breakpoint, max(-1, breakpoint - lookback - 1), -1):
                entry = self._expiry.get(keys[index])
                if entry is not None and entry[0] > now:
                    return index
        return None

    def _maybe_sweep(self, now: float) -> None:
        # Expired keys are dropped in bulk, rarely, so a long benchmark with
        # ever-changing prompts keeps bounded memory without per-call cost.
        if len(self._expiry) < self._sweep_at:
            return
        self._expiry = {key: entry for key, entry in self._expiry.items() if entry[0] > now}
        self._sweep_at = max(4096, 2 * len(self._expiry))
