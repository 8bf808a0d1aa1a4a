"""The lean stream reader (worker/llm/message_events.py) against the SDK's own stream.

Every recorded real-API stream in ../shared/testdata/anthropic-sdk-fixtures/ and the
offline model's streams (text, thinking with signatures, tool calls) are
read both ways over real HTTP: the final message, the answer text as it arrived
and the completed blocks must be what ``client.messages.stream()`` gave. A
mid-stream ``error`` event raises the SDK's own error in both.
"""
from __future__ import annotations

import anthropic
import pytest

from tests.utils.recorded_streams import FIXTURE_FILES, FIXTURES, replaying
from worker.llm.message_events import MessageBuilder, read_message, sse_events
from worker.llm.stream import stream_message

MODEL = "claude-sonnet-5-5"
REQUEST = {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def replay_server():
    with replaying() as handle:
        yield handle


def _both_ways(base_url: str, request: dict, headers: dict | None = None):
    """(the SDK's final message, texts, finished blocks), then ours, for one request."""
    with anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0,
                             default_headers=headers or {}) as client:
        with client.messages.stream(**request) as stream:
            events = list(stream)
            sdk = (stream.get_final_message(),
                   [e.text for e in events if e.type == "text"],
                   [e.content_block.model_dump(exclude_none=True) for e in events
                    if e.type == "content_block_stop"])
        texts, blocks = [], []
        result = stream_message(client, request, timeout=10, on_text=texts.append,
                                on_block_end=blocks.append)
        ours = (result.message, texts, blocks)
    return sdk, ours


def _assert_same(sdk, ours, fresh: tuple[str, ...] = ()) -> None:
    """Equal, but for the ``fresh`` fields (made anew for every reply)."""
    (sdk_message, sdk_texts, sdk_blocks), (message, texts, blocks) = sdk, ours
    assert _set(message.model_dump(exclude_none=True), fresh) == \
        _set(sdk_message.model_dump(exclude_none=True), fresh)
    assert texts == sdk_texts
    assert _set([{k: v for k, v in block.items() if v is not None} for block in blocks],
                fresh) == _set(sdk_blocks, fresh)


def _set(value, fresh: tuple[str, ...]):
    """``value`` with every field named in ``fresh`` reduced to whether it is set."""
    if isinstance(value, dict):
        return {k: bool(v) if k in fresh else _set(v, fresh) for k, v in value.items()}
    if isinstance(value, list):
        return [_set(v, fresh) for v in value]
    return value


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_recorded_stream_reads_as_the_sdk_reads_it(replay_server, name):
    sdk, ours = _both_ways(replay_server.base_url, REQUEST, {"x-fixture": name})
    _assert_same(sdk, ours)
    assert ours[0].stop_reason


def test_recorded_usage_and_stop_details_are_kept_exactly(replay_server):
    _, (message, _, _) = _both_ways(replay_server.base_url, REQUEST,
                                    {"x-fixture": "stream-a-refusal.sse"})
    assert message.stop_reason == "refusal"
    assert message.stop_details.type == "refusal"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (28, 106)
    assert message.usage.cache_read_input_tokens == 0
    thinking = message.content[0]
    assert thinking.type == "thinking" and thinking.signature.startswith("c3ludGhldGlj")


def test_a_tool_input_cut_off_mid_json_is_read_as_far_as_it_goes(replay_server):
    sdk, ours = _both_ways(replay_server.base_url, REQUEST,
                           {"x-fixture": "incomplete_partial_json_response.txt"})
    _assert_same(sdk, ours)
    assert ours[0].content[-1].type == "tool_use"


OFFLINE_TURNS = {
    "text": [{"text": "Hello there, all the flights."}],
    "thinking and tools": [{"thinking": "First the total.", "text": "Let me count.",
                            "tool_calls": [{"sql": "SELECT count(*) FROM flights"},
                                           {"sql": "SELECT 1"}]}],
    "thinking and text": [{"thinking": "Enough to answer.", "text": '{"answerText": "UA"}'}],
}


