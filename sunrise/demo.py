"""``sunrise demo``: the whole system end to end on the sample data.

Starts the offline model, then either the full stack (API + Celery worker on Redis)
or, when Redis does not answer, the in-process runner; asks one question and prints
the answer. Every process it starts, it stops.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import redis
from rich.console import Console

from shared.config import VAR_DIR, Settings

QUESTION = "How many flights did each carrier fly?"
console = Console()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


LOG_DIR = VAR_DIR / "demo-logs"


@contextlib.contextmanager
def _process(argv: list[str], env: dict[str, str], name: str) -> Iterator[subprocess.Popen]:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = open(LOG_DIR / f"{name}.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield proc
    except Exception:
        console.print(f"[red]{name} log ({LOG_DIR / f'{name}.log'}):[/red]")
        console.print((LOG_DIR / f"{name}.log").read_text()[-3000:])
        raise
    finally:
        log.close()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _redis_ok(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def run_demo(settings: Settings) -> int:
    from sunrise.local import ensure_sample_db

    sunrise = [sys.executable, "-m", "sunrise.cli.main"]
    console.rule("Sunrise demo")
    console.print(f"database: {settings.database_url}")
    ensure_sample_db(settings)
    console.print(f"sample data: {settings.duckdb_path}")
    llm_port = _free_port()
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{llm_port}",
           "ANTHROPIC_API_KEY": "offline-demo"}
    with _process([*sunrise, "fake-llm", "--port", str(llm_port)], env, "fake-llm"):
        _wait_http(f"http://127.0.0.1:{llm_port}/_control/stats", 30)
        console.print(f"offline model (a test double, not Claude) on port {llm_port}")
        subprocess.run([*sunrise, "db", "upgrade"], env=env, check=True)
        if not _redis_ok(settings.redis_url):
            console.print(f"[yellow]Redis is not reachable at {settings.redis_url}; "
                          "falling back to the in-process `sunrise ask`.[/yellow]")
            return subprocess.run([*sunrise, "ask", QUESTION], env=env).returncode
        return _full_stack(sunrise, env)


def _full_stack(sunrise: list[str], env: dict[str, str]) -> int:
    from sunrise.cli.console_output import print_job
    from sunrise.client import SunriseClient

    key = subprocess.run([*sunrise, "keys", "create", "--tenant", "demo"], env=env, check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    api_port = _free_port()
    with (_process([*sunrise, "worker", "--concurrency", "4"], env, "worker"),
          _process([*sunrise, "api", "--port", str(api_port), "--workers", "1"], env, "api")):
        base = f"http://127.0.0.1:{api_port}"
        _wait_http(f"{base}/healthz", 30)
        console.print(f"API on {base}, one Celery worker; asking: [bold]{QUESTION}[/bold]")
        with SunriseClient(base, key) as client:
            accepted = client.submit(QUESTION)
            for event in client.stream(accepted["job_id"]):
                if event.event == "tool_call":
                    console.print(f"[cyan]sql[/cyan] {event.data['sql']} → {event.data['rows']} rows")
                elif event.event == "llm_call":
                    console.print(f"[dim]model round {event.data['round']} "
                                  f"({event.data['stop_reason']})[/dim]")
            job = client.get(accepted["job_id"])
        console.rule("answer")
        print_job(job, console)
        return 0 if job["status"] == "succeeded" else 1
