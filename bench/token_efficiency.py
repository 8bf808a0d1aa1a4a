"""Figure 5, token efficiency: billed-equivalent input tokens per question, shipped
configuration ÷ a naive one, with the ablation of each saving alone.

22 fixed questions about the sample data run through the real agent loop and the
real SDK against the offline model, which is scripted to issue the same SQL and the
same final answer for a question in every configuration: only what Sunrise sends
changes. Billed-equivalent input = input + 1.25 × cache writes + 0.1 × cache reads,
summed over a question's calls. Each configuration gets its own offline-model
instance, so every one starts with a cold prompt cache, and asks the questions in
the same order, each as a new conversation.
"""
from __future__ import annotations

import datetime as dt
import json
import logging

from bench.figures import result, row
from bench.stack import SAMPLE_DUCKDB
from engine.sql.sandbox import SqlSandbox, sandbox_settings
from shared.config import Settings
from sunrise.fake_llm.server import run_in_thread
from worker.agent.loop import AgentLoop
from worker.agent.system_prompt import build_system_prompt
from worker.agent.turn import SilentHooks
from worker.llm.client import make_client

logger = logging.getLogger(__name__)

TARGET = 5.0
ALL_ROWS = {"tool_result_max_rows": 0, "chart_row_limit": 1_000_000}
NO_CACHE = {"system_cache": False, "cache_messages": False}
CONFIGS: dict[str, dict] = {
    "shipped (CSV, 25 rows + summary, prompt caching)": {},
    "naive (JSON, all rows, no cache_control)": {"tool_result_format": "json", **ALL_ROWS,
                                                 **NO_CACHE},
    "CSV alone": {"tool_result_format": "csv", **ALL_ROWS, **NO_CACHE},
    "25-row summary alone": {"tool_result_format": "json", **NO_CACHE},
    "caching alone": {"tool_result_format": "json", **ALL_ROWS},
}
SHIPPED, NAIVE = list(CONFIGS)[:2]

QUESTIONS: list[tuple[str, str]] = [
    ("How many flights did each carrier fly?",
     "SELECT carrier, count(*) AS flights FROM flights GROUP BY carrier ORDER BY flights DESC"),
    ("Which airline has the longest average departure delay?",
     ("SELECT a.name, round(avg(f.dep_delay), 2) AS avg_dep_delay FROM flights f "
      "JOIN airlines a USING (carrier) GROUP BY a.name ORDER BY avg_dep_delay DESC")),
    ("How many flights left each NYC airport per month?",
     ("SELECT origin, month, count(*) AS flights FROM flights GROUP BY origin, month "
      "ORDER BY origin, month")),
    ("What are the 10 most common destinations?",
     "SELECT dest, count(*) AS flights FROM flights GROUP BY dest ORDER BY flights DESC LIMIT 10"),
    ("How busy and how late is every destination?",
     ("SELECT dest, count(*) AS flights, round(avg(arr_delay), 2) AS avg_arr_delay FROM flights "
      "GROUP BY dest ORDER BY flights DESC")),
    ("How many flights were there each day of 2013?",
     ("SELECT make_date(year, month, day) AS date, count(*) AS flights FROM flights "
      "GROUP BY 1 ORDER BY 1")),
    ("How does the departure delay change over the hours of the day?",
     ("SELECT hour, round(avg(dep_delay), 2) AS avg_dep_delay, count(*) AS flights "
      "FROM flights GROUP BY hour ORDER BY hour")),
    ("Which planes flew the most, and how far?",
     ("SELECT tailnum, count(*) AS flights, sum(distance) AS miles FROM flights "
      "WHERE tailnum IS NOT NULL GROUP BY tailnum ORDER BY flights DESC")),
    ("Which manufacturers built the most planes in the fleet?",
     ("SELECT manufacturer, count(*) AS planes, round(avg(seats), 1) AS avg_seats FROM planes "
      "GROUP BY manufacturer ORDER BY planes DESC")),
    ("What was the average temperature per month at each airport?",
     ("SELECT origin, month, round(avg(temp), 1) AS avg_temp FROM weather "
      "GROUP BY origin, month ORDER BY origin, month")),
    ("How many flights did each carrier cancel?",
     ("SELECT carrier, count(*) AS cancelled FROM flights WHERE dep_time IS NULL "
      "GROUP BY carrier ORDER BY cancelled DESC")),
    ("What share of flights arrived on time?",
     ("SELECT round(100.0 * count(*) FILTER (WHERE arr_delay <= 0) / count(arr_delay), 1) "
      "AS on_time_pct FROM flights")),
    ("What are the 10 longest routes?",
     ("SELECT origin, dest, max(distance) AS distance FROM flights GROUP BY origin, dest "
      "ORDER BY distance DESC LIMIT 10")),
    ("List every route with its number of flights and average air time.",
     ("SELECT origin, dest, count(*) AS flights, round(avg(air_time), 1) AS avg_air_time "
      "FROM flights GROUP BY origin, dest ORDER BY flights DESC")),
    ("Are departures later when visibility is poor?",
     ("SELECT w.visib, round(avg(f.dep_delay), 2) AS avg_dep_delay, count(*) AS flights "
      "FROM flights f JOIN weather w USING (origin, time_hour) GROUP BY w.visib ORDER BY w.visib")),
    ("Which airports are in the Pacific time zone?",
     "SELECT faa, name, alt FROM airports WHERE tzone = 'America/Los_Angeles' ORDER BY name"),
    ("How many miles did each carrier fly per month?",
     ("SELECT carrier, month, sum(distance) AS miles FROM flights GROUP BY carrier, month "
      "ORDER BY carrier, month")),
    ("In which years were the planes built?",
     ("SELECT year, count(*) AS planes FROM planes WHERE year IS NOT NULL GROUP BY year "
      "ORDER BY year")),
    ("What were the 10 worst days for departure delays?",
     ("SELECT make_date(year, month, day) AS date, round(avg(dep_delay), 2) AS avg_dep_delay "
      "FROM flights GROUP BY 1 ORDER BY 2 DESC LIMIT 10")),
    ("What was the weather at JFK hour by hour on New Year's Day?",
     ("SELECT time_hour, temp, wind_speed, precip FROM weather "
      "WHERE origin = 'JFK' AND month = 1 AND day = 1 ORDER BY time_hour")),
    ("List United's flights to San Francisco in July.",
     ("SELECT day, dep_time, arr_time, flight, tailnum FROM flights "
      "WHERE carrier = 'UA' AND dest = 'SFO' AND month = 7 ORDER BY day, dep_time")),
    ("How many flights were there in 2013?", "SELECT count(*) AS flights FROM flights"),
]


