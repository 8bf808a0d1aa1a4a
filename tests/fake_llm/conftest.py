"""Fixtures for the offline model's own tests: the session server of tests/conftest.py
(`fake_llm_server`, 127.0.0.1, ephemeral port), reset before each test and driven
by the real Anthropic SDK and a raw control-plane client."""

from __future__ import annotations

import anthropic
import httpx
import pytest

MODEL = "claude-sonnet-4-6"


@pytest.fixture
def control(fake_llm_server):
    """An httpx client on `/_control/`, after a reset of the server."""
    with httpx.Client(base_url=fake_llm_server.base_url + "/_control", timeout=5) as http:
        http.post("/reset").raise_for_status()
        yield http


@pytest.fixture
def server(fake_llm_server, control):
    return fake_llm_server


@pytest.fixture
def make_client(server):
    """Build real SDK clients against the server (`max_retries` 0 unless given)."""

    made = []

    def make(**kwargs) -> anthropic.Anthropic:
        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("timeout", 10)
        made.append(anthropic.Anthropic(base_url=server.base_url, **kwargs))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client) -> anthropic.Anthropic:
    return make_client()


@pytest.fixture
def add_scenario(control):
    def add(name: str, turns: list[dict]) -> None:
        control.post("/scenarios", json={"name": name, "turns": turns}).raise_for_status()

    return add


@pytest.fixture
def arm_fault(control):
    def arm(kind: str, **spec) -> None:
        if "rate" not in spec:
            spec.setdefault("count", 1)
        control.post("/faults", json={"kind": kind, **spec}).raise_for_status()

    return arm


@pytest.fixture
def request_log(control):
    def entries(path: str = "/v1/messages") -> list[dict]:
        return [e for e in control.get("/log").json()["entries"] if e["path"] == path]

    return entries


ANALYST_SYSTEM = (
    "You are Sunrise, a data analyst. Answer with JSON.\n"
    "CREATE TABLE airlines (carrier VARCHAR, name VARCHAR);\n"
    "CREATE TABLE flights (year BIGINT, month BIGINT, day BIGINT, dep_delay DOUBLE, "
    "arr_delay DOUBLE, carrier VARCHAR, flight BIGINT, origin VARCHAR, dest VARCHAR, "
    "distance DOUBLE);\n"
    "Today's date: 2024-05-01\n"
)
SQL_TOOL = {
    "name": "execute_sql",
    "description": "Run one read-only SQL query against the DuckDB database.",
    "input_schema": {
        "type": "object",
        "properties": {"sql": {"type": "string"}},
        "required": ["sql"],
    },
}


@pytest.fixture
def analyst_request():
    """Keyword arguments for `messages.create` as the Sunrise worker sends them."""

    def build(messages: list[dict], **overrides) -> dict:
        request = {
            "model": MODEL,
            "max_tokens": 2048,
            "system": [
                {"type": "text", "text": ANALYST_SYSTEM, "cache_control": {"type": "ephemeral"}}
            ],
            "tools": [SQL_TOOL],
            "messages": messages,
        }
        request.update(overrides)
        return request

    return build


@pytest.fixture
def flights_db():
    """An in-memory DuckDB holding the ANALYST_SYSTEM schema with a few rows."""
    import duckdb

    db = duckdb.connect()
    for statement in ANALYST_SYSTEM.split("\n"):
        if statement.startswith("CREATE TABLE"):
            db.execute(statement)
    db.execute("INSERT INTO airlines VALUES ('UA', 'United'), ('AA', 'American'), ('DL', 'Delta')")
    rows = [
        (2013, m, 1, d, d - 3, c, 100 + i, o, "LAX", dist)
        for i, (m, d, c, o, dist) in enumerate(
            [
                (1, 5.0, "UA", "JFK", 2475.0),
                (1, 12.0, "UA", "EWR", 2454.0),
                (2, -3.0, "UA", "JFK", 2475.0),
                (2, 30.0, "AA", "LGA", 1389.0),
                (3, 8.0, "AA", "JFK", 2475.0),
                (3, 1.0, "DL", "LGA", 762.0),
            ]
        )
    ]
    db.executemany("INSERT INTO flights VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    yield db
    db.close()


def tool_result_text(db, sql: str, query_id: int) -> str:
    """The worker's documented tool-result format for `sql` (no summary block)."""
    cursor = db.execute(sql)
    header = [column[0] for column in cursor.description]
    rows = cursor.fetchall()
    lines = [f"query_id={query_id} rows={len(rows)} shown={len(rows)}", ",".join(header)]
    lines += [",".join("" if v is None else str(v) for v in row) for row in rows]
    return "\n".join(lines)


@pytest.fixture
def run_sql_tool(flights_db):
    return lambda sql, query_id=1: tool_result_text(flights_db, sql, query_id)