@pytest.mark.parametrize("turns", sorted(OFFLINE_TURNS))
def test_offline_model_streams_read_as_the_sdk_reads_them(fake_llm, fake_llm_server, turns):
    marker = fake_llm.scenario("lean", OFFLINE_TURNS[turns])
    request = {**REQUEST, "max_tokens": 4096,
               "thinking": {"type": "adaptive", "display": "summarized"},
               "messages": [{"role": "user", "content": f"{marker} hi"}]}
    sdk, ours = _both_ways(fake_llm_server.base_url, request)
    _assert_same(sdk, ours, fresh=("id", "signature"))
    if "thinking" in turns:
        assert ours[2][0]["type"] == "thinking" and ours[2][0]["thinking"]


def test_reads_are_reported_until_one_completes_the_reply(fake_llm, fake_llm_server):
    """What the completing read brought goes with the caller's handling of the whole
    reply, so no read's end is reported after the message_delta."""
    marker = fake_llm.scenario("paced", OFFLINE_TURNS["thinking and text"])
    fake_llm.latency(200)  # spread over the deltas: many reads
    request = {**REQUEST, "messages": [{"role": "user", "content": f"{marker} hi"}]}
    builder, stop_reasons = MessageBuilder(), []
    with anthropic.Anthropic(base_url=fake_llm_server.base_url, api_key="test",
                             max_retries=0) as client, \
            client.messages.with_streaming_response.create(**request, stream=True) as resp:
        message = read_message(resp.http_response, builder,
                               lambda: stop_reasons.append(builder.snapshot.get("stop_reason")))
    assert len(stop_reasons) >= 2 and set(stop_reasons) == {None}, stop_reasons
    assert message.stop_reason == "end_turn"


def test_a_mid_stream_error_raises_the_sdks_error(fake_llm, fake_llm_server):
    fake_llm.fault("stream_error", count=2)
    with anthropic.Anthropic(base_url=fake_llm_server.base_url, api_key="test",
                             max_retries=0) as client:
        with pytest.raises(anthropic.APIStatusError) as sdk, \
                client.messages.stream(**REQUEST) as stream:
            list(stream)
        builder = MessageBuilder()
        with pytest.raises(anthropic.APIStatusError) as ours, \
                client.messages.with_streaming_response.create(**REQUEST, stream=True) as resp:
            read_message(resp.http_response, builder)
    assert type(ours.value) is type(sdk.value)
    assert ours.value.status_code == sdk.value.status_code
    assert ours.value.body == sdk.value.body and str(ours.value) == str(sdk.value)


@pytest.mark.parametrize("chunk", [1, 7, 64, 100_000])
def test_events_split_anywhere_across_chunks_read_the_same(chunk):
    raw = (FIXTURES / "stream-a-toolrefusal.sse").read_bytes().replace(b"\n", b"\r\n")
    whole = list(sse_events([raw]))
    assert list(sse_events(raw[i:i + chunk] for i in range(0, len(raw), chunk))) == whole
    assert [name for name, _ in whole][:2] == ["message_start", "content_block_start"]


def _fields_set(model):
    """Each nested model's class and ``model_fields_set``, as a comparable tree."""
    import pydantic

    if isinstance(model, pydantic.BaseModel):
        return (type(model), frozenset(model.model_fields_set),
                {name: _fields_set(getattr(model, name)) for name in type(model).model_fields})
    if isinstance(model, list):
        return [_fields_set(item) for item in model]
    return model


def _built(name: str) -> MessageBuilder:
    """A builder fed every message event of the recording ``name``."""
    from jiter import from_json

    builder = MessageBuilder()
    for event, data in sse_events([(FIXTURES / name).read_bytes()]):
        if event and event not in ("ping", "error") and data:
            builder.feed(event, from_json(data))
    return builder


# The recordings that carry a message (an error-only one has none to compare).
MESSAGE_FIXTURES = [name for name in FIXTURE_FILES if _built(name).snapshot is not None]


def test_most_recordings_carry_a_message():
    assert len(MESSAGE_FIXTURES) >= len(FIXTURE_FILES) // 2 > 0


@pytest.mark.parametrize("name", MESSAGE_FIXTURES)
def test_blocks_validated_by_their_type_make_the_message_one_validation_makes(name):
    from anthropic.types import Message

    builder = _built(name)
    message = builder.message()
    try:
        whole = Message.model_validate(builder.snapshot)
    except ValueError:
        whole = Message.model_construct(**builder.snapshot)
    assert message == whole
    assert _fields_set(message) == _fields_set(whole)
