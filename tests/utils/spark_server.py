"""A real Spark Connect server for the tests: local mode, 127.0.0.1 only, a free port.

It comes from the full ``pyspark`` distribution of the dev extra (its jars hold
``spark-connect``) and runs on the machine's Java 17. It is started in the foreground
with ``spark-submit --class ...SparkConnectServer`` (the pip package ships no
``sbin/start-connect-server.sh``) in its own process group, so it is stopped by its pid.
Everything it writes (warehouse, Derby metastore, scratch, its log) lives under one
temporary directory; no option names a remote repository, so nothing is downloaded.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
READY_LINE = "Spark Connect server started"
START_WAIT_S = 180.0  # two shared cores under load: the JVM takes about a minute


@dataclass(frozen=True)
class SparkServer:
    url: str
    port: int
    pid: int
    log: Path
    ui_port: int

    def running_jobs(self) -> list[dict]:
        """The Spark jobs running on the server now, as its own monitoring REST API
        (the driver's UI, 127.0.0.1 only) lists them: each with ``jobId``, ``name`` and
        ``jobTags`` (a Connect operation's tags, the engine's ``sunrise-...`` tag among
        them)."""
        base = f"http://127.0.0.1:{self.ui_port}/api/v1/applications"
        with urllib.request.urlopen(base, timeout=60) as resp:
            (app,) = json.load(resp)
        url = f"{base}/{app['id']}/jobs?status=running"
        with urllib.request.urlopen(url, timeout=60) as resp:
            return json.load(resp)


def spark_home() -> Path:
    import pyspark  # the full distribution (dev extra), not pyspark-client

    home = Path(pyspark.__file__).parent
    if not (home / "jars").is_dir():
        raise RuntimeError("pyspark-client is installed, not the full pyspark the tests need "
                           "(`make install`)")
    return home


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def spark_connect_server(workdir: Path) -> Iterator[SparkServer]:
    """Start the server, wait (bounded) until it listens, yield it, stop it by pid."""
    home, port, ui_port = spark_home(), _free_port(), _free_port()
    log = workdir / "spark-connect.log"
    confs = {
        # The UI only for its REST API (running jobs); bound to SPARK_LOCAL_IP below.
        "spark.ui.enabled": "true",
        "spark.ui.port": str(ui_port),
        "spark.port.maxRetries": "0",
        "spark.sql.shuffle.partitions": "2",
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
        "spark.local.dir": str(workdir / "scratch"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={workdir / 'derby'}",
    }
    command = [str(home / "bin" / "spark-submit"), "--master", "local[2]",
               "--driver-memory", "1g"]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    command += ["--class", CLASS, "spark-internal"]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_PYTHON", None)
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=workdir, start_new_session=True)
    try:
        _wait_ready(process, log, port)
        yield SparkServer(f"sc://127.0.0.1:{port}", port, process.pid, log, ui_port)
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen, log: Path, port: int) -> None:
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited ({process.returncode}): "
                               f"{log.read_text(errors='replace')[-2000:]}")
        if READY_LINE in log.read_text(errors="replace"):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
        time.sleep(0.5)
    raise RuntimeError(f"the Spark Connect server did not start within {START_WAIT_S:g} s: "
                       f"{log.read_text(errors='replace')[-2000:]}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to its own process group (the pid it was started as), then SIGKILL."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
