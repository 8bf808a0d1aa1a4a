"""Everything one offline-model server instance remembers, created by `create_app`.

Nothing here is a module global: two apps in one process (two tests, or a test
and a demo) never share cache entries, faults, scenarios, logs or batches.
"""

from __future__ import annotations

import random

from sunrise.fake_llm.clock import SimClock
from sunrise.fake_llm.config import FakeLLMConfig
from sunrise.fake_llm.faults import FaultPlan
from sunrise.fake_llm.message_batches import BatchStore
from sunrise.fake_llm.message_builder import MessageBuilder
from sunrise.fake_llm.prompt_cache import PromptCache
from sunrise.fake_llm.request_log import RequestLog
from sunrise.fake_llm.scenarios import ScenarioBook


class Latency:
    """Per-request delay: `fixed_ms` plus uniform jitter in [0, `jitter_ms`]."""

    def __init__(self, fixed_ms: float, jitter_ms: float, seed: int):
        self._seed = seed
        self.set(fixed_ms, jitter_ms)

    def set(self, fixed_ms: float, jitter_ms: float) -> None:
        if fixed_ms < 0 or jitter_ms < 0:
            raise ValueError("latency must not be negative")
        self.fixed_ms, self.jitter_ms = float(fixed_ms), float(jitter_ms)
        self._rng = random.Random(self._seed)

    def sample_s(self) -> float:
        jitter = self._rng.uniform(0, self.jitter_ms) if self.jitter_ms else 0.0
        return (self.fixed_ms + jitter) / 1000

    def as_json(self) -> dict:
        return {"fixed_ms": self.fixed_ms, "jitter_ms": self.jitter_ms}


class FakeLLMState:
    """The mutable state of one server, reachable as `app.state.fake_llm`."""

    def __init__(self, config: FakeLLMConfig, clock: SimClock | None = None):
        self.config = config
        self.clock = clock or SimClock()
        self.cache = PromptCache(self.clock)
        self.faults = FaultPlan(config.seed)
        self.scenarios = ScenarioBook()
        self.log = RequestLog(config.log_max_entries)
        # Jitter draws use their own seeded stream so they never shift fault draws.
        self.latency = Latency(config.latency_ms, config.jitter_ms, config.seed + 1)
        self.builder = MessageBuilder(self.cache, self.scenarios)
        self.batches = BatchStore(self.clock, config.batch_seconds)
        # Set by `ServerHandle.stop()` so hung requests end before shutdown waits on them.
        self.stopping = False

    def reset(self) -> None:
        """Back to how the server started: no faults, scenarios, log, cache or
        batches, latency as configured. The simulated clock keeps its time."""
        self.faults.clear()
        self.scenarios.clear()
        self.log.clear()
        self.cache.clear()
        self.batches.clear()
        self.latency.set(self.config.latency_ms, self.config.jitter_ms)
