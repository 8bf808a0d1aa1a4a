"""Every answer carries its faithfulness check: stored with the job, in the job view, the
terminal event, the conversation history and the worker's metrics."""
from __future__ import annotations

import json
import uuid

from prometheus_client import CollectorRegistry

from api.resources import Resources
from api.services.conversations import get_conversation
from shared.events import EventLog
from shared.metrics import Metrics
from shared.redis_client import redis_for
from tests.utils.jobs import create_job, job_view, marker
from worker.jobs.runner import JobRunner

BY_CARRIER = "SELECT carrier, count(*) AS flights FROM flights GROUP BY 1 ORDER BY 2 DESC"


def test_an_invented_figure_is_flagged_everywhere_the_answer_goes(settings, fake_llm,
                                                                   sample_query):
    (top, flights), (second, second_flights), *_ = sample_query(BY_CARRIER)
    # The chart token that is dropped (no chart 1) renumbers/removes text: positions must
    # point into the text as stored.
    answer = (f"{top} flew {flights:,} flights {{{{chart:1}}}}, {second} {second_flights / 1000:.1f}k "
              f"and the rest 999,999; that is 3.5x more than in 2015 (and 2013 is the data's year).")
    scenario = fake_llm.scenario(f"numbers-{uuid.uuid4().hex[:6]}", [
        {"tool_calls": [{"sql": BY_CARRIER}]},
        {"text": json.dumps({"answerText": answer, "charts": []})},
    ])
    registry = CollectorRegistry()
    events = EventLog(redis_for(settings.redis_url))
    runner = JobRunner(settings, events=events, metrics=Metrics(registry))
    job_id, conversation_id = create_job(settings, f"{scenario} Who flew most? {marker()}")
    assert runner.run(job_id) == "succeeded"

    job = job_view(settings, job_id)
    text = job["result"]["answer_text"]
    assert "{{chart" not in text
    numbers = job["result"]["numbers"]
    assert numbers["checked"] == 6
    assert [u["text"] for u in numbers["unsupported"]] == ["999,999", "3.5x", "2015"]
    for item in numbers["unsupported"]:
        assert text[item["position"]:item["position"] + len(item["text"])] == item["text"]

    terminal = events.last(job_id)
    assert terminal.event == "succeeded" and terminal.data["result"]["numbers"] == numbers

    conversation = get_conversation(Resources(settings), _tenant_of(settings, job_id),
                                    conversation_id)
    user, assistant = conversation["messages"]
    assert user["numbers"] is None and assistant["numbers"] == numbers

    value = registry.get_sample_value
    assert value("sunrise_answer_numbers_checked_total") == 6
    assert value("sunrise_answer_numbers_unsupported_total") == 3
    assert value("sunrise_answers_with_unsupported_numbers_total") == 1


def test_the_offline_analyst_states_only_figures_from_its_query(settings, fake_llm):
    runner = JobRunner(settings)
    job_id, _ = create_job(settings, f"How many flights did each carrier fly? {marker()}")
    assert runner.run(job_id) == "succeeded"
    numbers = job_view(settings, job_id)["result"]["numbers"]
    assert numbers["checked"] >= 2 and numbers["unsupported"] == []


def test_figures_from_the_question_and_the_sql_are_supported(settings, fake_llm):
    sql = "SELECT carrier FROM flights WHERE dep_delay > 45 GROUP BY 1 ORDER BY 1 LIMIT 3"
    scenario = fake_llm.scenario(f"numbers-ctx-{uuid.uuid4().hex[:6]}", [
        {"tool_calls": [{"sql": sql}]},
        {"text": json.dumps({"answerText": "These 3 carriers had delays over 45 minutes "
                                           "in the top 7.", "charts": []})},
    ])
    job_id, _ = create_job(settings, f"{scenario} Which of the top 7 carriers were late? "
                                     f"{marker()}")
    assert JobRunner(settings).run(job_id) == "succeeded"
    assert job_view(settings, job_id)["result"]["numbers"] == {"checked": 3, "unsupported": []}


def test_a_failing_check_never_costs_the_answer(settings, fake_llm, monkeypatch):
    import worker.agent.turn

    def broken(*_args):
        raise RuntimeError("a bug in the check")

    monkeypatch.setattr(worker.agent.turn, "check_numbers", broken)
    job_id, _ = create_job(settings, f"How many flights did each carrier fly? {marker()}")
    assert JobRunner(settings).run(job_id) == "succeeded"
    result = job_view(settings, job_id)["result"]
    assert result["answer_text"] and result["numbers"] is None


def _tenant_of(settings, job_id: str) -> int:
    from shared.db import session_scope
    from shared.models import Job

    with session_scope(settings.database_url) as s:
        return s.get(Job, job_id).tenant_id
