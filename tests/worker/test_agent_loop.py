"""The agent loop against the offline model over HTTP, real DuckDB and real MariaDB.

Each behaviour of the reference system is pinned by what the offline model's request
log shows was sent, and by what the job row records.
"""
from __future__ import annotations

import itertools
import json

import pytest

from shared.events import EventLog, id_order
from shared.redis_client import redis_for
from tests.utils.jobs import (
    create_job,
    entries_with,
    job_view,
    llm_calls,
    marker,
    requests_with,
    tool_calls,
)

BY_CARRIER = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"


def answer(text: str, charts: list | None = None) -> str:
    return json.dumps({"answerText": text, "charts": charts or []})


def bar(query_id: int = 1, x: str = "carrier", y: str = "flights") -> dict:
    return {"type": "bar", "title": "Flights by carrier", "query_id": query_id, "x": x,
            "y": [y], "series": None}


def run(runner, settings, question: str, **kw) -> dict:
    job_id, _ = create_job(settings, question, **kw)
    runner.run(job_id)
    return job_view(settings, job_id)


def test_system_prompt_and_tools_are_byte_identical_across_questions(runner, settings, fake_llm):
    tag1, tag2 = marker(), marker()
    run(runner, settings, f"How many flights did each carrier fly? {tag1}")
    run(runner, settings, f"What is the average departure delay by origin? {tag2}")
    first, second = requests_with(fake_llm, tag1)[0], requests_with(fake_llm, tag2)[0]
    assert json.dumps(first["system"]) == json.dumps(second["system"])
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    system = first["system"]
    assert len(system) == 1 and system[0]["cache_control"] == {"type": "ephemeral"}
    assert [t["name"] for t in first["tools"]] == ["execute_sql"]


def test_system_prompt_holds_the_full_schema_and_only_the_date(runner, settings):
    import datetime as dt
    import re

    prompt = runner.data.builtin.system_prompt()
    columns = runner.data.builtin.sandbox.run(
        "SELECT table_name, column_name FROM information_schema.columns").rows
    assert len(columns) > 50
    for table, column in columns:
        assert re.search(rf"CREATE TABLE {table} \([^)]*\b{column}\b", prompt), (table, column)
    assert f"Today's date: {dt.date.today().isoformat()}" in prompt
    assert not re.search(r"\d{2}:\d{2}", prompt), "no time of day, ever"


def test_a_new_day_or_a_schema_change_changes_the_prompt(settings, tmp_path):
    import datetime as dt

    import duckdb

    from engine.sql.sandbox import SqlSandbox
    from worker.jobs.data_source import BuiltInDataset

    day1 = BuiltInDataset(settings, today=lambda: dt.date(2026, 1, 1)).system_prompt()
    day1_again = BuiltInDataset(settings, today=lambda: dt.date(2026, 1, 1)).system_prompt()
    day2 = BuiltInDataset(settings, today=lambda: dt.date(2026, 1, 2)).system_prompt()
    assert day1 == day1_again and day1 != day2
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE sales (id INTEGER, amount DOUBLE)")
    sandbox = SqlSandbox(other)
    try:
        changed = BuiltInDataset(settings, sandbox=sandbox,
                                 today=lambda: dt.date(2026, 1, 1)).system_prompt()
    finally:
        sandbox.close()
    assert changed != day1 and "CREATE TABLE sales (id INTEGER, amount DOUBLE);" in changed


