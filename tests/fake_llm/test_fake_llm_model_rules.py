"""The offline model is as strict as the real API, per model, from the capability table:
request rules, empty content, thinking blocks and their replay, per-model caching,
and the faults that the real API produces."""

from __future__ import annotations

import anthropic
import pytest

HI = [{"role": "user", "content": "hello"}]


def create(client, model="claude-sonnet-5-5", messages=HI, **extra):
    return client.messages.create(model=model, max_tokens=2048, messages=messages, **extra)


def bad_request(client, **kw) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, **kw)
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    return caught.value.message


@pytest.mark.parametrize("model,extra,says", [
    ("claude-sonnet-5-5", {"thinking": {"type": "disabled"}}, "use 'between_tools'"),
    ("claude-sonnet-5-5", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, "enabled"),
    ("claude-sonnet-5-5", {"thinking": {"type": "between_tools"},
                           "output_config": {"effort": "xhigh"}}, "'between_tools'"),
    ("claude-sonnet-5-5", {"extra_body": {"thinking": {"type": "between_tools",
                                                       "display": "omitted"}}}, "no other fields"),
    ("claude-sonnet-5-5", {"tool_choice": {"type": "any"}}, "tool_choice type 'any'"),
    ("claude-sonnet-5-5", {"extra_body": {"temperature": 0.3}}, "sampling"),
    ("claude-sonnet-5", {"extra_body": {"top_k": 5}}, "sampling"),
    ("claude-haiku-4-5", {"thinking": {"type": "adaptive"}}, "not supported"),
    ("claude-haiku-4-5", {"output_config": {"effort": "low"}}, "effort"),
    ("claude-sonnet-4-6", {"output_config": {"effort": "xhigh"}}, "xhigh"),
    ("claude-sonnet-4-6", {"thinking": {"type": "adaptive"}, "tool_choice": {"type": "any"}},
     "'auto' or 'none'"),
    ("claude-sonnet-4-6", {"thinking": {"type": "adaptive"},
                           "extra_body": {"temperature": 0.5}}, "temperature"),
])
def test_per_model_request_rules(client, model, extra, says):
    message = bad_request(client, model=model, **extra)
    assert says in message and "platform.claude.com" in message, message


def test_what_a_model_does_accept_goes_through(client):
    create(client, model="claude-sonnet-4-6", tool_choice={"type": "any"},
           extra_body={"temperature": 0.2}, tools=[{"name": "t", "input_schema": {
               "type": "object"}}])
    create(client, thinking={"type": "between_tools"}, output_config={"effort": "high"})
    create(client, model="claude-haiku-4-5",
           thinking={"type": "enabled", "budget_tokens": 1024})


def test_max_tokens_above_the_models_output_limit_is_refused(client):
    with pytest.raises(anthropic.BadRequestError, match="64000"):
        client.messages.create(model="claude-haiku-4-5", max_tokens=64_001, messages=HI)


def test_unknown_models_are_404_and_sdk_listed_ones_are_served(client):
    with pytest.raises(anthropic.NotFoundError, match="claude-nope"):
        create(client, model="claude-nope")
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="claude-nope", messages=HI)
    assert create(client, model="claude-fable-5-2").stop_reason == "end_turn"
    info = client.models.retrieve("claude-sonnet-5-5")
    assert (info.max_input_tokens, info.max_tokens) == (1_000_000, 128_000)


@pytest.mark.parametrize("messages,says", [
    ([{"role": "user", "content": ""}], "non-empty content"),
    ([{"role": "user", "content": []}], "non-empty content"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": []},
      {"role": "user", "content": "and?"}], "non-empty content"),
    ([{"role": "user", "content": [{"type": "text", "text": " \n"}]}], "non-whitespace text"),
    ([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": [{"type": "text", "text": ""}]},
      {"role": "user", "content": "and?"}], "non-whitespace text"),
])
def test_empty_content_and_blank_text_blocks_are_refused(client, messages, says):
    assert says in bad_request(client, messages=messages)


def test_sonnet_5_5_thinks_by_default_and_omits_the_text_unless_asked(client):
    omitted = create(client)
    assert [b.type for b in omitted.content] == ["thinking", "text"]
    assert omitted.content[0].thinking == "" and omitted.content[0].signature
    assert omitted.usage.output_tokens_details.thinking_tokens > 0, "billed though omitted"
    shown = create(client, thinking={"type": "adaptive", "display": "summarized"})
    assert shown.content[0].thinking.strip()
    assert shown.usage.output_tokens_details.thinking_tokens == omitted.usage.output_tokens_details.thinking_tokens
    plain = create(client, model="claude-sonnet-4-6")
    assert [b.type for b in plain.content] == ["text"], "Sonnet 4.6 thinks only when asked"


