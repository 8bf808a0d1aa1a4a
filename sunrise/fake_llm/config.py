"""Settings of one offline-model server instance.

A `FakeLLMConfig` is plain data: `create_app(config)` copies what it needs onto
the per-instance state, so two servers built from one config share nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FakeLLMConfig:
    """What the server does when nobody has touched the control plane. (Per-model
    rules, the prompt-cache minimums among them, come from shared/claude_models.py.)

    latency_ms / jitter_ms: added to every `/v1/messages` call (fixed + uniform
    random jitter in [0, jitter_ms]).
    seed: seeds the RNG used for jitter and rate-based faults, so a run is
    repeatable for a given sequence of calls.
    hang_seconds: how long a `hang` fault stalls unless the fault gives its own
    `seconds`; the stall ends early when the client disconnects.
    batch_seconds: simulated-clock seconds a message batch stays `in_progress`.
    log_max_entries: the request log keeps the newest this many entries (stats
    keep counting past it) so a long benchmark cannot exhaust memory.
    """

    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    seed: int = 0
    hang_seconds: float = 600.0
    batch_seconds: float = 1.0
    log_max_entries: int = 5000

