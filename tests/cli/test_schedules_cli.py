"""``sunrise schedules add|list|runs|pause|resume|run-now`` as real subprocesses against the
real API (gunicorn), MariaDB and Redis."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture
def env(base_settings, fake_llm_server):
    from tests.utils.live_api import settings_env

    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("SUNRISE_", "ANTHROPIC_"))}
    return {**clean, **settings_env(base_settings)}


def sunrise(env, api, tenant, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sunrise.cli.main", "schedules", *args,
                           "--tenant", tenant, "--api", api.base_url], env=env,
                          capture_output=True, text=True, timeout=120)


def test_add_list_pause_resume_run_now_and_runs(env, live_api):
    tenant = f"cli-{uuid.uuid4().hex[:10]}"
    added = sunrise(env, live_api, tenant, "add", "--name", "Weekly", "--cron", "0 7 * * 1",
                    "--timezone", "Europe/Berlin", "--question", "How many flights?",
                    "--email", "ops@example.com", "--webhook", "http://127.0.0.1:9/h",
                    "--condition", "SELECT count(*) FROM flights > 10")
    assert added.returncode == 0, added.stderr
    sid = added.stdout.strip().splitlines()[-1]
    assert "webhook secret (shown once)" in added.stderr

    listed = json.loads(sunrise(env, live_api, tenant, "list", "--json").stdout)
    assert [s["schedule_id"] for s in listed] == [sid]
    assert listed[0]["condition"] == {"sql": "SELECT count(*) FROM flights", "op": ">",
                                      "value": 10.0}

    assert sunrise(env, live_api, tenant, "pause", sid).stdout.strip() == "paused"
    assert sunrise(env, live_api, tenant, "resume", sid).stdout.strip().endswith("Z")
    run_id = sunrise(env, live_api, tenant, "run-now", sid).stdout.strip()
    runs = sunrise(env, live_api, tenant, "runs", sid)
    assert runs.returncode == 0 and run_id in runs.stdout

    bad = sunrise(env, live_api, tenant, "add", "--name", "x", "--cron", "every day",
                  "--question", "q", "--email", "ops@example.com")
    assert bad.returncode != 0 and "cron" in bad.stderr
