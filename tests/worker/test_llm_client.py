"""The worker's Anthropic client: the SDK's own, one per configuration, SDK tracing only
when asked; a streamed call sends what the SDK's `create` sends."""
from __future__ import annotations

from worker.llm.client import make_client


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
    from worker.jobs.runner import JobRunner
    from worker.llm.client import CLIENT_POOLS

    runner = JobRunner(settings)
    clients = [runner.client_for_job() for _ in range(2 * CLIENT_POOLS)]
    assert len({id(client) for client in clients}) == CLIENT_POOLS
    assert clients[:CLIENT_POOLS] == clients[CLIENT_POOLS:]
    assert runner.client in clients
    given = make_client(settings, pool=3)
    assert {JobRunner(settings, client=given).client_for_job() for _ in range(3)} == {given}


def test_the_client_is_the_sdks_own(settings):
    import anthropic

    client = make_client(settings, pool=5)
    assert type(client) is anthropic.Anthropic


def _sdk_twin(client):
    """A plain ``anthropic.Anthropic`` of ``client``'s configuration."""
    import anthropic

    return anthropic.Anthropic(api_key=client.api_key, base_url=client.base_url,
                               max_retries=client.max_retries, timeout=client.timeout,
                               open_telemetry=False)


def test_a_streamed_call_sends_what_create_sends(settings, fake_llm):
    from worker.llm.request import request_params
    from worker.llm.stream import stream_message

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


def test_a_broken_stream_is_retried_after_the_sdks_own_pauses(settings, fake_llm):
    """0.5 s doubling (capped at 8 s), less up to a quarter of jitter: the SDK's backoff."""
    from worker.llm.request import request_params
    from worker.llm.stream import stream_message

    fake_llm.fault("stream_error", count=2)
    params = request_params(settings, settings.model, system=[{"type": "text", "text": "S"}],
                            tools=[], messages=[{"role": "user", "content": "hello"}])
    pauses: list[float] = []
    result = stream_message(make_client(settings), params, timeout=30.0, sleep=pauses.append)
    assert result.retries == 2 and result.message.content
    for attempt, pause in enumerate(pauses):
        longest = min(0.5 * 2 ** attempt, 8.0)
        assert 0.75 * longest <= pause <= longest, (attempt, pause)
