"""The links of jobs, batches and datasets: where the API serves each one and its streams.

Only the API knows its URLs, so it adds ``links`` to every job and batch it returns,
publishes or streams on -- including the views the worker publishes without them
(a job's terminal event, a batch's progress).
"""
from __future__ import annotations

from typing import Any

from api.schemas.batches import BatchOut, BatchProgress
from api.schemas.datasets import DatasetOut
from api.schemas.events import BATCH_EVENTS, DATASET_EVENTS, JOB_EVENTS
from api.schemas.jobs import JobOut


def job_links(job_id: str) -> dict[str, str]:
    return {"self": f"/v1/jobs/{job_id}", "events": f"/v1/jobs/{job_id}/events",
            "cancel": f"/v1/jobs/{job_id}/cancel"}


def batch_links(batch_id: str) -> dict[str, str]:
    return {"self": f"/v1/batches/{batch_id}", "events": f"/v1/batches/{batch_id}/events",
            "report": f"/v1/batches/{batch_id}/report?format=html"}


def dataset_links(dataset_id: str) -> dict[str, str]:
    return {"self": f"/v1/datasets/{dataset_id}", "events": f"/v1/datasets/{dataset_id}/events",
            "refresh": f"/v1/datasets/{dataset_id}/refresh"}


def linked_dataset(view: dict[str, Any]) -> dict[str, Any]:
    """A dataset view (``shared.dataset_view``) with its links."""
    return {**view, "links": dataset_links(view["dataset_id"])}


def linked_job(view: dict[str, Any]) -> dict[str, Any]:
    """A job view (``shared.job_view``) with its links."""
    return {**view, "links": job_links(view["job_id"])}


def linked_batch(view: dict[str, Any]) -> dict[str, Any]:
    """A batch view (``shared.batch_view``) with its links."""
    return {**view, "links": batch_links(view["batch_id"])}


# The events whose data is a whole job or batch, and so carries its links.
_JOB_VIEWS = frozenset(name for name, model in JOB_EVENTS.events.items() if model is JobOut)
_BATCH_VIEWS = frozenset(name for name, model in BATCH_EVENTS.events.items()
                         if model in (BatchOut, BatchProgress))
_DATASET_VIEWS = frozenset(name for name, model in DATASET_EVENTS.events.items()
                           if model is DatasetOut)


def job_event_data(event: str, data: dict[str, Any]) -> dict[str, Any]:
    """A job event's data as the API streams it."""
    return linked_job(data) if event in _JOB_VIEWS else data


def batch_event_data(event: str, data: dict[str, Any]) -> dict[str, Any]:
    """A batch event's data as the API streams it."""
    return linked_batch(data) if event in _BATCH_VIEWS else data


def dataset_event_data(event: str, data: dict[str, Any]) -> dict[str, Any]:
    """A dataset import event's data as the API streams it."""
    return linked_dataset(data) if event in _DATASET_VIEWS else data
