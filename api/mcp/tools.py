"""The MCP face of Sunrise: tools ``ask``, ``list_datasets``, ``describe_dataset``,
``run_sql`` and each dataset's schema as a resource, built on the official SDK's
``MCPServer``.

The tools know nothing of transports or tenants: each call reaches Sunrise through a
``Backend`` -- the API's own services for ``POST /mcp`` (``api/mcp/in_process.py``,
one per HTTP request, found in the request's ASGI scope), or the HTTP API for
``sunrise mcp`` over stdio (``sunrise/mcp_stdio.py``, one per process). A backend's
methods are blocking; ``Backend.call`` runs one where blocking is allowed. A refusal of
Sunrise (a problem's ``detail``) becomes an MCP tool error the client can show.
"""
from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Any, Protocol

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent

# Where the HTTP bridge puts the request's backend in the ASGI scope.
SCOPE_KEY = "sunrise.mcp_backend"
SCHEMA_URI = "sunrise://datasets/{dataset_id}/schema"
TERMINAL = ("succeeded", "failed", "cancelled")
PROGRESS_EVENTS = ("llm_call", "tool_call")  # what ask reports; backends drop the rest


class Refused(Exception):
    """Sunrise refused a call; ``detail`` is the problem's detail."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class Backend(Protocol):
    """How the tools reach Sunrise for one caller. Every method blocks and raises
    ``Refused`` (or an error with a ``detail``) for a refused call."""

    def call(self, fn: Callable[..., Any], *args: Any) -> Awaitable[Any]: ...
    def ask(self, question: str, dataset_id: str | None,
            conversation_id: str | None) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """A generator that does nothing until its first ``next``: that submits the
        question, then each ``next`` blocks until the job's next progress events
        (``PROGRESS_EVENTS``) and returns all that came together, as one batch; the last
        batch ends with the terminal event, whose data is the job's view. A batch per
        ``next`` is what keeps the hand-offs few: each ``next`` is one ``call``."""
        ...
    def datasets(self) -> list[dict[str, Any]]: ...
    def dataset(self, dataset_id: str) -> dict[str, Any]: ...
    def run_sql(self, dataset_id: str, sql: str) -> dict[str, Any]: ...


def build_server(default: Backend | None = None) -> MCPServer:
    """The MCP server. ``default`` serves calls whose request carries no backend (stdio)."""
    server = MCPServer("sunrise", instructions=(
        "Sunrise answers questions about tabular datasets: `ask` a question in plain "
        "language (it writes and runs SQL, checks the numbers and may draw charts); "
        "`list_datasets` and `describe_dataset` show what can be asked about; `run_sql` "
        "runs one read-only SELECT yourself."))

    def backend(ctx: Context) -> Backend:
        request = ctx.request_context.request
        found = getattr(request, "scope", {}).get(SCOPE_KEY) if request is not None else None
        if found is None and default is None:
            raise ToolError("No Sunrise backend for this request.")
        return found or default

    @server.tool(description="Ask Sunrise a question about a dataset. Returns the answer, "
                             "each chart's rows and Vega-Lite spec, the SQL each query ran, "
                             "the number check, data_as_of and the job id; reports progress "
                             "(model rounds and queries) while the job runs.")
    async def ask(question: str, ctx: Context, dataset_id: str | None = None,
                  conversation_id: str | None = None
                  ) -> Annotated[CallToolResult, dict[str, Any]]:
        b = backend(ctx)
        batches = b.ask(question, dataset_id, conversation_id)  # nothing runs yet
        queries: list[dict[str, Any]] = []
        rounds, job = 0, None
        while job is None and (batch := await _guarded(b, next, batches, None)) is not None:
            for event, data in batch:
                if event == "llm_call":
                    rounds += 1
                    await ctx.report_progress(rounds + len(queries),
                                              message=f"model round {rounds}")
                elif event == "tool_call":
                    queries.append({"query_id": data.get("query_id"), "sql": data.get("sql"),
                                    "rows": data.get("rows"), "error": data.get("error")})
                    await ctx.report_progress(rounds + len(queries),
                                              message=f"query {len(queries)}: "
                                                      f"{data.get('rows', 0)} rows")
                elif event in TERMINAL:
                    job = data
        return answer_result(answer_of(job or {"status": "failed"}, queries))

    @server.tool(description="The datasets you can ask about: id, name, status, tables.")
    async def list_datasets(ctx: Context) -> list[dict[str, Any]]:
        b = backend(ctx)
        return await _guarded(b, b.datasets)

    @server.tool(description="One dataset: its tables, columns with types and descriptions, "
                             "and its example questions.")
    async def describe_dataset(dataset_id: str, ctx: Context) -> dict[str, Any]:
        b = backend(ctx)
        return await _guarded(b, b.dataset, dataset_id)

    @server.tool(description="Run ONE read-only SELECT on a dataset, guarded and bounded as "
                             "the model's own SQL tool is; returns the same CSV text "
                             "(first 25 rows, then a summary over all rows). Needs a key "
                             "with the `datasets` scope.")
    async def run_sql(dataset_id: str, sql: str, ctx: Context) -> str:
        b = backend(ctx)
        result = await _guarded(b, b.run_sql, dataset_id, sql)
        return result["text"]

    @server.resource(SCHEMA_URI, name="dataset_schema", mime_type="application/json",
                     description="A dataset's tables and columns, as describe_dataset.")
    async def dataset_schema(dataset_id: str, ctx: Context) -> str:
        b = backend(ctx)
        try:
            return json.dumps(await b.call(b.dataset, dataset_id), default=str)
        except Exception as exc:
            detail = getattr(exc, "detail", None)
            if detail is None:
                raise
            raise ResourceError(detail) from exc

    return server


async def _guarded(b: Backend, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` through the backend; a Sunrise refusal becomes a ToolError."""
    try:
        return await b.call(fn, *args)
    except ToolError:
        raise
    except Exception as exc:
        detail = getattr(exc, "detail", None)
        if detail is None:
            raise
        raise ToolError(detail) from exc


def answer_result(answer: dict[str, Any]) -> CallToolResult:
    """``ask``'s result, built here so the answer is encoded once: its text copy is
    compact JSON made by us, and the SDK, given a ``CallToolResult`` (the output schema
    is still declared, ``Annotated[CallToolResult, dict[str, Any]]``), neither dumps the
    answer again for the structured copy nor pretty-prints it for the text one."""
    text = json.dumps(answer, default=str, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=answer)


def answer_of(job: dict[str, Any], queries: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``ask`` returns for a finished job: a failed one is a tool error."""
    if job.get("status") != "succeeded":
        error = job.get("error") or {}
        raise ToolError(f"Job {job.get('job_id')} {job.get('status')}: "
                        f"{error.get('message') or 'no answer'}")
    result = job.get("result") or {}
    return {
        "answer": result.get("answer_text"),
        "charts": [{"type": c.get("type"), "title": c.get("title"),
                    "query_id": c.get("query_id"), "sql": c.get("sql"),
                    "columns": c.get("columns"), "rows": c.get("data"),
                    "vega_lite": c.get("vega_lite")}
                   for c in result.get("charts") or []],
        "queries": [q for q in queries if q.get("sql")],
        "numbers": result.get("numbers"),
        "data_as_of": job.get("data_as_of"),
        "job_id": job.get("job_id"),
        "conversation_id": job.get("conversation_id"),
    }
