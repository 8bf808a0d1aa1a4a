"""The Anthropic client factory. Retries on 429/529/5xx and timeouts are the SDK's own.

A client's connection pool (httpcore's) walks all of its connections each time a
request starts and ends; with hundreds of model calls in flight in one worker that
walk was a large share of its CPU. So a runner hands its jobs, in turn, to
``CLIENT_POOLS`` clients of the same configuration, each with a pool of its own
(``make_client(settings, pool=n)``). The clients are the SDK's own, as built.
"""
from __future__ import annotations

import functools

import anthropic
import httpx2

from shared.config import Settings

OFFLINE_KEY = "sunrise-offline"
MISSING_KEY_HELP = (
    "ANTHROPIC_API_KEY is not set (nor ANTHROPIC_BASE_URL), so Sunrise has no language model "
    "to ask. Set ANTHROPIC_API_KEY to use Claude, or run on Sunrise's offline model (a test "
    "double, not Claude): add --offline to `sunrise ask`, `sunrise report --local` or "
    "`sunrise eval`, or serve `sunrise fake-llm` and set ANTHROPIC_BASE_URL to it."
)


CLIENT_POOLS = 8
# One TLS context for every model client of the process: httpx builds one per client
# otherwise (loading the CA bundle: ~20 ms of CPU each, CLIENT_POOLS per worker).
_tls_context = functools.cache(httpx2.create_ssl_context)


def make_client(settings: Settings, *, timeout_s: float | None = None,
                pool: int = 0) -> anthropic.Anthropic:
    """A client honouring ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL as read by the settings;
    the same one for the same settings and ``pool`` number (see the module doc)."""
    return _client(
        settings.anthropic_api_key or OFFLINE_KEY,
        settings.anthropic_base_url,
        settings.llm_max_retries,
        timeout_s if timeout_s is not None else settings.llm_timeout_s,
        settings.llm_tracing,
        pool,
    )


@functools.cache
def _client(api_key: str, base_url: str | None, max_retries: int, timeout_s: float,
            tracing: bool, _pool: int):
    # One client (and so one HTTP connection pool) per configuration per process. With
    # tracing, the SDK's own OpenTelemetry option applies (its ANTHROPIC_OPEN_TELEMETRY*
    # variables included).
    return anthropic.Anthropic(
        api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s,
        open_telemetry=None if tracing else False,
        http_client=anthropic.DefaultHttpxClient(timeout=timeout_s, verify=_tls_context()),
    )
