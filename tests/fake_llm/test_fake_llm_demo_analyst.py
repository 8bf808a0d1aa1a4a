"""The default demo-analyst policy: question -> SQL tool call -> JSON answer with a chart.

SQL is executed for real in an in-memory DuckDB holding the prompt's schema.
"""

from __future__ import annotations

import json

import pytest

QUESTIONS = [
    "How many flights are there?",
    "How many flights did each carrier fly?",
    "How many carriers are there?",
    "How many airlines are there?",
    "What is the average departure delay by carrier?",
    "Average arrival delay per month",
    "Total distance by origin airport",
    "What are the top 2 destinations by number of flights?",
    "Which airline has the most flights?",
    "Show the monthly trend of flights",
    "What is the longest flight distance?",
]


def _tool_loop(client, analyst_request, run_sql_tool, question: str, query_id: int = 3):
    first = analyst_request([{"role": "user", "content": question}])
    call = client.messages.create(**first)
    assert call.stop_reason == "tool_use"
    text, tool_use = call.content
    assert text.type == "text" and tool_use.name == "execute_sql"
    result = {
        "type": "tool_result",
        "tool_use_id": tool_use.id,
        "content": run_sql_tool(tool_use.input["sql"], query_id),
    }
    answer = client.messages.create(
        **analyst_request(
            [
                *first["messages"],
                {"role": "assistant", "content": call.content},
                {"role": "user", "content": [result]},
            ]
        )
    )
    assert answer.stop_reason == "end_turn" and len(answer.content) == 1
    return tool_use.input["sql"], json.loads(answer.content[0].text)


@pytest.mark.parametrize("question", QUESTIONS)
def test_questions_become_sql_that_runs_and_json_answers(
    client, analyst_request, run_sql_tool, question
):
    _sql, answer = _tool_loop(client, analyst_request, run_sql_tool, question)
    assert set(answer) == {"answerText", "charts"}
    assert "offline demo model" in answer["answerText"]
    for chart in answer["charts"]:
        assert chart["query_id"] == 3 and "{{chart:0}}" in answer["answerText"]


def test_grouped_count_answer_names_the_top_row_and_binds_the_chart(
    client, analyst_request, run_sql_tool
):
    sql, answer = _tool_loop(
        client, analyst_request, run_sql_tool, "How many flights did each carrier fly?"
    )
    assert sql == "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"
    assert answer["charts"] == [
        {
            "type": "bar",
            "title": "Flights by carrier",
            "query_id": 3,
            "x": "carrier",
            "y": ["flights"],
            "series": None,
        }
    ]
    assert "UA has the highest flights, at 3" in answer["answerText"]


def test_trend_is_a_line_chart_ordered_by_month(client, analyst_request, run_sql_tool):
    sql, answer = _tool_loop(
        client, analyst_request, run_sql_tool, "Average departure delay per month"
    )
    assert sql.endswith("GROUP BY 1 ORDER BY 1") and "avg(dep_delay)" in sql
    assert answer["charts"][0]["type"] == "line" and answer["charts"][0]["x"] == "month"
    assert "peaks at 13.5 in month 2" in answer["answerText"]


def test_single_value_answer_has_no_chart(client, analyst_request, run_sql_tool):
    sql, answer = _tool_loop(client, analyst_request, run_sql_tool, "How many flights are there?")
    assert sql == "SELECT count(*) AS n FROM flights"
    assert answer["charts"] == [] and "The answer is 6" in answer["answerText"]


def test_sql_error_result_gets_an_explaining_answer(client, analyst_request):
    first = analyst_request([{"role": "user", "content": "How many flights are there?"}])
    call = client.messages.create(**first)
    error = {
        "type": "tool_result",
        "tool_use_id": call.content[-1].id,
        "is_error": True,
        "content": "error: Catalog Error: Table with name flights does not exist!",
    }
    answer = client.messages.create(
        **analyst_request(
            [
                *first["messages"],
                {"role": "assistant", "content": call.content},
                {"role": "user", "content": [error]},
            ]
        )
    )
    parsed = json.loads(answer.content[0].text)
    assert (
        "Table with name flights does not exist" in parsed["answerText"] and parsed["charts"] == []
    )


def test_unmappable_question_gets_an_honest_answer_without_a_tool_call(client, analyst_request):
    reply = client.messages.create(
        **analyst_request([{"role": "user", "content": "Tell me a joke"}])
    )
    assert reply.stop_reason == "end_turn" and [b.type for b in reply.content] == ["text"]
    assert "could not answer this question" in json.loads(reply.content[0].text)["answerText"]


def test_prior_turns_do_not_confuse_the_current_question(client, analyst_request):
    reply = client.messages.create(
        **analyst_request(
            [
                {"role": "user", "content": "How many airlines are there?"},
                {"role": "assistant", "content": '{"answerText": "3", "charts": []}'},
                {"role": "user", "content": "Total distance by origin"},
            ]
        )
    )
    assert reply.content[-1].input["sql"].startswith("SELECT origin, sum(distance)")


def test_summary_block_after_25_rows_is_ignored(client, analyst_request):
    first = analyst_request([{"role": "user", "content": "How many flights did each carrier fly?"}])
    call = client.messages.create(**first)
    rows = "\n".join(f"C{i},{100 - i}" for i in range(25))
    text = (
        f"query_id=7 rows=40 shown=25\ncarrier,flights\n{rows}\n\n"
        "summary over all 40 rows\ncolumn,count,total,min,max,avg\nflights,40,3000,1,100,75"
    )
    result = {
        "type": "tool_result",
        "tool_use_id": call.content[-1].id,
        "content": [{"type": "text", "text": text}],
    }
    answer = json.loads(
        client.messages.create(
            **analyst_request(
                [
                    *first["messages"],
                    {"role": "assistant", "content": call.content},
                    {"role": "user", "content": [result]},
                ]
            )
        )
        .content[0]
        .text
    )
    assert answer["charts"][0]["query_id"] == 7
    assert "C0 has the highest flights, at 100" in answer["answerText"]
    assert "40 rows, showing the first 25" in answer["answerText"]


@pytest.mark.parametrize(("question", "sql"), [
    ("Which carrier flew the most flights?",
     "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC LIMIT 1"),
    ("Which origin has the fewest flights?",
     "SELECT origin, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 LIMIT 1"),
    ("Which carrier has the lowest average departure delay?",
     "SELECT carrier, round(avg(dep_delay), 2) AS avg_dep_delay FROM flights GROUP BY 1 "
     "ORDER BY 2 LIMIT 1"),
    # A plural asks for several rows: the whole ranking.
    ("Which origins have the most flights?",
     "SELECT origin, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"),
])
def test_which_questions_ask_for_one_row(question, sql):
    import datetime as dt

    from sunrise.fake_llm.question_sql import plan_query
    from sunrise.fake_llm.schema_prompt import parse_schema
    from worker.agent.system_prompt import build_system_prompt

    prompt = build_system_prompt([("flights", [("carrier", "VARCHAR"), ("origin", "VARCHAR"),
                                               ("dep_delay", "DOUBLE")])], dt.date(2026, 1, 1))
    assert plan_query(question, parse_schema(prompt)).sql == sql
