"""Fixtures for batch tests: question sets the offline model answers with charts,
and bounded waits on a batch through the API; usage figures for report documents."""
from __future__ import annotations

import time

import pytest

# Each maps to one aggregate query in the offline model's demo analyst, most with a chart.
CHART_QUESTIONS = [
    "How many flights did each carrier fly?",
    "What is the average departure delay by month?",
    "Top 5 destinations by number of flights",
    "Average arrival delay per carrier",
    "Total distance flown by each carrier",
    "How many flights per origin?",
    "Average air time by destination",
    "Maximum departure delay by carrier",
    "Monthly flight counts",
    "Which airline has the most flights?",
    "Average temperature by month",
    "Average wind speed per origin",
    "How many planes per manufacturer?",
    "Average seats by manufacturer",
    "Top 10 busiest destinations",
    "Average distance by origin",
    "How many flights per hour?",
    "Average arrival delay by month",
    "Total air time by carrier",
    "Number of flights by day",
    "Average precipitation by month",
    "Average visibility per origin",
    "How many planes by year?",
    "Minimum air time by carrier",
    "Maximum distance by origin",
    "Top 3 carriers",
    "Average dep delay by hour",
]
# Each usage figure of a job at 1: for report documents built from jobs that never ran.
UNIT_USAGE = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens",
                            "cache_creation_tokens", "total_effective_input", "context_tokens",
                            "tool_rounds", "sql_executed", "sql_cache_hits", "llm_ms", "sql_ms",
                            "wall_ms"), 1)


def chart_questions(count: int) -> list[str]:
    """``count`` distinct questions (templates, then "Top N destinations" variants)."""
    questions = list(CHART_QUESTIONS[:count])
    n = 2
    while len(questions) < count:
        questions.append(f"Top {n} busiest destinations")
        n += 1
    return questions


def wait_for_batch(client, headers, batch_id: str, *, timeout: float = 90.0) -> dict:
    """Poll GET /v1/batches/{id} until it is completed; fails after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        view = client.get(f"/v1/batches/{batch_id}", headers=headers).get_json()
        if view.get("status") == "completed":
            return view
        if time.monotonic() > deadline:
            raise AssertionError(f"batch {batch_id} not completed within {timeout} s: {view}")
        time.sleep(0.25)


@pytest.fixture
def refusal(fake_llm) -> str:
    """A question marker that makes the offline model refuse: that job fails."""
    return fake_llm.scenario("refuse-batch", [{"stop_reason": "refusal", "text": "No."}])
