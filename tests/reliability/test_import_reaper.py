"""The reaper and dataset imports (real MariaDB and Redis, no worker): an import whose
message was lost, or whose builder died, is sent again -- once; one whose message still
waits in the queue is not duplicated."""
from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import update

from shared.celery_factory import DATASETS_QUEUE, make_celery
from shared.db import session_scope
from shared.models import Dataset, utcnow
from shared.redis_client import redis_for
from tests.utils.datasets import upload
from worker.datasets.import_run import DatasetImporter
from worker.jobs.events import NullSink
from worker.jobs.reaper import Reaper


def _set(settings, dataset_id: str, **values) -> None:
    with session_scope(settings.database_url) as s:
        s.execute(update(Dataset).where(Dataset.id == dataset_id).values(**values))


def _ago(seconds: float) -> dt.datetime:
    return utcnow() - dt.timedelta(seconds=seconds)


def test_a_lost_or_orphaned_import_is_resent_once(settings, client, auth):
    reaper = Reaper(settings, make_celery(settings))
    broker = redis_for(settings.redis_url)
    dataset_id = upload(client, auth, "Lost", ("lost.csv", "a,b\n1,2\n")).get_json()["dataset_id"]
    assert broker.llen(DATASETS_QUEUE) == 1
    _set(settings, dataset_id, updated_at=_ago(60))
    assert reaper.run_once()["imports"] == 0, "its message still waits in the queue"

    broker.flushdb()  # Redis restarted empty: the message is lost
    assert reaper.run_once()["imports"] == 1
    assert broker.llen(DATASETS_QUEUE) == 1
    assert reaper.run_once()["imports"] == 0, "sent again once, not every sweep"

    broker.flushdb()
    _set(settings, dataset_id, heartbeat_at=_ago(60))  # claimed by a worker that died
    assert reaper.run_once()["imports"] == 1
    assert broker.llen(DATASETS_QUEUE) == 1
    with session_scope(settings.database_url) as s:
        assert s.get(Dataset, dataset_id).heartbeat_at is None, "claimable again"

    assert DatasetImporter(settings, NullSink()).run(dataset_id, 1) == "ready"
    assert DatasetImporter(settings, NullSink()).run(dataset_id, 1) is None, "built once"
    broker.flushdb()
    assert reaper.run_once()["imports"] == 0


def test_only_the_imports_own_unacknowledged_messages_hold_back_a_resend(settings, client, auth):
    """Chats delivered to busy workers (kombu's ``unacked`` hash) are not imports: they
    must not make a lost import look held. A delivered import is."""
    reaper = Reaper(settings, make_celery(settings))
    broker = redis_for(settings.redis_url)
    dataset_id = upload(client, auth, "Held", ("held.csv", "a\n1\n")).get_json()["dataset_id"]
    _set(settings, dataset_id, updated_at=_ago(60))
    broker.flushdb()  # the import's message is lost...
    for tag in range(3):  # ...while three chats are being answered
        broker.hset("unacked", f"chat-{tag}", json.dumps([{"body": ""}, "chat", "chat"]))
    broker.hset("unacked", "import-0", json.dumps([{"body": ""}, DATASETS_QUEUE,
                                                   DATASETS_QUEUE]))
    assert reaper.run_once()["imports"] == 0, "an import is delivered: it may be this one"
    broker.hdel("unacked", "import-0")
    assert reaper.run_once()["imports"] == 1, "the chats did not hide the lost import"
    assert broker.llen(DATASETS_QUEUE) == 1
