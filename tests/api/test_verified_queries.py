"""The trust loop through the API on a real worker and the offline model: an answer is
voted down, an admin keeps a corrected query (checked by running it), and the same
question in other words is answered with that query and marked verified; an ambiguous
question is asked back with options, and sending one answers it."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from api.services.verified_queries import add_verified_query
from shared.db import session_scope
from shared.errors import Forbidden
from shared.models import JobFeedback, VerifiedQuery
from shared.principal import Principal
from tests.utils.datasets import other_tenant, upload, wait_imported
from tests.utils.waiting import wait_for_status

FLIGHTS = "carrier,origin,month,dep_delay,arr_delay,distance\n" + "".join(
    f"{c},{o},{m},{d},{a},{dist}\n" for c, o, m, d, a, dist in [
        ("UA", "EWR", 1, 10, 25, 1400), ("UA", "JFK", 1, 5, 12, 1000),
        ("AA", "JFK", 2, 30, 2, 700), ("AA", "LGA", 2, 40, -5, 800),
        ("DL", "LGA", 3, 1, 40, 900), ("DL", "JFK", 3, -3, 38, 950),
        ("B6", "JFK", 4, 2, 3, 300)])
CORRECTED = ("SELECT carrier, round(avg(arr_delay), 2) AS avg_arr_delay FROM flights "
             "GROUP BY carrier ORDER BY avg_arr_delay DESC LIMIT 1")

pytestmark = pytest.mark.usefixtures("celery_worker")


def ask(client, auth, dataset_id, message, conversation_id=None):
    body = {"message": message, "dataset_id": dataset_id}
    if conversation_id:
        body["conversation_id"] = conversation_id
    job = client.post("/v1/jobs", headers=auth, json=body)
    assert job.status_code == 202, job.get_data(as_text=True)
    done = wait_for_status(client, auth, job.get_json()["job_id"], timeout=60)
    assert done["status"] == "succeeded", done
    return done


@pytest.fixture
def flights(client, auth):
    accepted = upload(client, auth, "Flights", ("flights.csv", FLIGHTS)).get_json()
    assert wait_imported(client, auth, accepted["dataset_id"])["status"] == "ready"
    return accepted["dataset_id"]


def test_down_vote_verify_and_a_paraphrase_is_answered_verified(client, auth, settings, flights):
    first = ask(client, auth, flights, "Which carrier has the largest arrival delay?")
    assert first["result"]["verified"] is None
    rated = client.post(f"/v1/jobs/{first['job_id']}/feedback", headers=auth,
                        json={"rating": "up"})
    assert rated.status_code == 201 and rated.get_json()["rating"] == "up"
    # A second rating by the same key replaces the first.
    rated = client.post(f"/v1/jobs/{first['job_id']}/feedback", headers=auth,
                        json={"rating": "down", "comment": "I meant the average"})
    assert rated.status_code == 201
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(JobFeedback)
                        .where(JobFeedback.job_id == first["job_id"])) == 1

    listed = client.get(f"/v1/datasets/{flights}/feedback?rating=down", headers=auth).get_json()
    (item,) = listed["items"]
    assert item["question"] == "Which carrier has the largest arrival delay?"
    assert item["comment"] == "I meant the average" and item["user"] == "tenant"
    assert "FROM" in item["sql"].upper() and item["answer_text"]
    assert client.get(f"/v1/datasets/{flights}/feedback?rating=up",
                      headers=auth).get_json()["items"] == []

    failing = client.post(f"/v1/datasets/{flights}/verified-queries", headers=auth, json={
        "question": "Which carrier had the highest average arrival delay?",
        "sql": "SELECT carrier, avg(arrival_delay) FROM flights GROUP BY 1"})
    assert failing.status_code == 422
    assert "arrival_delay" in failing.get_json()["detail"]
    kept = client.post(f"/v1/datasets/{flights}/verified-queries", headers=auth, json={
        "question": "Which carrier had the highest average arrival delay?", "sql": CORRECTED,
        "from_job_id": first["job_id"]})
    assert kept.status_code == 201, kept.get_data(as_text=True)
    vq = kept.get_json()
    assert vq["created_by"] == "tenant" and vq["from_job_id"] == first["job_id"]
    (only,) = client.get(f"/v1/datasets/{flights}/verified-queries",
                         headers=auth).get_json()["items"]
    assert only["verified_query_id"] == vq["verified_query_id"]

    again = ask(client, auth, flights, "Which carrier has the worst average arrival delay?")
    assert again["result"]["verified"] == {
        "verified_query_id": vq["verified_query_id"],
        "question": "Which carrier had the highest average arrival delay?"}
    assert "DL" in again["result"]["answer_text"]  # (40 + 38) / 2 is the highest
    # Unrelated questions are not marked: the model wrote its own query.
    other = ask(client, auth, flights, "How many flights are there?")
    assert other["result"]["verified"] is None

    assert client.delete(f"/v1/datasets/{flights}/verified-queries/{vq['verified_query_id']}",
                         headers=auth).status_code == 204
    assert client.delete(f"/v1/datasets/{flights}/verified-queries/{vq['verified_query_id']}",
                         headers=auth).status_code == 404
    gone = ask(client, auth, flights, "Which carrier has the worst average arrival delay?")
    assert gone["result"]["verified"] is None


def test_an_ambiguous_question_is_asked_back_and_an_option_answers_it(client, auth, flights):
    asked = ask(client, auth, flights, "What is the average delay by carrier?")
    clarification = asked["result"]["clarification"]
    assert clarification["question"] and len(clarification["options"]) == 2
    assert asked["result"]["charts"] == []
    chosen = next(o for o in clarification["options"] if "departure" in o)
    answered = ask(client, auth, flights, chosen, asked["conversation_id"])
    assert answered["result"]["clarification"] is None
    (chart,) = answered["result"]["charts"]
    assert "dep_delay" in chart["sql"]


def test_others_and_bad_input_change_nothing(app, client, auth, settings, flights):
    stranger = other_tenant(settings)
    assert client.get(f"/v1/datasets/{flights}/verified-queries",
                      headers=stranger).status_code == 404
    assert client.post(f"/v1/datasets/{flights}/verified-queries", headers=stranger, json={
        "question": "q", "sql": "SELECT 1"}).status_code == 404
    for body in ({"question": " ", "sql": "SELECT 1"}, {"question": "q"},
                 {"question": "q", "sql": "SELECT 1", "extra": 1}):
        refused = client.post(f"/v1/datasets/{flights}/verified-queries", headers=auth, json=body)
        assert refused.status_code in (400, 422) and refused.get_json()["detail"]
    writes = client.post(f"/v1/datasets/{flights}/verified-queries", headers=auth, json={
        "question": "drop it", "sql": "DROP TABLE flights"})
    assert writes.status_code == 422
    assert client.post("/v1/jobs/not-a-job/feedback", headers=auth,
                       json={"rating": "up"}).status_code == 404
    bad = client.post("/v1/jobs/not-a-job/feedback", headers=auth, json={"rating": "meh"})
    assert bad.status_code == 422 and "rating" in bad.get_json()["detail"]
    with app.app_context(), pytest.raises(Forbidden):
        from api.resources import resources
        add_verified_query(resources(), Principal(tenant_id=1, user_id=7, role="analyst"),
                           flights, "q", "SELECT 1", None)
    with session_scope(settings.database_url) as s:
        assert s.scalar(select(func.count()).select_from(VerifiedQuery)
                        .where(VerifiedQuery.dataset_id == flights)) == 0
