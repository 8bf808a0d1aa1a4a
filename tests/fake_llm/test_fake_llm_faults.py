"""Every fault kind, seen through the real SDK (its retries and timeouts included)."""

from __future__ import annotations

import json

import anthropic
import httpx
import pytest

from tests.utils.waiting import wait_until

MODEL = "claude-sonnet-4-6"
HELLO = {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": "hello"}]}


def _statuses(entries: list[dict]) -> list[int]:
    return [entry["status"] for entry in entries]


def test_sdk_retries_recover_from_429_and_529_honouring_retry_after(
    make_client, arm_fault, request_log
):
    arm_fault("429", count=1, retry_after=0.01)
    arm_fault("529", count=1, retry_after=0.01)
    client = make_client(max_retries=2)
    assert client.messages.create(**HELLO).stop_reason == "end_turn"
    entries = request_log()
    assert _statuses(entries) == [429, 529, 200]
    assert [e["headers"]["x-stainless-retry-count"] for e in entries] == ["0", "1", "2"]
    assert [e.get("faults") for e in entries] == [["429"], ["529"], []]


def test_exhausted_retries_raise_the_sdk_error_types(make_client, arm_fault, request_log):
    arm_fault("529", count=3, retry_after=0.01)
    with pytest.raises(anthropic.InternalServerError) as overloaded:
        make_client(max_retries=2).messages.create(**HELLO)
    assert overloaded.value.status_code == 529 and overloaded.value.type == "overloaded_error"
    assert _statuses(request_log()) == [529, 529, 529]

    arm_fault("429", count=1, retry_after=0.01)
    with pytest.raises(anthropic.RateLimitError):
        make_client().messages.create(**HELLO)
    arm_fault("500")
    with pytest.raises(anthropic.InternalServerError) as failed:
        make_client().messages.create(**HELLO)
    assert failed.value.status_code == 500 and failed.value.type == "api_error"


def test_error_responses_carry_retry_after_and_request_id(server, arm_fault):
    arm_fault("429", retry_after=2)
    response = httpx.post(f"{server.base_url}/v1/messages", json=HELLO, headers={"x-api-key": "k"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "2"
    assert response.json() == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": response.json()["error"]["message"]},
        "request_id": response.headers["request-id"],
    }


def test_hang_trips_the_sdk_timeout_and_the_server_recovers(make_client, arm_fault, request_log):
    arm_fault("hang", seconds=5)
    with pytest.raises(anthropic.APITimeoutError):
        make_client(timeout=0.3).messages.create(**HELLO)
    assert make_client().messages.create(**HELLO).content
    # The hung request is logged once the server sees its client gone (it looks every
    # 50 ms), which on a busy machine can come after the second request's entry.
    entries = wait_until(lambda: len(request_log()) == 2 and request_log(), timeout=10)
    assert sorted(entry["faults"] for entry in entries) == [[], ["hang"]]


def test_stream_error_arrives_mid_stream_and_waits_for_a_streaming_call(client, arm_fault):
    arm_fault("stream_error")
    assert client.messages.create(**HELLO).stop_reason == "end_turn"  # not a stream: untouched
    seen = []
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(**HELLO) as stream,
    ):
        for event in stream:
            seen.append(event.type)
    assert "message_start" in seen and "message_stop" not in seen
    assert caught.value.type == "overloaded_error"


def test_max_tokens_refusal_and_pause_turn(client, arm_fault, analyst_request):
    question = analyst_request(
        [{"role": "user", "content": "How many flights did each carrier fly?"}]
    )
    arm_fault("max_tokens")
    cut = client.messages.create(**question)
    assert cut.stop_reason == "max_tokens" and [b.type for b in cut.content] == ["text"]

    arm_fault("refusal")
    refused = client.messages.create(**question)
    assert refused.stop_reason == "refusal" and refused.stop_details.type == "refusal"

    arm_fault("pause_turn")
    paused = client.messages.create(**question)
    assert paused.stop_reason == "pause_turn"
    resumed = client.messages.create(
        **dict(
            question,
            messages=[
                *question["messages"],
                {"role": "assistant", "content": paused.content},
            ],
        )
    )
    assert resumed.stop_reason == "tool_use"


def _final_answer(client, analyst_request, run_sql_tool) -> str:
    first = analyst_request([{"role": "user", "content": "How many flights did each carrier fly?"}])
    call = client.messages.create(**first)
    tool_use = call.content[-1]
    result = {
        "type": "tool_result",
        "tool_use_id": tool_use.id,
        "content": run_sql_tool(tool_use.input["sql"]),
    }
    second = analyst_request(
        [
            *first["messages"],
            {"role": "assistant", "content": call.content},
            {"role": "user", "content": [result]},
        ]
    )
    return client.messages.create(**second).content[0].text


@pytest.mark.parametrize("kind", ["prose_before_json", "fenced_json", "invalid_json", "no_json"])
def test_answer_shaping_faults_wait_for_the_final_answer(
    client, arm_fault, analyst_request, run_sql_tool, kind
):
    arm_fault(kind)
    text = _final_answer(client, analyst_request, run_sql_tool)
    if kind == "prose_before_json":
        assert not text.startswith("{") and '{"answerText"' in text
        json.loads(text[text.index("{") :])
    elif kind == "fenced_json":
        assert "```json\n{" in text
        json.loads(text.split("```json\n")[1].split("\n```")[0])
    else:
        with pytest.raises(ValueError):
            json.loads(text)
        assert ("answerText" in text) == (kind == "invalid_json")


def test_repeat_sql_repeats_the_previous_query_exactly(
    client, arm_fault, analyst_request, run_sql_tool
):
    first = analyst_request([{"role": "user", "content": "Average departure delay by carrier"}])
    call = client.messages.create(**first)
    sql = call.content[-1].input["sql"]
    arm_fault("repeat_sql")
    result = {
        "type": "tool_result",
        "tool_use_id": call.content[-1].id,
        "content": run_sql_tool(sql),
    }
    again = client.messages.create(
        **analyst_request(
            [
                *first["messages"],
                {"role": "assistant", "content": call.content},
                {"role": "user", "content": [result]},
            ]
        )
    )
    assert again.stop_reason == "tool_use"
    assert again.content[-1].name == "execute_sql" and again.content[-1].input == {"sql": sql}


def test_rate_faults_are_seeded_and_repeatable(client, control, arm_fault):
    def outcomes() -> list[int]:
        control.post("/reset")
        arm_fault("500", rate=0.5)
        statuses = []
        for _ in range(12):
            try:
                client.messages.create(**HELLO)
                statuses.append(200)
            except anthropic.InternalServerError:
                statuses.append(500)
        return statuses

    first = outcomes()
    assert 200 in first and 500 in first
    assert outcomes() == first


def test_bad_fault_specs_are_rejected(control):
    assert control.post("/faults", json={"kind": "gremlins", "count": 1}).status_code == 400
    assert control.post("/faults", json={"kind": "429"}).status_code == 400
    assert control.post("/faults", json={"kind": "429", "rate": 2}).status_code == 400
    assert control.get("/faults").json() == {"faults": []}