def test_streamed_thinking_matches_the_plain_reply(client):
    with client.messages.stream(model="claude-sonnet-5-5", max_tokens=2048, messages=HI,
                                thinking={"type": "adaptive", "display": "summarized"}) as s:
        kinds = {e.type for e in s}
        message = s.get_final_message()
    assert {"thinking", "signature"} <= kinds
    block = message.content[0]
    assert block.type == "thinking" and block.thinking and block.signature


def _tool_turn(client, analyst_request, **extra):
    question = [{"role": "user", "content": "How many flights did each carrier fly?"}]
    reply = client.messages.create(**analyst_request(question, model="claude-sonnet-5-5",
                                                     **extra))
    assert reply.stop_reason == "tool_use"
    content = [b.model_dump(exclude_none=True) for b in reply.content]
    tool_use = next(b for b in content if b["type"] == "tool_use")
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use["id"],
                                            "content": "query_id=1 rows=1 shown=1\nn\n3"}]}
    return question, content, results


def test_a_tool_continuation_needs_its_thinking_blocks_unmodified(client, analyst_request):
    question, content, results = _tool_turn(client, analyst_request)
    assert content[0]["type"] == "thinking"

    def continue_with(assistant, model="claude-sonnet-5-5"):
        messages = [*question, {"role": "assistant", "content": assistant}, results]
        return client.messages.create(**analyst_request(messages, model=model))

    assert continue_with(content).stop_reason == "end_turn"
    dropped = [b for b in content if b["type"] != "thinking"]
    with pytest.raises(anthropic.BadRequestError, match="unmodified"):
        continue_with(dropped)
    edited = [{**content[0], "thinking": content[0]["thinking"] + " (edited)"}, *content[1:]]
    with pytest.raises(anthropic.BadRequestError, match="signature"):
        continue_with(edited)
    with pytest.raises(anthropic.BadRequestError, match="signature"):
        continue_with(content, model="claude-opus-5-5")  # tied to the model


def test_between_tools_returns_the_lead_in_as_thinking_without_up_front_thinking(
        client, analyst_request):
    _, content, _ = _tool_turn(client, analyst_request, thinking={"type": "between_tools"})
    assert [b["type"] for b in content] == ["thinking", "tool_use"]
    assert content[0]["thinking"].startswith("I'll query")
    answer = create(client, thinking={"type": "between_tools"})
    assert [b.type for b in answer.content] == ["text"], "no tools, no thinking"


def test_cache_minimum_follows_the_model(client):
    system = [{"type": "text", "text": "Schema line. " * 200,  # 650 tokens
               "cache_control": {"type": "ephemeral"}}]
    for model, cached in (("claude-sonnet-5-5", True), ("claude-sonnet-4-6", False),
                          ("claude-haiku-4-5", False)):
        create(client, model=model, system=system, thinking={"type": "disabled"}
               if model != "claude-sonnet-5-5" else {"type": "between_tools"})
        again = create(client, model=model, system=system, thinking={"type": "disabled"}
                       if model != "claude-sonnet-5-5" else {"type": "between_tools"})
        assert (again.usage.cache_read_input_tokens > 0) is cached, model


@pytest.mark.parametrize("later_blocks,hit", [(19, True), (20, True), (21, False)])
def test_a_breakpoint_looks_back_at_most_20_blocks(client, later_blocks, hit):
    long_text = "Earlier conversation. " * 300
    first = [{"type": "text", "text": long_text, "cache_control": {"type": "ephemeral"}}]
    create(client, model="claude-sonnet-4-6", messages=[{"role": "user", "content": first}])
    grown = [{"type": "text", "text": long_text},
             *({"type": "text", "text": f"note {i}"} for i in range(later_blocks - 1)),
             {"type": "text", "text": "last", "cache_control": {"type": "ephemeral"}}]
    usage = create(client, model="claude-sonnet-4-6",
                   messages=[{"role": "user", "content": grown}]).usage
    assert (usage.cache_read_input_tokens > 0) is hit


@pytest.mark.parametrize("kind,error", [
    ("401", anthropic.AuthenticationError), ("403", anthropic.PermissionDeniedError),
    ("404", anthropic.NotFoundError), ("413", anthropic.APIStatusError),
])
def test_non_retryable_status_faults(make_client, arm_fault, request_log, kind, error):
    arm_fault(kind, count=3)
    with pytest.raises(error) as caught:
        create(make_client(max_retries=2))
    assert caught.value.status_code == int(kind)
    assert len(request_log()) == 1, "the SDK does not retry these"


def test_empty_end_turn_and_context_window_faults(client, arm_fault):
    arm_fault("empty_end_turn")
    empty = create(client)
    assert (empty.stop_reason, empty.content, empty.usage.output_tokens) == ("end_turn", [], 3)
    arm_fault("context_window")
    cut = create(client)
    assert cut.stop_reason == "model_context_window_exceeded"
