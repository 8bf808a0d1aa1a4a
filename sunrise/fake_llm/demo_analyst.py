"""The default policy: a small, honest analyst over the schema in the system prompt.

For the current question (latest plain-text user message):
- no tool result since it -> a short text plus one `execute_sql` tool call whose
  SQL `question_sql.plan_query` derives from the schema (stop `tool_use`);
- a tool result since it -> the final answer (stop `end_turn`), ONLY a JSON object
  `{"answerText": ..., "charts": [...]}` built from the latest result's rows: it
  names the top row and its value, places `{{chart:0}}`, and says it comes from
  Sunrise's offline demo model. A one-row, one-value result gets no chart; an
  `error: ...` result gets an answer explaining the failure;
- a question it cannot map (or no `execute_sql` tool offered) -> a JSON answer
  saying so, without a tool call;
- verified queries appended to the question (`verified_block.py`): the most similar
  one's SQL is run as is when it is similar enough, instead of a planned query;
- an ambiguous question (`clarify.py`) -> a JSON answer with `clarify` and options,
  without a tool call.
The policy is a pure function of the request: it parses the system prompt and
plans the question on every call and memoizes nothing, so each call costs the
same whatever the server's configuration (benchmarks rely on that).
"""

from __future__ import annotations

import json

from sunrise.fake_llm.clarify import clarification
from sunrise.fake_llm.conversation import ToolResult, current_turn, system_text
from sunrise.fake_llm.question_sql import plan_query
from sunrise.fake_llm.reply import SQL_TOOL, Reply, text_reply, tool_reply
from sunrise.fake_llm.schema_prompt import parse_schema
from sunrise.fake_llm.tool_result_text import (
    QueryResult,
    as_number,
    error_message,
    parse_tool_result,
)
from sunrise.fake_llm.verified_block import adopted_sql, split_question

DISCLAIMER = (
    "This answer comes from Sunrise's offline demo model, a test double that turns "
    "simple questions into SQL; it is not Claude."
)
TIME_AXES = {"month", "year", "day", "hour", "week", "date", "time_hour"}


def _answer(text: str, charts: list[dict] | None = None) -> Reply:
    return text_reply(json.dumps({"answerText": text, "charts": charts or []}, ensure_ascii=False))


def _cannot_answer(reason: str) -> Reply:
    return _answer(
        f"Sunrise's offline demo model could not answer this question: {reason} It understands "
        "simple counts, totals, averages and rankings over the tables in the schema. " + DISCLAIMER
    )


def demo_analyst_reply(body: dict) -> Reply:
    """The demo analyst's reply to a validated Messages API request body."""
    messages = body["messages"]
    schema = parse_schema(system_text(body.get("system")))
    turn = current_turn(messages)
    question, offers = split_question(turn.question) if turn else ("", [])
    # Planned even when the reply will be an answer, so every call does the same work.
    plan = plan_query(question, schema) if turn else None
    verified_sql = adopted_sql(offers)
    if turn is None:
        return _cannot_answer("there is no question in the conversation.")
    if turn.tool_results:
        return _answer_from(turn.tool_results[-1])
    offered = {tool.get("name") for tool in body.get("tools") or []}
    if SQL_TOOL not in offered:
        return _cannot_answer(f"no `{SQL_TOOL}` tool was offered.")
    if not schema.tables:
        return _cannot_answer("the system prompt holds no CREATE TABLE schema.")
    if verified_sql is not None:
        return tool_reply("I'll run the verified query for this question.",
                          [(SQL_TOOL, {"sql": verified_sql})])
    ask = clarification(question, schema)
    if ask is not None:
        return text_reply(json.dumps({"answerText": ask["question"], "charts": [],
                                      "clarify": ask}, ensure_ascii=False))
    if plan is None:
        return _cannot_answer("it could not map the question to the tables and columns it knows.")
    return tool_reply(
        f"I'll query the {plan.table} table for the {plan.description}.",
        [(SQL_TOOL, {"sql": plan.sql})],
    )


def _answer_from(result: ToolResult) -> Reply:
    failure = error_message(result.text)
    if result.is_error or failure is not None:
        return _answer(
            f"The query failed, so I cannot answer this question: {failure or result.text.strip()}. "
            + DISCLAIMER
        )
    parsed = parse_tool_result(result.text)
    if parsed is None:
        return _answer("I could not read the query result, so I cannot answer. " + DISCLAIMER)
    if not parsed.rows:
        return _answer("The query returned no rows, so there is nothing to report. " + DISCLAIMER)
    if len(parsed.rows) == 1 and len(parsed.header) == 1:
        value = parsed.rows[0][0] if parsed.rows[0] else ""
        return _answer(f"The answer is {value} ({parsed.header[0]}). " + DISCLAIMER)
    if len(parsed.rows) == 1:
        pairs = ", ".join(
            f"{name} = {parsed.value(parsed.rows[0], name)}" for name in parsed.header
        )
        return _answer(f"The query returned one row: {pairs}. " + DISCLAIMER)
    return _chart_answer(parsed)


def _chart_answer(result: QueryResult) -> Reply:
    x = result.header[0]
    y = [name for name in result.numeric_columns() if name != x]
    if not y:
        chart = {
            "type": "table",
            "title": f"Rows by {x}",
            "query_id": result.query_id,
            "x": x,
            "y": result.header[1:],
            "series": None,
        }
        text = f"The query returned {result.total_rows} rows. {{{{chart:0}}}}\n\n{DISCLAIMER}"
        return _answer(text, [chart])
    measure = y[0]
    top = max(result.rows, key=lambda row: as_number(result.value(row, measure)))
    top_x, top_value = result.value(top, x), result.value(top, measure)
    over_time = x.lower() in TIME_AXES or "month" in x.lower()
    label = measure.replace("_", " ")
    if over_time:
        lead = f"{label.capitalize()} by {x} peaks at {top_value} in {x} {top_x}"
    else:
        lead = f"{top_x} has the highest {label}, at {top_value}"
    shown = (
        "" if len(result.rows) == result.total_rows else f", showing the first {len(result.rows)}"
    )
    text = (
        f"{lead} (query {result.query_id}: {result.total_rows} rows{shown}). "
        f"{{{{chart:0}}}}\n\n{DISCLAIMER}"
    )
    chart = {
        "type": "line" if over_time else "bar",
        "title": f"{label.capitalize()} by {x.replace('_', ' ')}",
        "query_id": result.query_id,
        "x": x,
        "y": [measure],
        "series": None,
    }
    return _answer(text, [chart])
