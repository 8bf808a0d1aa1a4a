"""The framework floor under figure 3: an HTTP submit that does only what any submit
must, on the same parts, and none of our code.

Served like the API (``gunicorn --config python:api.gunicorn_conf``: gevent, the same
worker count) by a bare Flask app whose one view reads the bearer key, parses the JSON
body, inserts one row and commits it through SQLAlchemy's pool and pymysql (the API's
driver), sends one Celery task with Sunrise's Celery configuration, and answers 202
with a small JSON body. What figure 3's API spends per submit above this is ours.

    gunicorn --config python:api.gunicorn_conf 'bench.api_floor:create_app()'
"""
from __future__ import annotations

import uuid

from flask import Flask, jsonify, request
from sqlalchemy import create_engine, text

from shared.celery_factory import make_celery
from shared.config import get_settings

TABLE = "bench_api_floor"
QUEUE = "bench-api-floor"
TASK = "bench.api_floor"
PATH = "/submit"
CREATE_TABLE = text(f"CREATE TABLE IF NOT EXISTS {TABLE} (id CHAR(36) PRIMARY KEY, "
                    "tenant VARCHAR(64) NOT NULL, message TEXT NOT NULL)")
INSERT = text(f"INSERT INTO {TABLE} (id, tenant, message) VALUES (:id, :tenant, :message)")


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

    return app


def prepare(database_url: str) -> None:
    """The floor's table, made before its server starts."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(CREATE_TABLE)
    engine.dispose()
