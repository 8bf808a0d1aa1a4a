"""Datasets through the API in tests: upload files, wait for an import to end, read an
import's event stream, a second tenant's credentials."""
from __future__ import annotations

import io
import json
import uuid

from shared.db import session_scope
from shared.keys import create_key
from tests.utils.waiting import wait_until


def upload(client, auth, name: str, *files: tuple[str, bytes | str], **fields):
    parts = [(io.BytesIO(content.encode() if isinstance(content, str) else content), filename)
             for filename, content in files]
    return client.post("/v1/datasets", headers=auth, content_type="multipart/form-data",
                       data={"name": name, **({"file": parts} if parts else {}), **fields})


def wait_imported(client, auth, dataset_id: str, *, timeout: float = 60) -> dict:
    """The dataset once its import has ended (ready or failed)."""
    def ended():
        view = client.get(f"/v1/datasets/{dataset_id}", headers=auth).get_json()
        return view if view["status"] != "importing" else None
    return wait_until(ended, timeout=timeout, interval=0.1)


def sse_events(client, auth, path: str) -> list[tuple[str, dict]]:
    body = client.get(path, headers=auth).get_data(as_text=True)
    events = []
    for frame in body.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in frame.splitlines()
                      if ": " in line and not line.startswith(":"))
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def other_tenant(settings) -> dict[str, str]:
    with session_scope(settings.database_url) as s:
        return {"Authorization": f"Bearer {create_key(s, f'other-{uuid.uuid4().hex[:8]}')}"}
