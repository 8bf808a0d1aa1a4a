"""No key, no mystery: without ANTHROPIC_API_KEY the commands say so at once and how to
run offline; ``--offline`` and ``sunrise doctor`` work end to end on the offline model."""
from __future__ import annotations

import json
import os

import pytest

from tests.cli.test_cli import sunrise

pytestmark = pytest.mark.slow


@pytest.fixture
def keyless_env(tmp_path, sample_duckdb, redis_url):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "SUNRISE_ANTHROPIC_API_KEY",
                        "SUNRISE_ANTHROPIC_BASE_URL")}
    return {**env, "SUNRISE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
            "SUNRISE_DUCKDB_PATH": sample_duckdb, "SUNRISE_REDIS_URL": redis_url,
            "COLUMNS": "200"}


@pytest.mark.parametrize("args", [
    ("ask", "How many flights?"),
    ("worker",),
])
def test_without_a_key_commands_stop_at_once_and_say_how_to_run_offline(keyless_env, args):
    done = sunrise(keyless_env, *args, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "ANTHROPIC_API_KEY is not set" in done.stderr and "--offline" in done.stderr
    assert "unavailable" not in done.stderr and "retries" not in done.stderr


def test_report_local_without_a_key_stops_before_any_question(keyless_env, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("How many flights did each carrier fly?\n")
    done = sunrise(keyless_env, "report", str(questions), "-o", str(tmp_path / "r.html"),
                   "--local", timeout=60)
    assert done.returncode == 2 and "ANTHROPIC_API_KEY is not set" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_ask_offline_answers_with_the_in_process_offline_model(keyless_env):
    done = sunrise(keyless_env, "ask", "--offline", "How many flights did each carrier fly?",
                   "--json")
    assert done.returncode == 0, done.stderr
    assert "offline model" in done.stderr and "not Claude" in done.stderr
    job = json.loads(done.stdout)
    assert job["status"] == "succeeded" and "58665" in job["result"]["answer_text"]
    assert "thinking:" in done.stderr, "the model's thinking is narrated"


def test_report_local_offline_writes_the_report(keyless_env, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("How many flights did each carrier fly?\nHow many airlines are there?\n")
    out = tmp_path / "report.md"
    done = sunrise(keyless_env, "report", str(questions), "-o", str(out), "--local", "--offline")
    assert done.returncode == 0, done.stderr
    assert "2 of 2 answered" in done.stderr and "UA" in out.read_text()


def test_doctor_runs_every_check_offline_and_says_so(keyless_env):
    done = sunrise(keyless_env, "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "offline model" in out and "not Claude" in out
    for check in ("API key and model id", "capability table", "one tool round",
                  "prompt fits the cache", "second call reads the cache",
                  "expected cost per job"):
        line = next(line for line in out.splitlines() if check in line)
        assert "PASS" in line, line
    assert "thinking adaptive, effort medium" in out and "$" in out


def test_doctor_fails_a_model_the_api_does_not_know(keyless_env):
    done = sunrise({**keyless_env, "SUNRISE_MODEL": "claude-sonnet-9-typo"}, "doctor")
    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if "API key and model id" in line)
    assert "FAIL" in line and "llm_model_not_found" in done.stdout
