"""Figure: what asking over MCP costs the API beyond the REST path.

The same question asked N times, one after another, two ways against one private stack
(bench/stack.py: the offline model, the API under gunicorn with one gevent worker, one
Celery worker): (a) ``POST /v1/jobs`` then long-poll ``GET /v1/jobs/{id}?wait=30``
(the bundled client), (b) the MCP ``ask`` tool over Streamable HTTP with the official
SDK's client (one connection; progress notifications on). The API process's CPU per
question is read from /proc for each way; the difference is MCP's cost (the SDK's
parsing, its loop thread, the bridge's hand-offs, the events followed for progress).
Blocks alternate (REST, MCP, REST, MCP) so drift on the shared machine hits both.

    python -m bench.mcp_ask [--smoke]
"""
from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.figures import QUESTION, CpuMeter, result, row
from bench.stack import Stack
from sunrise.client import SunriseClient

TARGET_EXTRA_MS = 5.0


def _rest(base_url: str, key: str, jobs: int) -> None:
    with SunriseClient(base_url, key) as client:
        for _ in range(jobs):
            job = client.wait(client.submit(QUESTION)["job_id"], timeout=120)
            assert job["status"] == "succeeded", job


def _mcp(base_url: str, key: str, jobs: int) -> None:
    async def asks():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                                  timeout=httpx2.Timeout(120, connect=5))
        async with Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as c:
            for _ in range(jobs):
                answer = await c.call_tool("ask", {"question": QUESTION},
                                           progress_callback=_ignore)
                assert not answer.is_error, answer.content
    asyncio.run(asks())


async def _ignore(*_args) -> None:
    return None


def run(smoke: bool = False) -> dict:
    jobs = 3 if smoke else 15
    spent = {"rest": [], "mcp": []}
    with Stack("mcp-ask", worker_metrics_port=0) as stack:
        stack.start_fake_llm(latency_ms=0)
        api, base_url = stack.start_api(workers=1)
        stack.start_worker(concurrency=4)
        key = stack.api_key()
        _rest(base_url, key, 1)  # warm-up: imports, pools, the MCP loop thread
        _mcp(base_url, key, 1)
        for _ in range(2):
            for way, ask in (("rest", _rest), ("mcp", _mcp)):
                meter = CpuMeter({"api": api})
                with meter.span():
                    ask(base_url, key, jobs)
                spent[way].append(meter.per_item_ms(jobs)["api"])
    rest_ms = sum(spent["rest"]) / len(spent["rest"])
    mcp_ms = sum(spent["mcp"]) / len(spent["mcp"])
    extra = mcp_ms - rest_ms
    rows = [
        row("MCP ask", "API CPU per question: MCP ask (Streamable HTTP, progress on) over "
            "POST /v1/jobs + long-poll", f"{extra:+.2f} ms", f"{rest_ms:.2f} ms (REST)",
            mcp_ms / rest_ms if rest_ms else None, f"≤ {TARGET_EXTRA_MS:g} ms extra",
            extra <= TARGET_EXTRA_MS),
        row("MCP ask", "API CPU per question, each block (REST / MCP)",
            " · ".join(f"{r:.2f} / {m:.2f}" for r, m in zip(spent["rest"], spent["mcp"],
                                                            strict=True)),
            "", None, "report"),
    ]
    return result("mcp_ask", smoke, rows, rest_api_cpu_ms=rest_ms, mcp_api_cpu_ms=mcp_ms,
                  extra_ms=round(extra, 2), blocks=spent, jobs_per_block=jobs,
                  load_average_1m=round(os.getloadavg()[0], 2))


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv[1:]), indent=2, default=str))
