"""The counters other work moves through ``shared.metrics.Metrics``: schedule runs and
deliveries (the schedules work calls them), dataset imports and reaper sweeps (the
worker's tasks), each present from the start where its label values are known."""
from __future__ import annotations

from prometheus_client import CollectorRegistry

from shared.metrics import Metrics


def test_schedule_import_and_reaper_counters_move_by_what_is_reported():
    registry = CollectorRegistry()
    metrics = Metrics(registry)
    value = registry.get_sample_value
    assert value("sunrise_schedule_runs_total", {"outcome": "failed"}) == 0
    assert value("sunrise_reaper_actions_total", {"action": "requeued"}) == 0

    metrics.schedule_run_finished("succeeded")
    metrics.schedule_run_finished("failed")
    metrics.schedule_delivery("email", "failed")
    metrics.schedule_delivery("email", "failed")
    metrics.schedule_delivery("webhook", "delivered")
    metrics.dataset_import_finished("ready")
    metrics.dataset_import_finished(None)  # not this worker's to build: nothing counted
    metrics.reaper_swept({"stale": 3, "failed": 1, "requeued": 2, "imports": 4})

    assert value("sunrise_schedule_runs_total", {"outcome": "succeeded"}) == 1
    assert value("sunrise_schedule_runs_total", {"outcome": "failed"}) == 1
    assert value("sunrise_schedule_deliveries_total", {"type": "email", "outcome": "failed"}) == 2
    assert value("sunrise_schedule_deliveries_total",
                 {"type": "webhook", "outcome": "delivered"}) == 1
    assert value("sunrise_dataset_imports_total", {"outcome": "ready"}) == 1
    assert value("sunrise_dataset_imports_total", {"outcome": "failed"}) == 0
    assert value("sunrise_reaper_actions_total", {"action": "requeued"}) == 2
    assert value("sunrise_reaper_actions_total", {"action": "failed"}) == 1
    assert value("sunrise_reaper_actions_total", {"action": "imports_resent"}) == 4


def test_recording_never_raises(caplog):
    metrics = Metrics(CollectorRegistry())
    metrics.reaper_swept({"requeued": -1})  # a counter refuses to go down: logged, not raised
    assert "could not record a reaper sweep" in caplog.text
