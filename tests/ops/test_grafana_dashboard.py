"""deploy/grafana/sunrise.json: every query names metrics Sunrise's scrape targets really
export (the API's /metrics and a worker's metrics port, scraped here), with labels they
carry; every query is PromQL that Prometheus parses (promtool); the panels cover what
docs/observability.md promises."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.utils.exported_metrics import (
    exported_by_sunrise,
    metric_names_in,
    unknown_labels,
)

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "sunrise.json"
# Grafana's interval variables, as Prometheus would see them once Grafana fills them in.
GRAFANA_VARIABLES = {"$__rate_interval": "2m", "$__interval": "1m", "$__range": "1h"}
# The list: jobs by status, queue depth and oldest age, model latency and errors,
# tokens and cost per tenant and model, cache-hit ratio, SQL time, imports, deliveries.
MUST_SHOW = {"sunrise_jobs", "sunrise_jobs_finished_total", "sunrise_queue_depth",
             "sunrise_oldest_queued_job_age_seconds", "sunrise_job_llm_seconds_bucket",
             "sunrise_job_errors_total", "sunrise_llm_tokens_total", "sunrise_llm_cost_usd_total",
             "sunrise_tenant_spend_usd", "sunrise_prompt_cache_hit_ratio",
             "sunrise_job_sql_seconds_bucket", "sunrise_dataset_imports_total",
             "sunrise_schedule_deliveries_total"}


def queries() -> list[tuple[str, str]]:
    """(panel title, expr) of every query of every panel."""
    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"]
            for target in panel.get("targets", [])]


def as_prometheus_sees_it(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    assert "$" not in expr, expr
    return expr


def test_every_panel_has_queries_and_they_cover_the_topics():
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert panels and all(p.get("targets") for p in panels)
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    shown = set().union(*(metric_names_in(expr) for _, expr in queries()))
    assert shown >= MUST_SHOW, MUST_SHOW - shown


def test_every_query_names_a_metric_sunrise_exports(client):
    exported = exported_by_sunrise(client)
    assert "sunrise_job_llm_seconds_bucket" in exported and "sunrise_queue_depth" in exported
    for title, expr in queries():
        names = metric_names_in(expr)
        assert names, title
        unknown = names - set(exported) - {"up"}
        assert not unknown, (title, unknown)
        assert unknown_labels(expr, exported) == [], title


def test_the_checks_catch_a_wrong_name_or_label(client):
    exported = exported_by_sunrise(client)
    assert metric_names_in("rate(sunrise_job_finished_total[5m])") - set(exported) == {
        "sunrise_job_finished_total"}
    assert unknown_labels('sunrise_jobs_finished_total{state="failed"}', exported) == [
        "sunrise_jobs_finished_total{state}"]


def test_every_query_is_valid_promql(tmp_path):
    """promtool parses each query as a recording rule's expression."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"sunrise_dashboard:query_{i}", "expr": as_prometheus_sees_it(expr)}
        for i, (_, expr) in enumerate(queries())]}]}
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump(rules))
    exe = shutil.which("promtool")
    assert exe, "promtool is missing: run scripts/ensure_tools.sh"
    done = subprocess.run([exe, "check", "rules", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"SUCCESS: {len(queries())} rules found", done.stdout)
