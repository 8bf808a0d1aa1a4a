"""Alert rules and scrape targets: deploy/prometheus/sunrise-alerts.yml passes `promtool
check rules` and its unit tests (`promtool test rules`, Debian's prometheus package, which
scripts/ensure_tools.sh installs); the PrometheusRule of the Kubernetes manifests holds the
same groups; the PodMonitors scrape ports the pods really expose, and every rule names
metrics Sunrise exports (or Prometheus's own ``up``)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.kustomize import pod_templates, render
from tests.utils.exported_metrics import (
    exported_by_sunrise,
    metric_names_in,
    unknown_labels,
)

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "sunrise-alerts.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "sunrise-alerts.test.yml"
KUBE = ROOT / "deploy" / "kubernetes"
# What the issue asks the rules to watch, by alert name.
EXPECTED_ALERTS = {"SunriseWorkersDown", "SunriseWorkerDown", "SunriseQueueAgeHigh",
                   "SunriseJobFailureRate", "SunriseModelErrors", "SunriseReaperReruns",
                   "SunriseTenantOverBudget", "SunriseTenantHourlySpendHigh",
                   "SunriseScheduleDeliveryFailures"}


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("promtool")
    assert exe, "promtool is missing: run scripts/ensure_tools.sh (Debian's prometheus package)"
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"]
            for rule in group["rules"]]


@pytest.fixture(scope="module")
def production() -> list[dict]:
    return render(KUBE / "overlays" / "production")


def test_promtool_checks_the_rules():
    done = promtool("check", "rules", RULES.name, cwd=RULES.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules())} rules found" in done.stdout


def test_promtool_unit_tests_pass_and_cover_every_alert():
    done = promtool("test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    tested = {case["alertname"] for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
              for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}
    assert {r["alert"] for r in rules()} == EXPECTED_ALERTS == tested


def test_promtool_fails_a_wrong_expectation(tmp_path):
    """The unit tests can fail: the same file expecting a queue alert too early does."""
    (tmp_path / RULES.name).write_text(RULES.read_text())
    broken = RULE_TESTS.read_text().replace("- eval_time: 4m\n        alertname: SunriseQueueAge",
                                            "- eval_time: 3m\n        alertname: SunriseQueueAge")
    assert broken != RULE_TESTS.read_text()
    (tmp_path / RULE_TESTS.name).write_text(broken)
    done = promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path)
    assert done.returncode != 0 and "SunriseQueueAgeHigh" in done.stdout + done.stderr


def test_every_rule_names_exported_metrics(client):
    exported = exported_by_sunrise(client)
    assert "sunrise_schedule_deliveries_total" in exported  # the worker's port was read
    assert "sunrise_oldest_queued_job_age_seconds" in exported  # and the API's /metrics
    for rule in rules():
        names = metric_names_in(rule["expr"])
        assert names, rule["alert"]
        unknown = names - set(exported) - {"up"}
        assert not unknown, (rule["alert"], unknown)
        assert unknown_labels(rule["expr"], exported) == [], rule["alert"]


def test_the_prometheus_rule_holds_the_plain_file(production):
    (obj,) = [o for o in production if o["kind"] == "PrometheusRule"]
    assert obj["spec"] == yaml.safe_load(RULES.read_text())
    assert obj["metadata"]["namespace"] == "sunrise"


def test_pod_monitors_scrape_ports_the_pods_expose(production):
    monitors = {o["metadata"]["name"]: o for o in production if o["kind"] == "PodMonitor"}
    assert set(monitors) == {"sunrise-api", "sunrise-worker"}
    # The rules tell workers and the API apart by these job names (namespace/name).
    assert all(re.search(r"sunrise-(api|worker)", name) for name in monitors)
    deployments = [o for o in production if o["kind"] == "Deployment"]
    for monitor in monitors.values():
        wanted = monitor["spec"]["selector"]["matchLabels"]
        matched = [t for t in pod_templates(deployments)
                   if wanted.items() <= t["metadata"]["labels"].items()]
        assert len(matched) == 1, monitor["metadata"]["name"]
        ports = {p["name"]: p["containerPort"] for c in matched[0]["spec"]["containers"]
                 for p in c.get("ports", [])}
        for endpoint in monitor["spec"]["podMetricsEndpoints"]:
            assert endpoint["port"] in ports and endpoint["path"] == "/metrics"
            annotations = matched[0]["metadata"].get("annotations", {})
            if "prometheus.io/port" in annotations:
                assert int(annotations["prometheus.io/port"]) == ports[endpoint["port"]]
