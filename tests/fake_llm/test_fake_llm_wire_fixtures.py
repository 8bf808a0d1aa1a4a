"""Wire compatibility: recorded Anthropic streams and the offline model's streams,
both parsed by the SDK's own stream machinery over real HTTP.

The recorded bytes are served unchanged by a tiny app on its own port; the SDK
cannot tell which server it talks to, so equal event sequences and equal
accumulated Message shapes mean the offline model is wire-compatible.
"""

from __future__ import annotations

from itertools import groupby

import anthropic
import pytest

from tests.utils.recorded_streams import FIXTURE_FILES, replaying

MODEL = "claude-sonnet-4-6"


@pytest.fixture(scope="module")
def fixture_server():
    with replaying() as handle:
        yield handle


def _sdk_stream(base_url: str, headers: dict | None = None, **request) -> tuple[list[str], object]:
    """Event types from `client.messages.stream(...)` and its final Message."""
    request.setdefault("model", MODEL)
    request.setdefault("max_tokens", 256)
    request.setdefault("messages", [{"role": "user", "content": "hi"}])
    with (
        anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0) as client,
        client.messages.stream(extra_headers=headers or {}, **request) as stream,
    ):
        events = list(stream)
        return [e.type for e in events], stream.get_final_message()


def _raw_event_types(base_url: str, headers: dict | None = None, **request) -> list[str]:
    """SSE event names as the SDK's low-level stream yields them, consecutive repeats collapsed."""
    request.setdefault("model", MODEL)
    request.setdefault("max_tokens", 256)
    request.setdefault("messages", [{"role": "user", "content": "hi"}])
    with (
        anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0) as client,
        client.messages.with_streaming_response.create(
            stream=True, extra_headers=headers or {}, **request
        ) as streamed,
    ):
        names = [sse.event for sse in anthropic.Stream.raw_events(streamed.http_response)]
    return [name for name, _ in groupby(names)]


def _collapsed(kinds: list[str]) -> list[str]:
    """Helper events in order, derived per-delta events ("text", "input_json") dropped
    and repeats collapsed, since chunking differs while the structure must not."""
    return [k for k, _ in groupby(k for k in kinds if k not in ("text", "input_json"))]


def _shape(message) -> dict:
    """What must agree between a recorded message and ours: keys and block types."""
    dumped = message.model_dump()
    return {
        "keys": sorted(dumped),
        "blocks": [(b["type"], sorted(b)) for b in dumped["content"]],
        "usage_keys": sorted(k for k, v in dumped["usage"].items() if v is not None),
        "stop_reason": dumped["stop_reason"],
    }


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_recorded_fixture_replays_through_the_sdk(fixture_server, name):
    kinds, final = _sdk_stream(fixture_server.base_url, {"x-fixture": name})
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert final.id.startswith("msg_") and final.stop_reason


EQUIVALENTS = {
    "basic_response.txt": ({"text": "Hello there!"}, None),
    "stream-b-fallback.sse": (
        {"text": "Solar eclipses happen when the Moon passes between."},
        None,
    ),
    "tool_use_response.txt": (
        {
            "text": "I'll check the current weather in Paris for you.",
            "tool_calls": [{"name": "get_weather", "input": {"location": "Paris"}}],
        },
        None,
    ),
    "refusal_response.txt": ({"text": "anything"}, "refusal"),
}


@pytest.mark.parametrize("name", sorted(EQUIVALENTS))
def test_offline_model_streams_like_the_recording(
    fixture_server, server, add_scenario, arm_fault, name
):
    turn, fault = EQUIVALENTS[name]
    add_scenario("same", [turn])
    if fault:
        arm_fault(fault)
    ours = {"messages": [{"role": "user", "content": "[[scenario:same]] hi"}]}

    recorded_events = _raw_event_types(fixture_server.base_url, {"x-fixture": name})
    our_events = _raw_event_types(server.base_url, **ours)
    if fault:
        arm_fault(fault)
    recorded_kinds, recorded = _sdk_stream(fixture_server.base_url, {"x-fixture": name})
    if fault:
        arm_fault(fault)
    our_kinds, mine = _sdk_stream(server.base_url, **ours)

    assert our_events == recorded_events
    assert _collapsed(our_kinds) == _collapsed(recorded_kinds)
    assert set(our_kinds) == set(recorded_kinds)
    recorded_shape, our_shape = _shape(recorded), _shape(mine)
    assert set(recorded_shape["usage_keys"]) <= set(our_shape["usage_keys"])
    recorded_shape.pop("usage_keys"), our_shape.pop("usage_keys")
    assert our_shape == recorded_shape
    if fault == "refusal":
        assert mine.stop_details.type == recorded.stop_details.type == "refusal"
