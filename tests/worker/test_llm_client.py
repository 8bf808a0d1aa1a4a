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
