"""A dataset import that meets a busy worker is sent again until a slot is free: the
retries are not counted against Celery's default limit of 3 (``retry(max_retries=None)``
alone falls back to that limit)."""
from __future__ import annotations

from types import SimpleNamespace

from worker import tasks
from worker.datasets.import_run import ImportSlotsBusy


def test_an_import_busy_more_than_three_times_still_runs(monkeypatch):
    tries = []

    def run(dataset_id: str, version: int) -> str:
        tries.append((dataset_id, version))
        if len(tries) <= 5:
            raise ImportSlotsBusy("all 2 import slots of this worker are taken")
        return "ready"

    runners = SimpleNamespace(datasets=SimpleNamespace(run=run),
                              settings=SimpleNamespace(import_busy_retry_s=0.01))
    monkeypatch.setattr(tasks, "runners_for", lambda app: runners)
    result = tasks.import_dataset.apply(args=("d1", 1))
    assert result.successful(), result.traceback
    assert tries == [("d1", 1)] * 6
