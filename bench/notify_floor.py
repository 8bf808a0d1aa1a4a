"""The floor under figure 4: a completion notification on the same parts, none of our
code.

The "worker" side (``finish``, run by the bench driver) commits one UPDATE of one row
through SQLAlchemy's pool and pymysql (the worker's driver) and, once the commit has
returned, appends one entry to the object's Redis stream (a plain XADD through
redis-py; the worker's publish is one Lua script around the same XADD). The clock
starts when the commit returns, figure 4's definition.

The serving side is a bare Flask app served like the API (``gunicorn --config
python:api.gunicorn_conf``, gevent) at the API's own paths, so the driver's clients
(``sunrise.client.SunriseClient``) make the same requests. Each waiting request blocks
in an XREAD of its own on its object's stream, reading from the start: the stream's
``queued`` entry comes back at once (an SSE stream writes it, a long-poll reads past
it), then the read blocks until the terminal entry, which the request writes and
ends. One read per waiting client, rather than the API's one hub reader for all
(api/event_hub.py), is no more work at the commit than the hub must do: each client
is woken by one reply on its own connection, where the hub reads one reply and then
hands it to every waiting client through a queue.

    gunicorn --config python:api.gunicorn_conf 'bench.notify_floor:create_app()'
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator

import redis
from flask import Flask, Response, request
from sqlalchemy import Engine, create_engine, text

from shared.config import get_settings

TABLE = "bench_notify_floor"
TERMINAL = "succeeded"
# The longest a waiting request blocks: the driver's long-poll asks for 30 s.
MAX_WAIT_S = 30.0
CREATE_TABLE = text(f"CREATE TABLE IF NOT EXISTS {TABLE} (id CHAR(36) PRIMARY KEY, "
                    "status VARCHAR(16) NOT NULL)")
INSERT = text(f"INSERT INTO {TABLE} (id, status) VALUES (:id, 'queued')")
UPDATE = text(f"UPDATE {TABLE} SET status = '{TERMINAL}' WHERE id = :id")


def stream_key(object_id: str) -> str:
    return f"bench:notify-floor:{object_id}"


def create_app() -> Flask:
    settings = get_settings()
    events = redis.Redis.from_url(settings.redis_url, decode_responses=True)
    app = Flask(__name__)

    @app.get("/v1/jobs/<object_id>/events")
    def stream(object_id: str):
        frames = (f"id: {entry_id}\nevent: {fields['event']}\ndata: {fields['data']}\n\n"
                  for entry_id, fields in _entries(events, object_id, MAX_WAIT_S))
        return Response(frames, mimetype="text/event-stream")

    @app.get("/v1/jobs/<object_id>")
    def long_poll(object_id: str):
        wait_s = min(MAX_WAIT_S, float(request.args.get("wait", 0)))
        body = '{"status":"queued"}'
        for _, fields in _entries(events, object_id, wait_s):
            body = fields["data"]
        return Response(body, mimetype="application/json")

    return app


def _entries(events: redis.Redis, object_id: str,
             wait_s: float) -> Iterator[tuple[str, dict[str, str]]]:
    """The object's stream entries from its start until the terminal one, each read
    blocking at most until ``wait_s`` has passed."""
    key, after = stream_key(object_id), "0-0"
    deadline = time.monotonic() + wait_s
    while (left_ms := int((deadline - time.monotonic()) * 1000)) > 0:
        for _, entries in events.xread({key: after}, block=left_ms) or ():
            for after, fields in entries:
                yield after, fields
                if fields["event"] == TERMINAL:
                    return


def prepare(database_url: str) -> Engine:
    """The floor's table, made before its server starts; returns the driver's engine."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(CREATE_TABLE)
    return engine


def hold(engine: Engine, events: redis.Redis, object_id: str) -> None:
    """A queued object: its row and its stream's ``queued`` entry, as a submit leaves
    them."""
    with engine.begin() as conn:
        conn.execute(INSERT, {"id": object_id})
    events.xadd(stream_key(object_id), {"event": "queued",
                                        "data": json.dumps({"status": "queued"})})


def finish(engine: Engine, events: redis.Redis, object_id: str) -> float:
    """Commit the object's end, then publish it; returns when the commit returned
    (epoch seconds)."""
    data = json.dumps({"job_id": object_id, "status": TERMINAL}, separators=(",", ":"))
    with engine.connect() as conn:
        conn.execute(UPDATE, {"id": object_id})
        conn.commit()
        committed = time.time()
        events.xadd(stream_key(object_id), {"event": TERMINAL, "data": data})
    return committed
