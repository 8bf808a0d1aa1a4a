"""The answers of clients woken together by one event: the event's JSON is rendered once
for all of them, and a long-poll's body and headers are those Flask makes of the same
data (test_long_poll.py and test_sse.py follow real jobs through both)."""
from __future__ import annotations

import json
import uuid

from api.links import job_event_data
from api.woken_answers import compact_json, presented_json, woken_answer
from shared.events import Event


def ended_job_event() -> Event:
    job_id = str(uuid.uuid4())
    return Event("1700000000000-0", "succeeded", {
        "job_id": job_id, "status": "succeeded", "message": "Quel café ? \u2028 \U0001f600",
        "result": {"answer_text": "42", "charts": [], "numbers": [1.5, 2]},
        "usage": {"input_tokens": 10}, "error": None})


def test_an_event_is_rendered_once_for_every_client_it_wakes():
    event = ended_job_event()
    job_id = event.data["job_id"]
    calls = []

    def present(name, data):
        calls.append(name)
        return job_event_data(name, data)

    # Each client's subscription hands it the event as its own decoded copy or the
    # hub's shared one: the stream id names it either way.
    copies = [event, Event(event.id, event.event, json.loads(json.dumps(event.data)))]
    rendered = [presented_json(job_id, copy, present) for copy in copies * 3]
    assert calls == ["succeeded"]
    assert all(text is rendered[0] for text in rendered)
    assert json.loads(rendered[0]) == job_event_data(event.event, event.data)
    later = Event("1700000000001-0", "succeeded", event.data)
    presented_json(job_id, later, present)
    assert calls == ["succeeded", "succeeded"]


def test_a_woken_long_poll_answer_is_what_flask_makes_of_the_same_data(app):
    event = ended_job_event()
    data = job_event_data(event.event, event.data)
    with app.test_request_context(f"/v1/jobs/{data['job_id']}?wait=30"):
        ours = woken_answer(presented_json(data["job_id"], event, job_event_data))
        flasks = app.json.response(data)
    assert ours.get_data() == flasks.get_data()
    assert ours.headers == flasks.headers
    assert ours.status_code == flasks.status_code == 200
    assert compact_json(data) + "\n" == flasks.get_data(as_text=True)

