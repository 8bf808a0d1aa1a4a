"""The ``sunrise`` command line, run as a real subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture
def cli_env(tmp_path, sample_duckdb, fake_llm_server, redis_url):
    return {
        **os.environ,
        "SUNRISE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "SUNRISE_DUCKDB_PATH": sample_duckdb,
        "SUNRISE_REDIS_URL": redis_url,
        "ANTHROPIC_BASE_URL": fake_llm_server.base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }


def sunrise(env, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sunrise.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_ask_answers_from_the_sample_data_with_a_chart(cli_env):
    done = sunrise(cli_env, "ask", "How many flights did each carrier fly?", "--json")
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)
    assert job["status"] == "succeeded"
    (chart,) = job["result"]["charts"]
    top = max(chart["data"], key=lambda r: r["flights"])
    assert top == {"carrier": "UA", "flights": 58665}
    assert "58665" in job["result"]["answer_text"].replace(",", "")
    assert "sql" in done.stderr  # progress narrated on stderr


def test_keys_create_prints_the_key_alone_on_the_last_line(cli_env):
    assert sunrise(cli_env, "db", "upgrade").returncode == 0
    done = sunrise(cli_env, "keys", "create", "--tenant", "acme")
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip().splitlines()[-1]
    assert key.startswith("sk-sunrise-") and " " not in key


def test_sample_data_builds_the_duckdb_file(cli_env, tmp_path):
    import duckdb

    target = tmp_path / "sample.duckdb"
    done = sunrise(cli_env, "sample-data", "--path", str(target))
    assert done.returncode == 0, done.stderr
    with duckdb.connect(str(target), read_only=True) as con:
        tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        assert {"airlines", "airports", "flights", "planes", "weather"} <= tables
        assert con.execute("SELECT count(*) FROM flights").fetchone()[0] == 336776
