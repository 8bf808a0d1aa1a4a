"""The worker's Anthropic client: one per configuration, SDK tracing only when asked."""
from __future__ import annotations

from worker.llm_client import make_client


def test_one_client_per_configuration_without_sdk_spans_by_default(settings):
    client = make_client(settings)
    assert make_client(settings) is client
    assert client.open_telemetry["traces"]["enabled"] is False


def test_tracing_hands_the_option_to_the_sdk(settings, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_OPEN_TELEMETRY", raising=False)
    client = make_client(settings.model_copy(update={"llm_tracing": True}))
    assert client is not make_client(settings)
    assert client.open_telemetry["traces"]["enabled"] is True


def test_a_runner_hands_its_jobs_the_pooled_clients_in_turn(settings):
    from worker.llm_client import CLIENT_POOLS
    from worker.runner import JobRunner

    runner = JobRunner(settings)
    clients = [runner.client_for_job() for _ in range(2 * CLIENT_POOLS)]
    assert len({id(client) for client in clients}) == CLIENT_POOLS
    assert clients[:CLIENT_POOLS] == clients[CLIENT_POOLS:]
    assert runner.client in clients
    given = make_client(settings, pool=3)
    assert {JobRunner(settings, client=given).client_for_job() for _ in range(3)} == {given}


def test_a_model_call_sets_its_socket_timeout_once(settings, fake_llm):
    from worker.model_sockets import SteadyTimeoutSocket

    client = make_client(settings)
    reply = client.messages.create(model=settings.model, max_tokens=64,
                                   messages=[{"role": "user", "content": "hello"}])
    assert reply.content
    pool = client._client._transport._pool
    sockets = [c._connection._network_stream.get_extra_info("socket")
               for c in pool.connections if c._connection is not None]
    assert sockets and all(isinstance(s, SteadyTimeoutSocket) for s in sockets)
    assert {s.gettimeout() for s in sockets} == {settings.llm_timeout_s}


def _sdk_twin(client):
    """A plain ``anthropic.Anthropic`` of ``client``'s configuration."""
    import anthropic

    return anthropic.Anthropic(api_key=client.api_key, base_url=client.base_url,
                               max_retries=client.max_retries, timeout=client.timeout,
                               open_telemetry=False)


def test_the_kept_urls_and_headers_are_the_sdks_own(settings):
    from anthropic._models import FinalRequestOptions

    client = make_client(settings, pool=5)
    twin = _sdk_twin(client)
    for timeout, retries, headers in [(60.0, 0, {"X-Stainless-Raw-Response": "stream"}),
                                      (60.0, 0, {"X-Stainless-Raw-Response": "stream"}),
                                      (60.0, 1, {"X-Stainless-Raw-Response": "stream"}),
                                      (60, 0, {"X-Stainless-Raw-Response": "stream"}),
                                      (12.5, 0, {}), (12.5, 0, {"anthropic-beta": "x"})]:
        for path in ("/v1/messages", "/v1/messages/batches/msgbatch_1"):
            options = FinalRequestOptions.construct(method="post", url=path, timeout=timeout,
                                                    headers=headers, content=b"{}")
            ours = client._build_request(options, retries_taken=retries)
            sdks = twin._build_request(options, retries_taken=retries)
            assert (ours.method, ours.url, ours.headers.raw, ours.content) == \
                (sdks.method, sdks.url, sdks.headers.raw, sdks.content)
    # The httpx client's own headers, changed in place, are merged anew.
    options = FinalRequestOptions.construct(method="post", url="/v1/messages", timeout=60.0)
    client._client.headers["X-Extra"] = "1"
    assert client._build_request(options).headers["X-Extra"] == "1"
    del client._client.headers["X-Extra"]
    assert "X-Extra" not in client._build_request(options).headers
    # A request's headers are its own: changing them leaves the next request's alone.
    options = FinalRequestOptions.construct(method="post", url="/v1/messages", timeout=60.0)
    client._build_headers(options).pop("Content-Type")
    assert client._build_headers(options)["Content-Type"] == "application/json"
    client.base_url = "http://127.0.0.1:9/elsewhere/"
    assert str(client._prepare_url("/v1/messages")) == "http://127.0.0.1:9/elsewhere/v1/messages"


def test_a_streamed_call_sends_what_create_sends(settings, fake_llm):
    from worker.llm_request import request_params
    from worker.llm_stream import stream_message

    client = make_client(settings)
    params = request_params(settings, settings.model, system=[{"type": "text", "text": "S"}],
                            tools=[], messages=[{"role": "user", "content": "hello"}])
    stream_message(client, params, timeout=30.0)
    with _sdk_twin(client).messages.with_streaming_response.create(
            **params, stream=True, timeout=30.0) as response:
        response.read()
    ours, sdks = fake_llm.message_entries()[-2:]
    assert ours["body"] == sdks["body"]
    assert ours["headers"] == sdks["headers"]
