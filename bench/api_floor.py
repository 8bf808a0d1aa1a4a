"""The floors under figure 3: HTTP submits that do only what a submit must, on the same
parts, and none of our code.

Served like the API (``gunicorn --config python:api.gunicorn_conf``: gevent, the same
worker count) by a bare Flask app with two views:

- ``/submit``, the framework floor: reads the bearer key, parses the JSON body, inserts
  one row and commits it through SQLAlchemy's pool and pymysql (the API's driver),
  sends one Celery task with Sunrise's Celery configuration, and answers 202 with a
  small JSON body;
- ``/submit-contract``, the contract floor: the same, plus the calls the HTTP contract
  (``../shared/DESIGN.md``) makes every accepted question need, each made bare: the
  tenant's rate-limit counter (one Redis round trip: ``INCRBY`` and ``EXPIRE`` in a
  pipeline), the ``queued`` event on the job's stream (one ``XADD``), and one
  transaction on Sunrise's own tables: count the tenant's jobs in flight (the
  concurrency cap), read the tenant's default dataset (the pinned version), insert the
  conversation, the job and the user's message. The key maps to a tenant through a
  dict built at start (the API caches its key lookups too).

What figure 3's API spends per submit above these is ours.

    gunicorn --config python:api.gunicorn_conf 'bench.api_floor:create_app()'
"""
from __future__ import annotations

import datetime as dt
import json
import uuid

import redis
from flask import Flask, jsonify, request
from sqlalchemy import create_engine, text

from shared.celery_factory import make_celery
from shared.config import get_settings

TABLE = "bench_api_floor"
QUEUE = "bench-api-floor"
TASK = "bench.api_floor"
PATH = "/submit"
CONTRACT_PATH = "/submit-contract"
CREATE_TABLE = text(f"CREATE TABLE IF NOT EXISTS {TABLE} (id CHAR(36) PRIMARY KEY, "
                    "tenant VARCHAR(64) NOT NULL, message TEXT NOT NULL)")
INSERT = text(f"INSERT INTO {TABLE} (id, tenant, message) VALUES (:id, :tenant, :message)")
# The contract floor's statements, in the driver's own paramstyle: it runs them on the
# pooled connection's DBAPI cursor, the cheapest way SQLAlchemy's pool allows.
IN_FLIGHT = ("SELECT count(*) FROM jobs WHERE tenant_id = %s AND "
             "(status = 'queued' OR status = 'running') AND batch_id IS NULL")
DEFAULT_DATASET = ("SELECT id, version FROM datasets WHERE tenant_id = %s AND "
                   "deleted_at IS NULL AND is_default LIMIT 1 LOCK IN SHARE MODE")
INSERT_CONVERSATION = ("INSERT INTO conversations (id, tenant_id, title, created_at, updated_at) "
                       "VALUES (%s, %s, %s, %s, %s)")
INSERT_JOB = (
    "INSERT INTO jobs (id, tenant_id, conversation_id, status, message, model, queue, "
    "attempt, cancel_requested, truncated, tool_rounds, sql_executed, sql_cache_hits, "
    "llm_ms, sql_ms, wall_ms, llm_retries, input_tokens, output_tokens, cache_read_tokens, "
    "cache_creation_tokens, total_effective_input, context_tokens, created_at, enqueued_at) "
    "VALUES (%s, %s, %s, 'queued', %s, 'm', 'chat', 0, 0, 0, 0, 0, 0, "
    "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, %s, %s)")
INSERT_MESSAGE = ("INSERT INTO messages (conversation_id, job_id, role, text, created_at) "
                  "VALUES (%s, %s, 'user', %s, %s)")


def create_app() -> Flask:
    settings = get_settings()
    engine = create_engine(settings.database_url, pool_size=10, max_overflow=20)
    celery = make_celery(settings)
    app = Flask(__name__)

    @app.post(PATH)
    def submit():
        key = request.headers.get("Authorization", "").partition(" ")[2]
        body = request.get_json()
        job_id = str(uuid.uuid4())
        with engine.begin() as conn:
            conn.execute(INSERT, {"id": job_id, "tenant": key[:64], "message": body["message"]})
        celery.send_task(TASK, args=[job_id], queue=QUEUE)
        return jsonify(job_id=job_id, status="queued"), 202

    tenants = _tenant_ids(engine)
    broker = redis.Redis.from_url(settings.redis_url)

    @app.post(CONTRACT_PATH)
    def submit_contract():
        key = request.headers.get("Authorization", "").partition(" ")[2]
        tenant = tenants[hash(key) % len(tenants)]
        body = request.get_json()
        job_id, conversation_id = str(uuid.uuid4()), str(uuid.uuid4())
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        with broker.pipeline(transaction=False) as pipe:
            pipe.incrby(f"bench-floor:rate:{tenant}", 1).expire(f"bench-floor:rate:{tenant}", 120)
            pipe.execute()
        message = body["message"]
        conn = engine.raw_connection()
        try:
            with conn.cursor() as cur:
                cur.execute(IN_FLIGHT, (tenant,))
                cur.fetchone()
                cur.execute(DEFAULT_DATASET, (tenant,))
                cur.fetchone()
                cur.execute(INSERT_CONVERSATION, (conversation_id, tenant, message[:200], now, now))
                cur.execute(INSERT_JOB, (job_id, tenant, conversation_id, message, now, now))
                cur.execute(INSERT_MESSAGE, (conversation_id, job_id, message, now))
            conn.commit()
        finally:
            conn.close()  # back to the pool (rolled back there if the commit was not reached)
        view = {"job_id": job_id, "conversation_id": conversation_id, "status": "queued"}
        broker.xadd(f"bench-floor:events:{job_id}", {"event": "queued",
                                                     "data": json.dumps(view)})
        celery.send_task(TASK, args=[job_id], queue=QUEUE)
        return jsonify(view), 202

    return app


def _tenant_ids(engine) -> list[int]:
    with engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT id FROM tenants ORDER BY id"))] or [0]


def prepare(database_url: str) -> None:
    """The floor's table, made before its server starts."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(CREATE_TABLE)
    engine.dispose()
