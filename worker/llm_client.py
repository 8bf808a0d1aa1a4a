"""The Anthropic client factory. Retries on 429/529/5xx and timeouts are the SDK's own.

A client's connection pool (httpcore's) walks all of its connections each time a
request starts and ends. With hundreds of model calls in flight in one worker that
walk was ~17 % of the worker's CPU (``bench.worker_cpu --threads 200 --latency-ms
1000``), so a runner hands its jobs, in turn, to ``CLIENT_POOLS`` clients of the same
configuration, each with a pool of its own (``make_client(settings, pool=n)``).

The clients are the SDK's own, but for three of its per-request steps that give the
same result for every model call of a client: the request's URL (parsed anew from
the base URL each time), its headers (about twenty, folded layer by layer from the
client's defaults) and httpx's merge of those with its own. ``SteadyAnthropic`` and
``SteadyHttpxClient`` keep their results per distinct input; all else -- auth,
retries, errors -- is the SDK's, per request.
"""
from __future__ import annotations

import functools

import anthropic
import httpx2
from anthropic._models import FinalRequestOptions

from shared.config import Settings
from worker.model_sockets import steady_timeouts

OFFLINE_KEY = "sunrise-offline"
MISSING_KEY_HELP = (
    "ANTHROPIC_API_KEY is not set (nor ANTHROPIC_BASE_URL), so Sunrise has no language model "
    "to ask. Set ANTHROPIC_API_KEY to use Claude, or run on Sunrise's offline model (a test "
    "double, not Claude): add --offline to `sunrise ask`, `sunrise report --local` or "
    "`sunrise eval`, or serve `sunrise fake-llm` and set ANTHROPIC_BASE_URL to it."
)


CLIENT_POOLS = 8
# Distinct URLs and header sets a client keeps: model calls use one or two (a call's
# timeout shrinks only near its job's deadline), batch polls one URL per batch.
_KEPT = 64


class SteadyAnthropic(anthropic.Anthropic):
    """``anthropic.Anthropic``, its request URLs and headers computed once per distinct
    input (``_prepare_url``, ``_build_headers``: pure functions of their arguments and
    of the client's settings, which are part of the key). A client with a credentials
    token cache gets its headers built per request, as the SDK does."""

    _urls: tuple[httpx2.URL, dict] | None = None
    _headers: dict | None = None

    @property
    def user_agent(self) -> str:  # the SDK names the client's class: "Anthropic/Python x.y"
        return f"{anthropic.Anthropic.__name__}/Python {self._version}"

    def _prepare_url(self, url: str) -> httpx2.URL:
        base = self._base_url
        if self._urls is None or self._urls[0] is not base:  # new, or the base URL was set
            self._urls = (base, {})
        urls = self._urls[1]
        prepared = urls.get(url)
        if prepared is None:
            if len(urls) >= _KEPT:
                urls.clear()
            prepared = urls[url] = super()._prepare_url(url)
        return prepared  # an httpx URL is immutable: sharing it is safe

    def _build_headers(self, options: FinalRequestOptions, *,
                       retries_taken: int = 0) -> httpx2.Headers:
        if getattr(self, "_token_cache", None) is not None:
            return super()._build_headers(options, retries_taken=retries_taken)
        given = options.headers
        try:
            key = (options.timeout, type(options.timeout), retries_taken,
                   options.idempotency_key if self._idempotency_header else None,
                   tuple(given.items()) if isinstance(given, dict) else given,
                   self.api_key, self.auth_token)
            if self._headers is None:
                self._headers = {}
            headers = self._headers.get(key)
        except TypeError:  # an unhashable timeout or header value: built every time
            return super()._build_headers(options, retries_taken=retries_taken)
        if headers is None:
            if len(self._headers) >= _KEPT:
                self._headers.clear()
            headers = self._headers[key] = super()._build_headers(
                options, retries_taken=retries_taken)
        return headers.copy()  # the request building may remove one


class SteadyHttpxClient(anthropic.DefaultHttpxClient):
    """The SDK's default httpx client, its merge of the client's headers with a request's
    kept per distinct pair: httpx merges them name by name, each lookup a walk of the
    list decoding every name (≈ 30 µs for the SDK's ~20 headers, per request)."""

    _merged: dict | None = None

    def _merge_headers(self, headers=None):
        if type(headers) is not httpx2.Headers:
            return super()._merge_headers(headers)
        key = (tuple(self._headers._list), tuple(headers._list))
        if self._merged is None:
            self._merged = {}
        merged = self._merged.get(key)
        if merged is None:
            if len(self._merged) >= _KEPT:
                self._merged.clear()
            merged = self._merged[key] = super()._merge_headers(headers)
        return merged  # a Request copies the headers it is given: never changed here


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
    # variables included). The HTTP client is the SDK's default one, on sockets that skip
    # an unchanged timeout (worker/model_sockets.py).
    return SteadyAnthropic(
        api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s,
        open_telemetry=None if tracing else False,
        http_client=steady_timeouts(SteadyHttpxClient(timeout=timeout_s,
                                                      verify=_tls_context())),
    )
