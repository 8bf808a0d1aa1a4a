"""One streamed Messages API call, retried when the stream breaks after it started.

The SDK retries 429/5xx/529 and connection failures only until the response
headers arrive. An ``event: error`` inside the 200 stream (``overloaded_error``
mid-answer, for instance) reaches us as an exception during iteration, past the
SDK's retry loop. That case is retried here, with the SDK's own budget
(``client.max_retries``) and its own backoff (``shared/vendor/anthropic.py``), so
both kinds of retry feel the same.

Only that case: an error that arrives before the stream starts has already been
retried by the SDK, and a non-retryable error type fails at once.

The request is ``client.messages.create(..., stream=True)``, the SDK's public
streaming call (its validation, auth, headers, retries, errors, deprecation warnings
and tracing spans); its events are read raw from the stream's HTTP response
(``worker/llm/message_events.py``), not through the SDK's per-event objects.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import anthropic

from shared.vendor.anthropic import retry_pause
from worker.llm.errors import (
    error_type,
    failure_for,
    is_mid_stream_error,
    is_retryable_mid_stream,
)
from worker.llm.message_events import MessageBuilder, read_message

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class StreamResult:
    message: Any  # anthropic.types.Message
    retries: int  # mid-stream retries this call needed


def stream_message(
    client: anthropic.Anthropic,
    params: dict,
    *,
    timeout: float,
    on_text: Callable[[str], None] = lambda text: None,
    on_block_end: Callable[[dict], None] = lambda block: None,
    on_read: Callable[[], None] = lambda: None,
    on_retry: Callable[[int, str], None] = lambda attempt, kind: None,
    sleep: Callable[[float], None] = time.sleep,
) -> StreamResult:
    """Stream one reply: ``on_text`` gets each piece of answer text as it arrives,
    ``on_block_end`` each content block (a dict) once complete, ``on_read()`` comes
    after the events of each network read until one completes the reply.

    ``on_retry(n, error_type)`` is called before the n-th retry; the events of the
    broken attempt have been fed already, so a consumer restarts its view of the
    reply there. Raises JobFailure (see ``worker/llm/errors``) when the call fails for
    good.
    """
    budget = client.max_retries
    retries = 0
    while True:
        try:
            with client.messages.create(**params, stream=True, timeout=timeout) as stream:
                message = read_message(stream.response, MessageBuilder(on_text, on_block_end),
                                       on_read)
            return StreamResult(message, retries)
        except anthropic.APIError as exc:
            if not is_retryable_mid_stream(exc) or retries >= budget:
                # Before the stream started, the SDK itself spent its whole budget.
                spent = retries if is_mid_stream_error(exc) else budget
                raise failure_for(exc, model=params["model"], retries=spent) from exc
            kind = error_type(exc)
            retries += 1
            pause = retry_pause(client, budget - retries + 1)
            logger.warning("stream broke with %s; retry %d of %d in %.2f s", kind, retries,
                           budget, pause)
            on_retry(retries, kind or "error")
            sleep(pause)

