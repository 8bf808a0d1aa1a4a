"""`/v1/messages` and `/v1/messages/count_tokens` through the real Anthropic SDK."""

from __future__ import annotations

import json

import anthropic
import httpx
import pytest

MODEL = "claude-sonnet-4-6"


def _without_ids(content: list) -> list[dict]:
    blocks = [block.model_dump(exclude_none=True) for block in content]
    for block in blocks:
        block.pop("id", None)
        block.pop("parsed_output", None)
    return blocks


def test_plain_call_parses_with_ids_usage_and_request_id(client):
    raw = client.messages.with_raw_response.create(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "hello"}]
    )
    message = raw.parse()
    assert raw.headers["request-id"].startswith("req_")
    assert message.id.startswith("msg_")
    assert message.role == "assistant" and message.model == MODEL
    assert message.stop_reason == "end_turn"
    usage = message.usage
    assert usage.input_tokens == 2  # ceil(len("hello") / 4)
    assert usage.output_tokens > 0
    assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0
    assert usage.cache_creation.ephemeral_5m_input_tokens == 0
    assert usage.service_tier == "standard"


def test_stream_final_message_equals_plain_response(client, add_scenario):
    tricky_sql = "SELECT \"name\", count(*) AS n FROM t WHERE x = 'a\\b' -- é\n GROUP BY 1"
    add_scenario(
        "both",
        [{"text": "Let me check.", "tool_calls": [{"sql": tricky_sql}, {"sql": "SELECT 2"}]}],
    )
    request = {
        "model": MODEL,
        "max_tokens": 512,
        "messages": [{"role": "user", "content": "[[scenario:both]] go"}],
    }
    plain = client.messages.create(**request)
    with client.messages.stream(**request) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()

    assert _without_ids(final.content) == _without_ids(plain.content)
    assert final.stop_reason == plain.stop_reason == "tool_use"
    assert final.usage.output_tokens == plain.usage.output_tokens
    assert final.content[1].input == {"sql": tricky_sql}
    assert all(block.id.startswith("toolu_") for block in final.content[1:])
    assert kinds.count("input_json") >= 4  # each tool input arrives in several chunks


def test_stream_wire_format_is_event_data_blank_line(server, add_scenario):
    add_scenario("wire", [{"text": "one two three four five six seven"}])
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": "[[scenario:wire]]"}],
    }
    response = httpx.post(f"{server.base_url}/v1/messages", json=body, headers={"x-api-key": "k"})
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = response.text.split("\n\n")
    assert frames[-1] == ""
    for frame in frames[:-1]:
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = data_line[len("data: ") :]
        if event_line != "event: ping":
            assert data == json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False)
    assert 'event: ping\ndata: {"type": "ping"}' in response.text
    assert response.text.count("event: content_block_delta") == 2


def test_bearer_token_is_accepted_and_missing_auth_is_401(server, make_client):
    bearer = make_client(api_key=None, auth_token="tok")
    assert bearer.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    ).content

    response = httpx.post(
        f"{server.base_url}/v1/messages",
        json={"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
    )
    assert response.status_code == 401
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "authentication_error"
    assert body["request_id"] == response.headers["request-id"]


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        ({"model": None}, "model"),
        ({"max_tokens": None}, "max_tokens"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"messages": []}, "at least one message"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "first message"),
        (
            {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
            "alternate",
        ),
    ],
)
def test_invalid_requests_are_400_invalid_request_error(client, patch, fragment):
    body = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    body.update(patch)
    body = {key: value for key, value in body.items() if value is not None}
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.post("/v1/messages", body=body, cast_to=object)
    assert caught.value.type == "invalid_request_error"
    assert fragment in caught.value.api_message


def test_unknown_route_is_anthropic_404(server):
    response = httpx.get(f"{server.base_url}/v1/nope", headers={"x-api-key": "k"})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    assert response.headers["request-id"].startswith("req_")


def test_count_tokens_matches_usage_of_the_same_prompt(client, analyst_request):
    request = analyst_request([{"role": "user", "content": "How many flights are there?"}])
    counted = client.messages.count_tokens(
        model=request["model"],
        system=request["system"],
        tools=request["tools"],
        messages=request["messages"],
    )
    usage = client.messages.create(**request).usage
    total = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    assert counted.input_tokens == total > 0


def test_max_tokens_cuts_the_reply(client, add_scenario):
    add_scenario("long", [{"text": "word " * 400}])
    message = client.messages.create(
        model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "[[scenario:long]]"}]
    )
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 20
    assert len(message.content[0].text.encode()) <= 80
