"""The MCP tools' backend for ``POST /mcp``: the API's own services, for the principal
of the HTTP request that carries the MCP message.

Built in the Flask request (it captures the resources and the principal), its methods
run in that request's greenlet (``api/mcp/asgi_bridge.py`` hands each call back to it),
so they block as any view does and never touch the MCP server's event loop.
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from pydantic import ValidationError

from api.event_hub import HubUnavailable
from api.limits import check_questions
from api.mcp.tools import PROGRESS_EVENTS, TERMINAL, Refused
from api.resources import Resources
from api.schemas.jobs import JobCreate
from api.services import datasets as dataset_service
from api.services import jobs as job_service
from api.services.dataset_sql import run_dataset_sql
from shared.errors import Forbidden
from shared.principal import Principal

EVENT_WAIT_S = 2.0  # a wait for the job's next events; the database is read between


class InProcessBackend:
    def __init__(self, res: Resources, principal: Principal,
                 call: Callable[..., Awaitable[Any]]):
        self.res = res
        self.principal = principal
        self.call = call

    @property
    def tenant_id(self) -> int:
        return self.principal.tenant_id

    def ask(self, question: str, dataset_id: str | None,
            conversation_id: str | None) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """Submit the question, then follow its job (see ``Backend.ask``)."""
        job = self.submit(question, dataset_id, conversation_id)
        yield from self._follow(job["job_id"])

    def submit(self, question: str, dataset_id: str | None,
               conversation_id: str | None) -> dict[str, Any]:
        """Submit a job as ``POST /v1/jobs`` does (the question counted, the budget and
        the concurrency cap checked)."""
        if "ask" not in self.principal.scopes:
            raise Forbidden("ask needs a key with the 'ask' scope.")
        try:
            body = JobCreate(message=question, dataset_id=dataset_id,
                             conversation_id=conversation_id)
        except ValidationError as exc:
            raise Refused("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                    for e in exc.errors())) from None
        check_questions(self.res, self.tenant_id, 1)
        view, _created = job_service.submit_job(self.res, self.tenant_id, body, None)
        return view

    def _follow(self, job_id: str) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """The job's progress events, a batch per wake of the subscription (the answer's
        streamed text and thinking are not handed over), until its end. The last batch
        is yielded once the subscription is closed: the tool stops reading there, and a
        generator left open would close its subscription on whichever thread drops it."""
        # Through the process's event hub (one Redis reader for every waiting request,
        # api/event_hub.py); the database says when the job ended if Redis cannot.
        with self.res.event_hub.subscribe(job_id, "0-0") as subscription:
            while True:
                try:
                    events = subscription.get(timeout=EVENT_WAIT_S)
                except HubUnavailable:
                    events = []
                    time.sleep(EVENT_WAIT_S)
                batch = [(e.event, e.data) for e in events if e.event in PROGRESS_EVENTS]
                # A terminal event's data is the job's view, as the long-poll answers.
                end = next(((e.event, e.data) for e in events if e.is_terminal), None)
                if end is None and not events:
                    view = job_service.load_job(self.res, self.tenant_id, job_id)
                    if view["status"] in TERMINAL:  # its terminal event expired or never came
                        end = (view["status"], view)
                if end is not None:
                    break
                if batch:
                    yield batch
        yield [*batch, end]

    def datasets(self) -> list[dict[str, Any]]:
        listed = dataset_service.list_datasets(self.res, self.tenant_id, limit=100, cursor=None)
        return listed["items"]

    def dataset(self, dataset_id: str) -> dict[str, Any]:
        return dataset_service.get_dataset(self.res, self.tenant_id, dataset_id)

    def run_sql(self, dataset_id: str, sql: str) -> dict[str, Any]:
        return run_dataset_sql(self.res, self.principal, dataset_id, sql)
