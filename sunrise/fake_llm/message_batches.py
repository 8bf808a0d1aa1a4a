"""Message Batches: `POST/GET /v1/messages/batches`, `GET .../{id}`, `.../{id}/results`,
`POST .../{id}/cancel`, shaped as the SDK's `client.messages.batches` expects.

Every request of a batch is answered when the batch is created (same policy,
scenarios and prompt cache as `/v1/messages`; no latency or faults), but the
batch reports `in_progress` until `batch_seconds` of simulated time have passed
(advance the clock to skip the wait). Results then stream as JSONL lines
`{"custom_id": ..., "result": {"type": "succeeded", "message": {...}}}` or
`{"type": "errored", "error": {...}}`; usage is ordinary usage with
`service_tier: "batch"` (the 50% discount is the client's to apply).
The endpoint functions have the signature `api_routes` wraps with auth and logging.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from sunrise.fake_llm.clock import SimClock
from sunrise.fake_llm.errors import ApiError
from sunrise.fake_llm.request_validation import validate_messages
from sunrise.fake_llm.wire import json_bytes, new_id

if TYPE_CHECKING:
    from sunrise.fake_llm.state import FakeLLMState


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class Batch:
    id: str
    created_at: datetime
    ready_at: float
    results: list[dict]
    canceled: bool = False
    ended_at: datetime | None = field(default=None)


class BatchStore:
    """The batches of one server instance, timed on its simulated clock."""

    def __init__(self, clock: SimClock, batch_seconds: float):
        self._clock = clock
        self._seconds = batch_seconds
        self._batches: dict[str, Batch] = {}

    def clear(self) -> None:
        self._batches.clear()

    def add(self, results: list[dict]) -> Batch:
        batch = Batch(
            new_id("msgbatch"), datetime.now(UTC), self._clock.now() + self._seconds, results
        )
        self._batches[batch.id] = batch
        return batch

    def get(self, batch_id: str) -> Batch:
        batch = self._batches.get(batch_id)
        if batch is None:
            raise ApiError(404, f"message batch {batch_id!r} not found")
        return batch

    def all(self) -> list[Batch]:
        return list(self._batches.values())

    def ended(self, batch: Batch) -> bool:
        if batch.ended_at is None and (batch.canceled or self._clock.now() >= batch.ready_at):
            batch.ended_at = datetime.now(UTC)
        return batch.ended_at is not None

    def as_json(self, batch: Batch, base_url: str) -> dict:
        ended = self.ended(batch)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for line in batch.results:
            counts[line["result"]["type"] if ended else "processing"] += 1
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _rfc3339(batch.created_at),
            "expires_at": _rfc3339(batch.created_at + timedelta(hours=24)),
            "ended_at": _rfc3339(batch.ended_at) if batch.ended_at else None,
            "archived_at": None,
            "cancel_initiated_at": _rfc3339(batch.ended_at)
            if batch.canceled and batch.ended_at
            else None,
            "results_url": f"{base_url}v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _answer(state: FakeLLMState, request_item: object) -> dict:
    custom_id = request_item.get("custom_id") if isinstance(request_item, dict) else None
    try:
        body = validate_messages(
            request_item.get("params") if isinstance(request_item, dict) else None
        )
        built = state.builder.build(dict(body, stream=False), service_tier="batch")
        result = {"type": "succeeded", "message": built.message}
    except ApiError as error:
        result = {"type": "errored", "error": error.body(new_id("req"))}
    return {"custom_id": custom_id, "result": result}


def _validate_batch(body: object) -> list[dict]:
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        raise ApiError(400, "requests: at least one request is required")
    ids = [item.get("custom_id") if isinstance(item, dict) else None for item in requests]
    if not all(isinstance(custom_id, str) and custom_id for custom_id in ids):
        raise ApiError(400, "requests: every request needs a non-empty 'custom_id'")
    if len(set(ids)) != len(ids):
        raise ApiError(400, "requests: custom_id values must be unique within a batch")
    return requests


async def create_batch(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    requests = _validate_batch(body)
    batch = state.batches.add([_answer(state, item) for item in requests])
    return _json(state.batches.as_json(batch, str(request.base_url)))


async def retrieve_batch(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    batch = state.batches.get(request.path_params["batch_id"])
    return _json(state.batches.as_json(batch, str(request.base_url)))


async def list_batches(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    data = [state.batches.as_json(b, str(request.base_url)) for b in reversed(state.batches.all())]
    return _json(
        {
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }
    )


async def cancel_batch(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    batch = state.batches.get(request.path_params["batch_id"])
    if not state.batches.ended(batch):
        batch.canceled = True
        batch.results = [
            {"custom_id": line["custom_id"], "result": {"type": "canceled"}}
            for line in batch.results
        ]
    return _json(state.batches.as_json(batch, str(request.base_url)))


async def batch_results(
    request: Request, state: FakeLLMState, body: object, outcome: dict
) -> Response:
    batch = state.batches.get(request.path_params["batch_id"])
    if not state.batches.ended(batch):
        raise ApiError(400, f"message batch {batch.id!r} is still in progress")
    lines = b"".join(json_bytes(line) + b"\n" for line in batch.results)
    return Response(lines, media_type="application/x-jsonl")


def _json(payload: dict) -> Response:
    return Response(json_bytes(payload), media_type="application/json")
