"""The public JSON shape of a job, shared by the API responses and the terminal event
(the API adds its links, ``api/links.py``)."""
from __future__ import annotations

from typing import Any

from shared.models import Job, iso
from shared.usage_figures import usage_view


def job_to_dict(job: Job) -> dict[str, Any]:
    """The job as clients see it: status, result, usage, error and timestamps."""
    result = None
    if job.answer_text is not None:
        result = {
            "answer_text": job.answer_text,
            "charts": job.charts or [],
            "parse_path": job.parse_path,
            "truncated": bool(job.truncated),
            "numbers": job.numbers,
            "verified": job.verified,
            "clarification": job.clarification,
        }
    error = {"code": job.error_code, "message": job.error_message} if job.error_code else None
    return {
        "job_id": job.id,
        "conversation_id": job.conversation_id,
        "batch_id": job.batch_id,
        "dataset_id": job.dataset_id,
        "dataset_version": job.dataset_version,
        "status": job.status,
        "message": job.message,
        "model": job.model,
        "attempt": job.attempt,
        "result": result,
        "usage": usage_view(job),
        "error": error,
        "created_at": iso(job.created_at),
        "started_at": iso(job.started_at),
        "finished_at": iso(job.finished_at),
        "data_as_of": iso(job.data_as_of),
    }
