"""``SUNRISE_API_URL`` and ``SUNRISE_API_KEY`` stand in for ``--api`` and ``--key`` in every
command that talks to the API; a flag given wins. The API is a real HTTP server on
127.0.0.1 that records what it was sent."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sunrise.cli.main import main
from tests.utils.stub_http import stub_http

NO_DATASETS = {"items": [], "next_cursor": None}
UNKNOWN_KEY = {"type": "https://sunrise.dev/problems/invalid_key", "title": "Unauthorized",
               "status": 401, "detail": "The API key is unknown or revoked."}


def _run(args: list[str], **env: str):
    return CliRunner().invoke(main, args, env={"SUNRISE_API_URL": None,
                                               "SUNRISE_API_KEY": None, **env})


def test_the_environment_names_the_api_and_the_key():
    with stub_http(200, NO_DATASETS) as api:
        done = _run(["datasets", "list"], SUNRISE_API_URL=api.url, SUNRISE_API_KEY="sk-env")
    assert done.exit_code == 0, done.output
    ((method, path, headers),) = api.requests
    assert (method, path) == ("GET", "/v1/datasets?limit=100")
    assert headers["Authorization"] == "Bearer sk-env"


def test_flags_win_over_the_environment():
    with stub_http(200, NO_DATASETS) as named, stub_http(200, NO_DATASETS) as flagged:
        done = _run(["datasets", "list", "--api", flagged.url, "--key", "sk-flag"],
                    SUNRISE_API_URL=named.url, SUNRISE_API_KEY="sk-env")
    assert done.exit_code == 0, done.output
    assert named.requests == []
    ((_, _, headers),) = flagged.requests
    assert headers["Authorization"] == "Bearer sk-flag"


def test_a_batch_goes_to_the_api_the_environment_names(tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("How many flights?\n")
    with stub_http(401, UNKNOWN_KEY, content_type="application/problem+json") as api:
        done = _run(["report", str(questions), "-o", str(tmp_path / "report.html")],
                    SUNRISE_API_URL=api.url, SUNRISE_API_KEY="sk-env")
    assert done.exit_code == 1
    ((method, path, headers),) = api.requests
    assert (method, path, headers["Authorization"]) == ("POST", "/v1/batches", "Bearer sk-env")
    assert "unknown or revoked" in done.output


@pytest.mark.parametrize("command", [["datasets", "list"], ["datasets", "add"],
                                     ["datasets", "describe"], ["datasets", "refresh"],
                                     ["report"], ["eval"]])
def test_every_command_with_api_and_key_names_their_variables_in_its_help(command):
    shown = _run([*command, "--help"]).output
    assert "SUNRISE_API_URL" in shown and "SUNRISE_API_KEY" in shown


@pytest.mark.slow
def test_tenant_wins_over_the_environments_key(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUNRISE_")}
    env["SUNRISE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'app.db'}"

    def sunrise(*args: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sunrise.cli.main", *args],
                              env={**env, **extra}, capture_output=True, text=True, timeout=120)

    assert sunrise("db", "upgrade").returncode == 0
    with stub_http(200, NO_DATASETS) as api:
        done = sunrise("datasets", "list", "--tenant", "acme", SUNRISE_API_URL=api.url,
                       SUNRISE_API_KEY="sk-env")
    assert done.returncode == 0, done.stderr
    ((_, _, headers),) = api.requests
    assert headers["Authorization"].startswith("Bearer sk-sunrise-")
