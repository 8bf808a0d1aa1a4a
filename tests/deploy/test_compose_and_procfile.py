"""The compose file and Procfile describe the processes docs/operating.md and
docs/deployment.md promise."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from shared.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SUNRISE_SERVICES = ("migrate", "api", "worker", "beat")


def _compose_command() -> list[str]:
    if shutil.which("docker") and subprocess.run(
            ["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    assert shutil.which("docker-compose"), ".ci/run installs docker-compose; it is missing"
    return ["docker-compose"]


def _resolved() -> dict:
    """The compose file as compose itself resolves it (anchors, merges, defaults)."""
    done = subprocess.run([*_compose_command(), "-f", str(ROOT / "docker-compose.yml"),
                           "config"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return yaml.safe_load(done.stdout)


def _seconds(duration: str) -> float:
    units = {"h": 3600, "m": 60, "s": 1}
    return sum(float(n) * units[u] for n, u in re.findall(r"([\d.]+)([hms])", duration))


def test_compose_file_validates():
    done = subprocess.run([*_compose_command(), "-f", str(ROOT / "docker-compose.yml"),
                           "config", "-q"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_compose_runs_every_process():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"redis", "mariadb", *SUNRISE_SERVICES} <= set(services)
    assert "noeviction" in " ".join(services["redis"]["command"])


def test_sunrise_services_run_the_image_read_only_with_declared_writable_paths():
    services = _resolved()["services"]
    for name in SUNRISE_SERVICES:
        service = services[name]
        assert service["build"]["context"] == str(ROOT), name
        assert service["read_only"] is True and service["tmpfs"] == ["/tmp"], name
        assert [v.split(":")[1] for v in service["volumes"]] == ["/data"], name
        assert service["environment"]["SUNRISE_DATA_DIR"] == "/data", name


def test_health_checks_fit_each_process():
    services = _resolved()["services"]
    assert "healthcheck" not in services["api"]  # the image's own: GET /readyz
    worker_probe = services["worker"]["healthcheck"]["test"]
    assert worker_probe[:4] == ["CMD", "python", "-m", "sunrise.healthcheck"]
    assert worker_probe[4].endswith(f":{Settings().worker_metrics_port}/metrics")
    for one_shot_or_portless in ("migrate", "beat"):
        check = services[one_shot_or_portless]["healthcheck"]
        # `disable: true`, which compose v1 writes as the equivalent `test: [NONE]`.
        assert check.get("disable") is True or check.get("test") == ["NONE"], check


def test_worker_stop_grace_covers_the_job_deadline_and_every_queue():
    worker = _resolved()["services"]["worker"]
    assert _seconds(worker["stop_grace_period"]) >= Settings().job_deadline_s + 30
    queues = worker["command"][worker["command"].index("--queues") + 1].split(",")
    assert {"chat", "reports", "datasets"} <= set(queues)


def test_procfile_lines_are_sunrise_commands():
    lines = dict(line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines()
                 if line.strip())
    assert set(lines) >= {"web", "worker", "beat", "llm"}
    for command in lines.values():
        assert command.strip().startswith("sunrise ")
