"""One streamed Messages API call, retried when the stream breaks after it started.

The SDK retries 429/5xx/529 and connection failures only until the response
headers arrive. An ``event: error`` inside the 200 stream (``overloaded_error``
mid-answer, for instance) reaches us as an exception during iteration, past the
SDK's retry loop. That case is retried here, with the SDK's own budget
(``client.max_retries``) and its own backoff (``_calculate_retry_timeout``: 0.5 s
doubling to 8 s with jitter), so both kinds of retry feel the same.

Only that case: an error that arrives before the stream starts has already been
retried by the SDK, and a non-retryable error type fails at once.

The SDK sends the request; its events are read raw (``worker/message_events.py``),
not through the SDK's per-event objects. The request goes through the SDK's
``client.request``, as ``client.post`` sends it (its auth, headers, retries and
errors), with the body encoded once by the SDK's own JSON encoder: ``messages.create`` would copy the whole body first (its
walk for file inputs, iterators and models that ours never holds) and check and
re-pack its arguments, for every call. With the SDK's tracing on, ``create`` is
called as such: its spans read the request from the arguments.
"""
from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
from anthropic._constants import RAW_RESPONSE_HEADER
from anthropic._data import DEPRECATED_MODELS, MODELS_TO_WARN_WITH_THINKING_ENABLED
from anthropic._models import FinalRequestOptions
from anthropic._utils._json import openapi_dumps

from worker.llm_errors import (
    error_type,
    failure_for,
    is_mid_stream_error,
    is_retryable_mid_stream,
)
from worker.message_events import MessageBuilder, read_message

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
    reply there. Raises JobFailure (see ``worker/llm_errors``) when the call fails for
    good.
    """
    budget = client.max_retries
    retries = 0
    while True:
        try:
            response = _open(client, params, timeout)
            try:
                message = read_message(client, response, MessageBuilder(on_text, on_block_end),
                                       on_read)
            finally:
                response.close()
            return StreamResult(message, retries)
        except anthropic.APIError as exc:
            if not is_retryable_mid_stream(exc) or retries >= budget:
                # Before the stream started, the SDK itself spent its whole budget.
                spent = retries if is_mid_stream_error(exc) else budget
                raise failure_for(exc, model=params["model"], retries=spent) from exc
            kind = error_type(exc)
            retries += 1
            # The SDK's private helper, so the pauses match its own retries exactly.
            options = FinalRequestOptions.construct(method="post", url="/v1/messages",
                                                    max_retries=budget)
            pause = client._calculate_retry_timeout(budget - retries + 1, options, None)
            logger.warning("stream broke with %s; retry %d of %d in %.2f s", kind, retries,
                           budget, pause)
            on_retry(retries, kind or "error")
            sleep(pause)


# The SDK's ``with_streaming_response`` marker: the response comes back with its body unread.
_STREAMED = {RAW_RESPONSE_HEADER: "stream"}
_REQUEST = FinalRequestOptions.construct(method="post", url="/v1/messages", headers=_STREAMED)


def _open(client: anthropic.Anthropic, params: dict, timeout: float) -> httpx2.Response:
    """The streaming response to ``POST /v1/messages`` with ``params``, its body unread;
    raises the SDK's errors once its retries before the stream are spent."""
    if client._tracer is not None:
        return client.messages.with_streaming_response.create(
            **params, stream=True, timeout=timeout).__enter__().http_response
    model = params["model"]
    if model in DEPRECATED_MODELS or model in MODELS_TO_WARN_WITH_THINKING_ENABLED:
        _warn_as_create(model, params.get("thinking"))
    # ``client.post`` as it builds its options, but copied from one built once: building
    # them computes every default of the model anew (≈ 20 µs).
    options = _REQUEST.model_copy(update={
        "content": openapi_dumps({**params, "stream": True}), "timeout": timeout})
    return client.request(httpx2.Response, options, stream=True)


def _warn_as_create(model: str, thinking: dict | None) -> None:
    # ``messages.create``'s own warnings, word for word.
    if model in DEPRECATED_MODELS:
        warnings.warn(
            f"The model '{model}' is deprecated and will reach end-of-life on "
            f"{DEPRECATED_MODELS[model]}.\nPlease migrate to a newer model. Visit "
            "https://docs.anthropic.com/en/docs/resources/model-deprecations for more "
            "information.", DeprecationWarning, stacklevel=4)
    if model in MODELS_TO_WARN_WITH_THINKING_ENABLED and thinking and \
            thinking["type"] == "enabled":
        warnings.warn(
            f"Using Claude with {model} and 'thinking.type=enabled' is deprecated. Use "
            "'thinking.type=adaptive' instead which results in better model performance in "
            "our testing: https://platform.claude.com/docs/en/build-with-claude/"
            "adaptive-thinking", UserWarning, stacklevel=4)
