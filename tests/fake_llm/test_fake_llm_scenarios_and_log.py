"""Scripted scenarios, the request log and stats."""

from __future__ import annotations

import anthropic
import pytest

MODEL = "claude-sonnet-4-6"


def _ask(client, messages, **extra):
    return client.messages.create(model=MODEL, max_tokens=512, messages=messages, **extra)


def test_scenario_turns_follow_the_tool_loop_of_the_current_question(client, add_scenario):
    add_scenario(
        "two-queries",
        [
            {"tool_calls": [{"sql": "SELECT 1"}], "text": "First query."},
            {"tool_calls": [{"sql": "SELECT 2"}, {"sql": "SELECT 3"}]},
            {"text": '{"answerText": "done", "charts": []}'},
        ],
    )
    messages = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "[[scenario:two-queries]] what now?"},
    ]
    for expected in (["SELECT 1"], ["SELECT 2", "SELECT 3"]):
        reply = _ask(client, messages)
        assert reply.stop_reason == "tool_use"
        calls = [b for b in reply.content if b.type == "tool_use"]
        assert [c.input["sql"] for c in calls] == expected
        messages += [
            {"role": "assistant", "content": reply.content},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": c.id,
                        "content": "query_id=1 rows=1 shown=1\nx\n1",
                    }
                    for c in calls
                ],
            },
        ]
    final = _ask(client, messages)
    assert final.stop_reason == "end_turn" and final.content[0].text.startswith(
        '{"answerText": "done"'
    )
    messages += [{"role": "assistant", "content": final.content}]
    assert (
        "has no reply 4"
        in _ask(
            client,
            [*messages, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "late"}]}],
        )
        .content[0]
        .text
    )


def test_scenario_stop_reasons_and_error_turns(make_client, add_scenario, request_log):
    add_scenario(
        "flaky",
        [
            {"error": 529, "retry_after": 0.01},
            {"error": 429, "retry_after": 0.01},
            {"stop_reason": "max_tokens", "text": "partial"},
        ],
    )
    reply = _ask(make_client(max_retries=2), [{"role": "user", "content": "[[scenario:flaky]]"}])
    assert reply.stop_reason == "max_tokens" and reply.content[0].text == "partial"
    assert [e["status"] for e in request_log()] == [529, 429, 200]
    assert all(e.get("scenario") in (None, "flaky") for e in request_log())


def test_unknown_scenario_and_bad_specs_are_400(client, control):
    with pytest.raises(anthropic.BadRequestError, match="unknown scenario"):
        _ask(client, [{"role": "user", "content": "[[scenario:missing]]"}])
    assert control.post("/scenarios", json={"name": "x", "turns": []}).status_code == 400
    assert (
        control.post("/scenarios", json={"name": "x", "turns": [{"bogus": 1}]}).status_code == 400
    )
    bad_stop = {"name": "x", "turns": [{"stop_reason": "bored", "text": ""}]}
    assert control.post("/scenarios", json=bad_stop).status_code == 400


def test_log_records_requests_in_order_without_credentials(client, control, add_scenario):
    add_scenario("hello", [{"text": "hi there"}])
    body = [{"role": "user", "content": "[[scenario:hello]]"}]
    _ask(client, body, system="sys")
    with client.messages.stream(model=MODEL, max_tokens=64, messages=body) as stream:
        stream.until_done()
    client.messages.count_tokens(model=MODEL, messages=body)

    entries = control.get("/log").json()["entries"]
    assert [(e["seq"], e["method"], e["path"], e["status"]) for e in entries] == [
        (1, "POST", "/v1/messages", 200),
        (2, "POST", "/v1/messages", 200),
        (3, "POST", "/v1/messages/count_tokens", 200),
    ]
    first = entries[0]
    assert first["body"]["system"] == "sys" and first["body"]["messages"] == body
    # This SDK sends the api key as `Authorization: Bearer`; only the scheme is logged.
    assert first["headers"]["auth"] == "bearer" and "test" not in str(first["headers"])
    assert first["headers"]["anthropic-version"]
    assert first["usage"]["output_tokens"] > 0 and first["stop_reason"] == "end_turn"
    assert first["scenario"] == "hello" and entries[1]["stream"] is True
    assert [e["seq"] for e in control.get("/log", params={"since": 2}).json()["entries"]] == [3]

    stats = control.get("/stats").json()
    assert stats["requests"] == 3 and stats["streams"] == 1
    assert stats["by_path"] == {"/v1/messages": 2, "/v1/messages/count_tokens": 1}
    assert stats["by_status"] == {"200": 3}
    assert stats["scenarios"] == {"hello": 2}
    assert stats["usage"]["output_tokens"] == 2 * first["usage"]["output_tokens"]


def test_reset_clears_everything(client, control, add_scenario, arm_fault):
    add_scenario("s", [{"text": "x"}])
    arm_fault("500", count=5)
    control.post("/latency", json={"fixed_ms": 5})
    with pytest.raises(anthropic.InternalServerError):
        _ask(client, [{"role": "user", "content": "hi"}])
    control.post("/reset").raise_for_status()
    assert control.get("/faults").json() == {"faults": []}
    assert control.get("/scenarios").json() == {"scenarios": {}}
    assert control.get("/log").json() == {"entries": []}
    assert control.get("/latency").json() == {"fixed_ms": 0.0, "jitter_ms": 0.0}
    assert control.get("/stats").json()["cache_entries"] == 0
