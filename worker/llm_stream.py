"""One streamed Messages API call, retried when the stream breaks after it started.

The SDK retries 429/5xx/529 and connection failures only until the response
headers arrive. An ``event: error`` inside the 200 stream (``overloaded_error``
mid-answer, for instance) reaches us as an exception during iteration, past the
SDK's retry loop. That case is retried here, with the SDK's own budget
(``client.max_retries``) and its own backoff (``_calculate_retry_timeout``: 0.5 s
doubling to 8 s with jitter), so both kinds of retry feel the same.

Only that case: an error that arrives before the stream starts has already been
retried by the SDK, and a non-retryable error type fails at once.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import anthropic
from anthropic._models import FinalRequestOptions

from worker.llm_errors import (
    error_type,
    failure_for,
    is_mid_stream_error,
    is_retryable_mid_stream,
)

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
    on_event: Callable[[Any], None],
    on_retry: Callable[[int, str], None] = lambda attempt, kind: None,
    sleep: Callable[[float], None] = time.sleep,
) -> StreamResult:
    """Stream one reply, feeding each SDK stream event to ``on_event``.

    ``on_retry(n, error_type)`` is called before the n-th retry; the events of the
    broken attempt have been fed already, so a consumer restarts its view of the
    reply there. Raises JobFailure (see ``worker/llm_errors``) when the call fails for
    good.
    """
    budget = client.max_retries
    options = FinalRequestOptions.construct(method="post", url="/v1/messages",
                                            max_retries=budget)
    retries = 0
    while True:
        try:
            with client.messages.stream(**params, timeout=timeout) as stream:
                for event in stream:
                    on_event(event)
                return StreamResult(stream.get_final_message(), retries)
        except anthropic.APIError as exc:
            if not is_retryable_mid_stream(exc) or retries >= budget:
                # Before the stream started, the SDK itself spent its whole budget.
                spent = retries if is_mid_stream_error(exc) else budget
                raise failure_for(exc, model=params["model"], retries=spent) from exc
            kind = error_type(exc)
            retries += 1
            # The SDK's private helper, so the pauses match its own retries exactly.
            pause = client._calculate_retry_timeout(budget - retries + 1, options, None)
            logger.warning("stream broke with %s; retry %d of %d in %.2f s", kind, retries,
                           budget, pause)
            on_retry(retries, kind or "error")
            sleep(pause)
