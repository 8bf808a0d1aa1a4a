"""Economy mode: every tool round of the open questions is one Message Batch to the
offline model, with 1-hour cache breakpoints, billed at half price."""
from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from shared.db import session_scope
from shared.models import Job, LlmCall
from tests.batches.conftest import chart_questions, wait_for_batch


def test_economy_batch_answers_in_rounds_of_message_batches(client, auth, settings,
                                                           celery_worker, fake_llm, refusal):
    questions = [*chart_questions(4), f"{refusal} Why?"]
    accepted = client.post("/v1/batches", json={"questions": questions, "mode": "economy",
                                                "title": "Thrifty"}, headers=auth).get_json()
    view = wait_for_batch(client, auth, accepted["batch_id"], timeout=60)
    assert view["mode"] == "economy"
    assert view["counts"]["succeeded"] == 4 and view["counts"]["failed"] == 1

    log = fake_llm.log()
    assert not [e for e in log if e["path"] == "/v1/messages"], "no per-message calls"
    sent = [e["body"] for e in log if e["path"] == "/v1/messages/batches" and e["method"] == "POST"]
    # Round 1: all five (four ask for SQL, one is refused); round 2: the four answers.
    assert [len(b["requests"]) for b in sent] == [5, 4]
    for body in sent:
        for item in body["requests"]:
            params = item["params"]
            assert params["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
            assert params["messages"][-1]["content"][-1]["cache_control"]["ttl"] == "1h"
            # The same per-model request as the streaming loop's (shared builder).
            assert params["thinking"] == {"type": "adaptive", "display": "summarized"}
            assert params["output_config"] == {"effort": settings.effort}
    assert {i["custom_id"] for i in sent[0]["requests"]} == set(accepted["job_ids"])
    # Round 2 replays round 1's thinking blocks (the offline model checks their signatures).
    replayed = [b for item in sent[1]["requests"] for m in item["params"]["messages"]
                if m["role"] == "assistant" for b in m["content"]]
    assert {"thinking", "tool_use"} <= {b["type"] for b in replayed}

    price = settings.price_for(settings.model)
    with session_scope(settings.database_url) as s:
        jobs = s.scalars(select(Job).where(Job.batch_id == accepted["batch_id"])
                         .order_by(Job.batch_index)).all()
        answered = jobs[:4]
        assert all(j.tool_rounds == 1 and j.sql_executed == 1 and j.charts for j in answered)
        # Economy answers are checked like any other.
        assert all(j.numbers["checked"] > 0 and j.numbers["unsupported"] == [] for j in answered)
        assert jobs[4].error_code == "refused"
        # The 1-hour cache written in round 1 is read back in round 2.
        assert all(j.cache_read_tokens > 0 for j in answered)
        calls = s.scalars(select(LlmCall).where(LlmCall.job_id == jobs[1].id)
                          .order_by(LlmCall.round)).all()
        assert [c.round for c in calls] == [0, 1]
        full = sum(Decimal(c.input_tokens) * price.input + c.output_tokens * price.output
                   + c.cache_read_tokens * price.read_price() for c in calls
                   if not c.cache_creation_tokens) / 1_000_000
        half = sum(c.cost_usd for c in calls if not c.cache_creation_tokens)
        assert half == pytest.approx(full / 2, rel=1e-4)

    document = client.get(f"/v1/batches/{accepted['batch_id']}/report?format=json",
                          headers=auth).get_json()
    economy = document["economy"]
    assert economy["standard_cost_usd"] > economy["cost_usd"] > 0
    assert 0.25 < economy["saving_ratio"] <= 0.5
    html = client.get(f"/v1/batches/{accepted['batch_id']}/report", headers=auth)
    assert "Economy saving" in html.get_data(as_text=True)
