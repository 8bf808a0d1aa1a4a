"""The offline model's part of the trust loop, over HTTP through the SDK: it runs an
offered verified query when it is similar enough (else plans its own), and asks back,
with options that answer, when a "delay" has no direction."""
from __future__ import annotations

import json

from worker.agent.verified_queries import Retrieved, Verified, VerifiedContext
from worker.answer.extraction import extract_answer

VERIFIED_SQL = "SELECT carrier, avg(arr_delay) AS worst FROM flights GROUP BY 1 ORDER BY 2 DESC LIMIT 1"


def _offered(question: str, similarity: float) -> str:
    known = Verified("vq-1", "Which carrier had the worst arrival delay?", VERIFIED_SQL)
    return VerifiedContext([known], [Retrieved(known, similarity)]).turn_text(question)


def test_a_close_verified_query_is_run_as_is(client, analyst_request):
    call = client.messages.create(**analyst_request(
        [{"role": "user", "content": _offered("Which airline lands latest?", 0.82)}]))
    assert call.stop_reason == "tool_use"
    assert call.content[-1].input == {"sql": VERIFIED_SQL}


def test_a_distant_one_is_ignored_and_the_question_planned_without_the_block(
        client, analyst_request):
    call = client.messages.create(**analyst_request(
        [{"role": "user", "content": _offered("How many flights are there?", 0.5)}]))
    assert call.stop_reason == "tool_use"
    sql = call.content[-1].input["sql"]
    assert sql != VERIFIED_SQL and "count(*)" in sql.lower()


def test_a_bare_delay_is_asked_back_and_each_option_plans(client, analyst_request):
    reply = client.messages.create(**analyst_request(
        [{"role": "user", "content": "What is the average delay by carrier?"}]))
    assert reply.stop_reason == "end_turn"
    answer = json.loads(reply.content[0].text)
    extracted = extract_answer(reply.content[0].text)
    assert extracted.clarify == answer["clarify"]
    assert answer["clarify"]["options"] == ["What is the average departure delay by carrier?",
                                            "What is the average arrival delay by carrier?"]
    for option, column in zip(answer["clarify"]["options"], ("dep_delay", "arr_delay")):
        call = client.messages.create(**analyst_request([{"role": "user", "content": option}]))
        assert call.stop_reason == "tool_use" and column in call.content[-1].input["sql"]


def test_a_directed_delay_is_not_asked_back(client, analyst_request):
    call = client.messages.create(**analyst_request(
        [{"role": "user", "content": "What is the average departure delay by carrier?"}]))
    assert call.stop_reason == "tool_use"


def test_a_malformed_clarify_is_ignored_not_fatal():
    for clarify in ({"question": "Which?", "options": ["only one"]}, {"options": ["a", "b"]},
                    "text", {"question": "Which?", "options": ["a", 3]}):
        answer = extract_answer(json.dumps({"answerText": "Hm.", "clarify": clarify}))
        assert answer.answer_text == "Hm." and answer.clarify is None
    kept = extract_answer(json.dumps({"answerText": "Which?", "clarify": {
        "question": "Which?", "options": [" a ", "a", "b"]}}))
    assert kept.clarify == {"question": "Which?", "options": ["a", "b"]}
