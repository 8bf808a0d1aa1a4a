"""The compose file and Procfile describe the processes the README promises."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _compose_command() -> list[str]:
    if shutil.which("docker") and subprocess.run(
            ["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    assert shutil.which("docker-compose"), ".ci/run installs docker-compose; it is missing"
    return ["docker-compose"]


def test_compose_file_validates():
    done = subprocess.run([*_compose_command(), "-f", str(ROOT / "docker-compose.yml"),
                           "config", "-q"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_compose_runs_every_process():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"redis", "mariadb", "migrate", "api", "worker", "beat"} <= set(services)
    assert "noeviction" in " ".join(services["redis"]["command"])


def test_procfile_lines_are_sunrise_commands():
    lines = dict(line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines()
                 if line.strip())
    assert set(lines) >= {"web", "worker", "beat", "llm"}
    for command in lines.values():
        assert command.strip().startswith("sunrise ")
