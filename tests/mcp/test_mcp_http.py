"""POST /mcp with the official MCP SDK's own client, against the real API (gunicorn,
gevent) and a real worker: discover/initialize, list tools, ask with progress, the
schema resource, run_sql and its refusals as tool errors."""
from __future__ import annotations

import asyncio
import json
import uuid

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from shared.db import session_scope
from shared.keys import create_key
from tests.utils.own_loop import run_in_own_loop


@pytest.fixture
def api(live_api, celery_worker):
    return live_api


@pytest.fixture
def key(api) -> str:
    with session_scope(api.settings.database_url) as s:
        return create_key(s, f"mcp-{uuid.uuid4().hex[:10]}")


def _client(api, key: str, **kw) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                              timeout=httpx2.Timeout(120, connect=5))
    return Client(streamable_http_client(f"{api.base_url}/mcp", http_client=http), **kw)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_ask_over_streamable_http_with_progress(api, key, mode):
    async def scenario():
        progress: list[tuple[float, str | None]] = []

        async def on_progress(value, total, message):
            progress.append((value, message))

        async with _client(api, key, mode=mode) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("ask", {"question": "How many flights are there?"},
                                            progress_callback=on_progress)
            return tools, result, progress

    tools, result, progress = run_in_own_loop(scenario())
    assert tools == {"ask", "list_datasets", "describe_dataset", "run_sql"}
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["answer"] and answer["job_id"]
    assert answer["queries"] and answer["queries"][0]["sql"].lower().startswith("select")
    assert answer["data_as_of"]
    assert any(m and m.startswith("query 1") for _, m in progress), progress
    assert [v for v, _ in progress] == sorted(v for v, _ in progress)


def test_a_refused_statement_is_a_tool_error_with_the_detail(api, key):
    async def scenario():
        async with _client(api, key) as client:
            return (await client.call_tool("run_sql", {"dataset_id": str(uuid.uuid4()),
                                                       "sql": "SELECT 1"}),
                    await client.call_tool("ask", {"question": "  "}))

    unknown, blank = run_in_own_loop(scenario())
    assert unknown.is_error and "No dataset" in unknown.content[0].text
    assert blank.is_error and "message" in blank.content[0].text


def test_without_a_key_mcp_is_401(api):
    resp = httpx2.post(f"{api.base_url}/mcp", json={"jsonrpc": "2.0", "id": 1,
                                                    "method": "tools/list"})
    assert resp.status_code == 401


def test_only_a_request_with_a_progress_token_is_answered_with_a_stream(api, key):
    headers = {"Authorization": f"Bearer {key}", "MCP-Protocol-Version": "2025-11-25",
               "Accept": "application/json, text/event-stream"}

    def post(message_id: int, params: dict) -> httpx2.Response:
        return httpx2.post(f"{api.base_url}/mcp", headers=headers, timeout=30, json={
            "jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params})

    plain = post(1, {"name": "list_datasets", "arguments": {}})
    streamed = post(2, {"name": "list_datasets", "arguments": {},
                        "_meta": {"progressToken": "p2"}})
    assert plain.status_code == 200 and plain.headers["content-type"].startswith(
        "application/json"), plain.text
    assert plain.json()["id"] == 1 and not plain.json()["result"]["isError"]
    assert streamed.status_code == 200 and streamed.headers["content-type"].startswith(
        "text/event-stream"), streamed.text
    assert '"id":2' in streamed.text.replace(" ", "")


def test_datasets_schema_resource_and_run_sql(api, key, tmp_path):
    from sunrise.client import SunriseClient
    from tests.utils.waiting import wait_until

    csv = tmp_path / "sales.csv"
    csv.write_text("city,sales\nOslo,10\nLima,32\nOslo,5\n")
    with SunriseClient(api.base_url, key) as rest:
        dataset_id = rest.create_dataset("shop", [csv])["dataset_id"]
        wait_until(lambda: rest.dataset(dataset_id)["status"] == "ready", timeout=60,
                   interval=0.2)

    async def scenario():
        async with _client(api, key) as client:
            templates = await client.list_resource_templates()
            # Bounded: a read that hangs (the SDK's thread hand-off on the loop thread,
            # api/mcp/asgi_bridge.py) fails the test instead of blocking it.
            schema = await asyncio.wait_for(client.read_resource(
                f"sunrise://datasets/{dataset_id}/schema"), timeout=30)
            return (templates, schema,
                    await client.call_tool("list_datasets", {}),
                    await client.call_tool("describe_dataset", {"dataset_id": dataset_id}),
                    await client.call_tool("run_sql", {
                        "dataset_id": dataset_id,
                        "sql": "SELECT city, sum(sales) AS total FROM sales GROUP BY city "
                               "ORDER BY city"}),
                    await client.call_tool("run_sql", {"dataset_id": dataset_id,
                                                       "sql": "DELETE FROM sales"}))

    templates, schema, listed, described, ran, refused = run_in_own_loop(scenario())
    assert [t.uri_template for t in templates.resource_templates] == [
        "sunrise://datasets/{dataset_id}/schema"]
    [content] = schema.contents
    assert content.mime_type == "application/json"
    assert json.loads(content.text)["tables"][0]["name"] == "sales"
    assert [d["dataset_id"] for d in listed.structured_content["result"]] == [dataset_id]
    assert described.structured_content["tables"][0]["name"] == "sales"
    assert not ran.is_error
    assert ran.content[0].text.splitlines()[:4] == ["query_id=1 rows=2 shown=2", "city,total",
                                                    "Lima,32", "Oslo,15"]
    assert refused.is_error and "error: DELETE statements are not allowed" in refused.content[0].text
