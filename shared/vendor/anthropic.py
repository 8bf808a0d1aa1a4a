"""The Anthropic SDK's backoff, for the retries it cannot make itself.

The SDK retries a call until the response headers arrive; an ``error`` event inside a
200 stream comes past that loop (``worker/llm/stream.py`` retries it). Its pauses are
the SDK's own, so both kinds of retry wait alike: ``_calculate_retry_timeout`` (0.5 s
doubling to 8 s, with jitter) has no public name.
"""
from __future__ import annotations

import anthropic
from anthropic._models import FinalRequestOptions

LIBRARY = "anthropic"
VERIFIED_VERSION = "2.14.0"


def retry_pause(client: anthropic.Anthropic, retries_left: int) -> float:
    """Seconds the SDK would wait before a retry of a Messages call on ``client`` when
    ``retries_left`` of its ``max_retries`` remain (no ``retry-after`` header to honour)."""
    options = FinalRequestOptions.construct(method="post", url="/v1/messages",
                                            max_retries=client.max_retries)
    return client._calculate_retry_timeout(retries_left, options, None)
