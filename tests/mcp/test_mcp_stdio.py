"""``sunrise mcp`` over stdio with the official MCP SDK's own client: the client launches
the command, which talks to the real API (gunicorn, gevent) and a real worker."""
from __future__ import annotations

import os
import sys
import uuid

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from shared.config import PROJECT_ROOT
from shared.db import session_scope
from shared.keys import create_key
from tests.utils.own_loop import run_in_own_loop


@pytest.fixture
def api(live_api, celery_worker):
    return live_api


def _server(api, key: str | None) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SUNRISE_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    args = ["-m", "sunrise.cli.main", "mcp", "--api", api.base_url]
    return StdioServerParameters(command=sys.executable,
                                 args=[*args, "--key", key] if key else args,
                                 env=env, cwd=str(PROJECT_ROOT))


def test_ask_over_stdio_with_progress_and_a_refused_statement(api):
    with session_scope(api.settings.database_url) as s:
        key = create_key(s, f"mcp-stdio-{uuid.uuid4().hex[:10]}")

    async def scenario():
        progress: list[str | None] = []

        async def on_progress(value, total, message):
            progress.append(message)

        async with Client(_server(api, key), read_timeout_seconds=120) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            answer = await client.call_tool("ask", {"question": "How many flights are there?"},
                                            progress_callback=on_progress)
            datasets = await client.call_tool("list_datasets", {})
            refused = await client.call_tool("run_sql", {"dataset_id": str(uuid.uuid4()),
                                                         "sql": "DROP TABLE flights"})
            return tools, answer, datasets, refused, progress

    tools, answer, datasets, refused, progress = run_in_own_loop(scenario())
    assert tools == {"ask", "list_datasets", "describe_dataset", "run_sql"}
    assert not answer.is_error, answer.content
    body = answer.structured_content
    assert body["answer"] and body["job_id"] and body["queries"]
    assert any(m and m.startswith("model round") for m in progress), progress
    assert not datasets.is_error and datasets.structured_content == {"result": []}
    assert refused.is_error and "No dataset" in refused.content[0].text


def test_a_wrong_key_is_a_tool_error_not_a_crash(api):
    async def scenario():
        async with Client(_server(api, "sk-sunrise-wrong"), read_timeout_seconds=60) as client:
            return await client.call_tool("list_datasets", {})

    result = run_in_own_loop(scenario())
    assert result.is_error and "key" in result.content[0].text.lower()