def test_history_is_role_and_final_text_only(runner, settings, fake_llm):
    tag = marker()
    first = run(runner, settings, f"How many flights did each carrier fly? {tag}")
    assert first["status"] == "succeeded"
    second_tag = marker()
    run(runner, settings, f"And by origin? {second_tag}", conversation_id=first["conversation_id"])
    request = requests_with(fake_llm, second_tag)[0]
    messages = request["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert tag in json.dumps(messages[0]["content"])
    assert _text(messages[1]) == first["result"]["answer_text"]
    assert "tool_use" not in json.dumps(messages[:2]) and "tool_result" not in json.dumps(messages[:2])


def test_history_is_capped_by_config(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    capped = JobRunner(settings.model_copy(update={"history_turns": 1}))
    conversation = None
    tags = [marker() for _ in range(3)]
    for tag in tags:
        job = run(capped, settings, f"How many flights? {tag}", conversation_id=conversation)
        conversation = job["conversation_id"]
    last = requests_with(fake_llm, tags[-1])[0]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert tags[1] in json.dumps(last[0]) and tags[0] not in json.dumps(last)


def test_all_tool_uses_run_in_order_and_return_in_one_message(runner, settings, fake_llm):
    tag = marker()
    scenario = fake_llm.scenario("two-tools", [
        {"tool_calls": [{"sql": "SELECT count(*) AS n FROM airlines"},
                        {"sql": "SELECT count(*) AS n FROM airports"}]},
        {"text": answer("16 airlines and many airports.")},
    ])
    job = run(runner, settings, f"{scenario} counts {tag}")
    assert job["status"] == "succeeded", job
    second = requests_with(fake_llm, tag)[1]["messages"]
    tool_use = [b for b in second[-2]["content"] if b["type"] == "tool_use"]
    results = second[-1]["content"]
    assert second[-1]["role"] == "user" and len(results) == 2
    assert [r["tool_use_id"] for r in results] == [b["id"] for b in tool_use]
    assert results[0]["content"].startswith("query_id=1 rows=1 shown=1\nn\n16")
    assert results[1]["content"].startswith("query_id=2 ")
    assert [t.query_id for t in tool_calls(settings, job["job_id"])] == [1, 2]


def test_pause_turn_is_sent_back_and_the_loop_continues(runner, settings, fake_llm):
    tag = marker()
    scenario = fake_llm.scenario("pause", [
        {"stop_reason": "pause_turn", "text": "Still thinking"},
        {"text": answer("Done after a pause.")},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded" and job["result"]["answer_text"] == "Done after a pause."
    second = requests_with(fake_llm, tag)[1]["messages"]
    assert second[-1]["role"] == "assistant" and _text(second[-1]) == "Still thinking"


def test_round_limit_fails_the_job_with_tool_round_limit(settings, fake_llm):
    from worker.jobs.runner import JobRunner

    limited = JobRunner(settings.model_copy(update={"max_tool_rounds": 2}))
    scenario = fake_llm.scenario("forever", [
        {"tool_calls": [{"sql": f"SELECT {i} AS n"}]} for i in range(5)])
    job = run(limited, settings, f"{scenario} {marker()}")
    assert job["status"] == "failed" and job["error"]["code"] == "tool_round_limit"
    assert job["usage"]["tool_rounds"] == 2


def test_repeated_sql_is_served_from_the_per_job_cache(runner, settings, fake_llm):
    tag = marker()
    scenario = fake_llm.scenario("repeat", [
        {"tool_calls": [{"sql": BY_CARRIER}]},
        {"tool_calls": [{"sql": f"  {BY_CARRIER}\n"}]},
        {"text": answer("UA flew most. {{chart:0}}", [bar()])},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded", job
    assert job["usage"]["sql_executed"] == 1 and job["usage"]["sql_cache_hits"] == 1
    requests = requests_with(fake_llm, tag)
    first_result = requests[1]["messages"][-1]["content"][0]["content"]
    second_result = requests[2]["messages"][-1]["content"][0]["content"]
    assert first_result == second_result and first_result.startswith("query_id=1 ")
    calls = tool_calls(settings, job["job_id"])
    assert [c.cached for c in calls] == [False, True]
    # A new job starts with an empty cache.
    again = run(runner, settings, f"{scenario} {marker()}")
    assert again["usage"]["sql_executed"] == 1 and again["usage"]["sql_cache_hits"] == 1


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_csv('/etc/passwd')",
    "COPY flights TO '/tmp/sunrise-leak.csv'",
    "ATTACH '/tmp/x.duckdb' AS x",
    "INSTALL httpfs",
    "DELETE FROM flights",
    "SELECT 1; SELECT 2",
    "WITH x AS (DELETE FROM flights RETURNING *) SELECT count(*) FROM x",
])
def test_refused_sql_goes_back_as_an_error_and_the_job_continues(runner, settings, fake_llm, sql):
    tag = marker()
    scenario = fake_llm.scenario(f"hostile-{abs(hash(sql))}", [
        {"tool_calls": [{"sql": sql}]},
        {"text": answer("That query was refused, so I could not answer.")},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded"
    result = requests_with(fake_llm, tag)[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and result["content"].startswith("error: ")


def test_large_results_send_25_rows_and_a_summary_over_all_rows(runner, settings, fake_llm):
    tag = marker()
    sql = "SELECT tailnum, count(*) AS flights, sum(distance) AS miles FROM flights GROUP BY 1"
    scenario = fake_llm.scenario("large", [{"tool_calls": [{"sql": sql}]},
                                           {"text": answer("Many planes.")}])
    run(runner, settings, f"{scenario} {tag}")
    text = requests_with(fake_llm, tag)[1]["messages"][-1]["content"][0]["content"]
    head, _, summary = text.partition("\n\n")
    lines = head.splitlines()
    assert lines[0].startswith("query_id=1 rows=") and lines[0].endswith(" shown=25")
    assert lines[1] == "tailnum,flights,miles" and len(lines) == 2 + 25
    total = int(lines[0].split()[1].removeprefix("rows="))
    summary_lines = summary.splitlines()
    assert summary_lines[0] == f"summary over all {total} rows"
    assert summary_lines[1] == "column,count,total,min,max,avg"
    flights_row = next(r for r in summary_lines if r.startswith("flights,"))
    assert flights_row.split(",")[2] == "336776"


@pytest.mark.parametrize("fault,path", [
    ("prose_before_json", "anchored"),
    ("fenced_json", "fenced"),
    ("no_json", "raw"),
])
def test_answer_recovery_paths_are_recorded(runner, settings, fake_llm, fault, path):
    fake_llm.fault(fault, count=1)
    job = run(runner, settings, f"How many flights did each carrier fly? {marker()}")
    assert job["status"] == "succeeded"
    assert job["result"]["parse_path"] == path
    assert job["result"]["answer_text"].strip()


def test_max_tokens_gives_the_canned_truncated_answer(runner, settings, fake_llm):
    scenario = fake_llm.scenario("cut", [{"stop_reason": "max_tokens",
                                          "text": '{"answerText": "This will never end'}])
    job = run(runner, settings, f"{scenario} {marker()}")
    result = job["result"]
    assert job["status"] == "succeeded"
    assert result["parse_path"] == "truncated" and result["truncated"] is True
    assert "narrower" in result["answer_text"] and "never end" not in result["answer_text"]


def test_charts_carry_real_rows_and_bad_charts_are_dropped(runner, settings, fake_llm):
    scenario = fake_llm.scenario("charts", [
        {"tool_calls": [{"sql": BY_CARRIER}]},
        {"text": answer("Bad {{chart:0}} good {{chart:1}} also bad {{chart:2}}",
                        [bar(query_id=7), bar(), bar(y="no_such_column")])},
    ])
    job = run(runner, settings, f"{scenario} {marker()}")
    result = job["result"]
    assert result["answer_text"] == "Bad  good {{chart:0}} also bad " or \
        ("{{chart:0}}" in result["answer_text"] and "{{chart:1}}" not in result["answer_text"])
    (chart,) = result["charts"]
    expected = runner.data.builtin.sandbox.run(BY_CARRIER).rows
    assert [(r["carrier"], r["flights"]) for r in chart["data"]] == [tuple(r) for r in expected]
    assert chart["vega_lite"]["$schema"].endswith("/v5.json")


def test_job_usage_equals_the_sum_of_what_the_api_reported(runner, settings, fake_llm):
    tag = marker()
    job = run(runner, settings, f"How many flights did each carrier fly? {tag}")
    reported = [e["usage"] for e in entries_with(fake_llm, tag)]
    usage = job["usage"]
    assert len(reported) == 2
    assert usage["input_tokens"] == sum(r["input_tokens"] for r in reported)
    assert usage["output_tokens"] == sum(r["output_tokens"] for r in reported)
    assert usage["cache_read_tokens"] == sum(r["cache_read_input_tokens"] for r in reported)
    assert usage["cache_creation_tokens"] == sum(r["cache_creation_input_tokens"] for r in reported)
    assert usage["total_effective_input"] == usage["input_tokens"] + usage["cache_read_tokens"]
    assert usage["context_tokens"] == (usage["input_tokens"] + usage["cache_read_tokens"]
                                       + usage["cache_creation_tokens"])
    calls = llm_calls(settings, job["job_id"])
    assert sum(c.input_tokens for c in calls) == usage["input_tokens"]
    assert abs(sum(float(c.cost_usd) for c in calls) - usage["cost_usd"]) < 1e-6
    assert usage["cost_usd"] > 0 and usage["llm_ms"] >= 0 and usage["wall_ms"] >= usage["llm_ms"]


def test_the_second_question_reads_the_cached_prefix(runner, settings, fake_llm):
    run(runner, settings, f"How many flights did each carrier fly? {marker()}")
    tag = marker()
    run(runner, settings, f"How many flights did each carrier fly? {tag}")
    first_call = entries_with(fake_llm, tag)[0]["usage"]
    assert first_call["cache_read_input_tokens"] > 1000


def test_rate_limits_are_retried_by_the_sdk(runner, settings, fake_llm):
    tag = marker()
    fake_llm.fault("529", count=1, retry_after=0)
    fake_llm.fault("429", count=1, retry_after=0)
    job = run(runner, settings, f"How many flights did each carrier fly? {tag}")
    assert job["status"] == "succeeded"
    statuses = [e["status"] for e in entries_with(fake_llm, tag)]
    assert statuses[:3] == [529, 429, 200]


def test_exhausted_retries_fail_with_llm_unavailable(runner, settings, fake_llm):
    fake_llm.fault("529", count=10, retry_after=0)
    job = run(runner, settings, f"How many flights? {marker()}")
    assert job["status"] == "failed" and job["error"]["code"] == "llm_unavailable"
    assert "try again" in job["error"]["message"]


def test_a_refusal_is_a_clear_failure(runner, settings, fake_llm):
    scenario = fake_llm.scenario("refuse", [{"stop_reason": "refusal", "text": ""}])
    job = run(runner, settings, f"{scenario} {marker()}")
    assert job["status"] == "failed" and job["error"]["code"] == "refused"


def _text(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b["type"] == "text")


@pytest.mark.timeout(60)
def test_a_huge_error_message_is_cut_for_the_model_and_the_job_goes_on(runner, settings,
                                                                        fake_llm):
    from shared.text_limits import ERROR_CHARS

    tag = marker()
    scenario = fake_llm.scenario("huge-error", [
        {"tool_calls": [{"sql": "SELECT error(repeat('x', 100000))"}]},
        {"text": answer("The query failed.")},
    ])
    job = run(runner, settings, f"{scenario} {tag}")
    assert job["status"] == "succeeded", job
    result = requests_with(fake_llm, tag)[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True
    assert ERROR_CHARS < len(result["content"]) < ERROR_CHARS + 100
    assert result["content"].endswith("more characters cut]")
    (stored,) = tool_calls(settings, job["job_id"])
    assert stored.is_error and stored.error == result["content"].removeprefix("error: ")


def test_a_slow_models_answer_grows_once_a_period_and_ends_whole(runner, settings, fake_llm):
    """While the model writes, the answer text leaves at most once per
    SUNRISE_EVENT_FLUSH_MS, each time all of it so far; its last words arrive with the
    end at the latest, and the terminal event is last."""
    text = " ".join(f"word{i}" for i in range(150))
    tag = fake_llm.scenario("paced-answer", [
        {"tool_calls": [{"sql": "SELECT count(*) AS n FROM flights"}]},
        {"thinking": "Enough.", "text": answer(text)},
    ])
    fake_llm.latency(1200)  # spread over the reply's deltas, as a real model writes
    job_id, _ = create_job(settings, f"{tag} count them")
    runner.run(job_id)
    events = EventLog(redis_for(settings.redis_url)).read(job_id)
    deltas = [e for e in events if e.event == "answer_delta"]
    texts = [e.data["text"] for e in deltas]
    assert len(texts) >= 3, texts
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(texts))
    assert texts[-1] == text
    # The last may ride with the end, which waits for no period.
    sent_ms = [id_order(e.id)[0] for e in deltas[:-1]]
    gaps = [b - a for a, b in itertools.pairwise(sent_ms)]
    assert all(gap >= settings.event_flush_ms * 0.9 for gap in gaps), sent_ms
    assert events[-1].event == "succeeded"
    assert events[-1].data["result"]["answer_text"] == text
