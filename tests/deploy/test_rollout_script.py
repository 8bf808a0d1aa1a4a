"""deploy/kubernetes/rollout.sh runs migrations before the rollout and stops when they fail.

There is no cluster here, so `kubectl` is a stand-in that records each call and fails
the calls a test names; the label selectors the script uses are checked against the
rendered objects, so each step applies exactly the objects it means to.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from tests.deploy.kustomize import render

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "kubernetes" / "rollout.sh"
OVERLAY = ROOT / "deploy" / "kubernetes" / "overlays" / "production"
FAKE_KUBECTL = """#!/usr/bin/env bash
echo "$*" >> "$KUBECTL_LOG"
case "$*" in *"$KUBECTL_FAIL"*) [ -n "$KUBECTL_FAIL" ] && exit 1;; esac
exit 0
"""


def run_script(tmp_path: Path, fail: str = "") -> tuple[int, list[str], str]:
    fake = tmp_path / "kubectl"
    fake.write_text(FAKE_KUBECTL)
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {"PATH": "/usr/bin:/bin", "KUBECTL": f"{fake} --context t", "KUBECTL_LOG": str(log),
           "KUBECTL_FAIL": fail}
    done = subprocess.run(["bash", str(SCRIPT), str(OVERLAY)], capture_output=True, text=True,
                          timeout=60, env=env)
    calls = log.read_text().splitlines() if log.exists() else []
    return done.returncode, calls, done.stderr


def test_migrations_complete_before_anything_else_is_applied(tmp_path):
    code, calls, stderr = run_script(tmp_path)
    assert code == 0, stderr
    o = str(OVERLAY)
    assert calls == [
        f"--context t apply -k {o} -l app.kubernetes.io/component in (config,storage)",
        "--context t -n sunrise get secret sunrise-secrets",
        "--context t -n sunrise delete job sunrise-migrate --ignore-not-found --wait=true",
        f"--context t apply -k {o} -l app.kubernetes.io/component=migrate",
        "--context t -n sunrise wait --for=condition=complete job/sunrise-migrate --timeout=15m",
        f"--context t apply -k {o}",
        "--context t -n sunrise rollout status deployment/sunrise-api --timeout=15m",
        "--context t -n sunrise rollout status deployment/sunrise-worker --timeout=15m",
        "--context t -n sunrise rollout status deployment/sunrise-beat --timeout=15m",
    ]


def test_a_failed_migration_stops_before_the_rollout(tmp_path):
    code, calls, stderr = run_script(tmp_path, fail="wait --for=condition=complete")
    assert code == 1 and "migrations did not complete" in stderr
    assert calls[-1] == "--context t -n sunrise logs job/sunrise-migrate --tail=50"
    assert f"--context t apply -k {OVERLAY}" not in calls


def test_a_missing_secret_stops_before_the_migration(tmp_path):
    code, calls, stderr = run_script(tmp_path, fail="get secret")
    assert code == 1 and "secret.example.yaml" in stderr
    assert not [c for c in calls if "migrate" in c]


def test_each_step_selects_the_objects_it_means():
    objects = render(OVERLAY)

    def selected(components: set[str]) -> set[tuple[str, str]]:
        return {(o["kind"], o["metadata"]["name"]) for o in objects
                if o["metadata"].get("labels", {}).get("app.kubernetes.io/component") in components}

    assert selected({"config", "storage"}) == {
        ("Namespace", "sunrise"), ("ConfigMap", "sunrise-config"),
        ("PersistentVolumeClaim", "sunrise-data")}
    assert selected({"migrate"}) == {("Job", "sunrise-migrate")}
    unlabelled = [o["metadata"]["name"] for o in objects
                  if "app.kubernetes.io/component" not in o["metadata"].get("labels", {})]
    assert unlabelled == []