def run(smoke: bool = False, profile: bool = False) -> dict:
    """Billed-equivalent input per question for every configuration (smoke: 3 questions)."""
    questions = QUESTIONS[:3] if smoke else QUESTIONS
    per_question = {name: _run_config(overrides, questions) for name, overrides in CONFIGS.items()}
    naive = per_question[NAIVE]["billed_input_per_question"]
    rows = []
    for name, figures in per_question.items():
        if name == NAIVE:
            continue
        ratio = naive / figures["billed_input_per_question"]
        shipped = name == SHIPPED
        rows.append(row("5 token efficiency",
                        f"billed-equivalent input tokens per question: {name}",
                        f"{figures['billed_input_per_question']:,.0f}", f"{naive:,.0f} (naive)",
                        ratio, f"≥ {TARGET:g}× fewer" if shipped else "ablation",
                        ratio >= TARGET if shipped else None))
    return result("token_efficiency", smoke, rows, questions=len(questions),
                  configurations=per_question)


def _run_config(overrides: dict, questions: list[tuple[str, str]]) -> dict:
    server = run_in_thread(port=0)
    try:
        settings = Settings(duckdb_path=str(SAMPLE_DUCKDB), anthropic_api_key="bench-offline",
                            anthropic_base_url=server.base_url, **overrides)
        sandbox = SqlSandbox(settings.duckdb_path, **sandbox_settings(settings))
        try:
            prompt = build_system_prompt(sandbox.describe_schema(), dt.date.today())
            client = make_client(settings)
            totals = {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "billed": 0.0}
            for index, (question, sql) in enumerate(questions):
                marker = _script(server.state, index, sql)
                loop = AgentLoop(client=client, sandbox=sandbox, settings=settings,
                                 system_prompt=prompt, hooks=SilentHooks())
                outcome = loop.run([], f"{question} {marker}")
                usage = outcome.stats.usage
                totals["input"] += usage.input_tokens
                totals["cache_write"] += usage.cache_creation_tokens
                totals["cache_read"] += usage.cache_read_tokens
                totals["output"] += usage.output_tokens
                totals["billed"] += (usage.input_tokens + 1.25 * usage.cache_creation_tokens
                                     + 0.1 * usage.cache_read_tokens)
        finally:
            sandbox.close()
    finally:
        server.stop()
    count = len(questions)
    return {"billed_input_per_question": round(totals["billed"] / count, 1),
            **{f"{key}_per_question": round(value / count, 1)
               for key, value in totals.items() if key != "billed"}}


def _script(state, index: int, sql: str) -> str:
    """Register question ``index``'s scenario: one SQL call, then a fixed JSON answer."""
    name = f"q{index}"
    answer = {"answerText": f"Here is what query 1 found for question {index + 1}.",
              "charts": []}
    state.scenarios.add(name, [{"text": "Let me query the database.", "tool_calls": [{"sql": sql}]},
                               {"text": json.dumps(answer)}])
    return f"[[scenario:{name}]]"
