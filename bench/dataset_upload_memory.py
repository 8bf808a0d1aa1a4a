"""Figure 8, memory during an upload: the API's and the import worker's memory while a
CSV goes through ``POST /v1/datasets`` and is imported, for two file sizes.

The stack is real and private (``bench.stack.Stack``): ``sunrise api`` (gunicorn, one
gevent worker) and one Celery worker on the ``datasets`` queue, each a process group
of its own. The file goes up through ``sunrise.client`` (streamed from disk), then the
import's event stream is followed to ``ready``. While that runs, each group's
proportional set size (Pss, summed over its live processes, every 0.1 s) is sampled;
the peak over the whole upload + import is the figure, next to each group's Pss just
before the upload (its idle size). Flat in the file size means the larger file's peak
is within ``FLAT_MARGIN_MB`` (or 10 %) of the smaller one's, for the API. The worker's
import is held by DuckDB's memory limit (``SUNRISE_IMPORT_MEMORY_LIMIT``) instead, and
grows with the file inside it; so the larger file is imported once more on a second
stack whose limit is ``SMALL_LIMIT``: what it adds over the worker's idle size must
stay within ``LIMIT_SLACK`` times that limit. The machine's load averages before and
after are recorded with the figures.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.figures import row
from bench.stack import Stack, _pss_kb

FLAT_MARGIN_MB = 25.0
SMALL_LIMIT, SMALL_LIMIT_MB = "512MB", 512
LIMIT_SLACK = 1.25  # DuckDB's limit covers its buffers, not the Python/Arrow around them
SAMPLE_S = 0.1
IMPORT_TIMEOUT_S = 1800.0


def measure(files: list[Path], import_memory_limit: str) -> tuple[list[dict], dict]:
    """Upload and import each of ``files`` in turn; the figure's rows and raw details."""
    from sunrise.client import SunriseClient

    data_dir = Path(tempfile.mkdtemp(prefix="sunrise-bench-upload-"))
    biggest_mb = max(f.stat().st_size for f in files) / 2**20
    runs = []
    load_before = os.getloadavg()
    try:
        for limit, uploads in ((import_memory_limit, files), (SMALL_LIMIT, files[-1:])):
            with Stack("dataset_upload", data_dir=str(data_dir),
                       max_upload_mb=int(biggest_mb) + 64, import_memory_limit=limit) as stack:
                api, base_url = stack.start_api(workers=1)
                worker = stack.start_worker(concurrency=1, queues="datasets")
                with SunriseClient(base_url, stack.api_key()) as client:
                    runs += [{**_one_upload(client, path, api, worker), "memory_limit": limit}
                             for path in uploads]
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    load_after = os.getloadavg()
    small, large, held = runs
    flat = large["api_peak_mb"] <= max(small["api_peak_mb"] + FLAT_MARGIN_MB,
                                       small["api_peak_mb"] * 1.1)
    rows = [row("8 dataset import",
                f"API peak memory (Pss) during upload + import: {large['file_mb']:,.0f} MB file "
                f"vs {small['file_mb']:,.0f} MB file",
                f"{large['api_peak_mb']:,.0f} MB", f"{small['api_peak_mb']:,.0f} MB",
                large["api_peak_mb"] / small["api_peak_mb"],
                f"flat (≤ +{FLAT_MARGIN_MB:g} MB or 10 %)", flat),
            row("8 dataset import",
                f"import worker peak memory (Pss): {large['file_mb']:,.0f} MB file vs "
                f"{small['file_mb']:,.0f} MB file (DuckDB memory limit {import_memory_limit})",
                f"{large['worker_peak_mb']:,.0f} MB", f"{small['worker_peak_mb']:,.0f} MB",
                large["worker_peak_mb"] / small["worker_peak_mb"], "", None),
            row("8 dataset import",
                f"import worker memory added over idle, {held['file_mb']:,.0f} MB file with "
                f"SUNRISE_IMPORT_MEMORY_LIMIT={SMALL_LIMIT}",
                f"{held['worker_peak_mb'] - held['worker_idle_mb']:,.0f} MB",
                f"{SMALL_LIMIT_MB} MB (the limit)",
                (held["worker_peak_mb"] - held["worker_idle_mb"]) / SMALL_LIMIT_MB,
                f"≤ {LIMIT_SLACK:g}× the limit",
                held["worker_peak_mb"] - held["worker_idle_mb"] <= LIMIT_SLACK * SMALL_LIMIT_MB)]
    return rows, {"runs": runs, "load_before": [round(x, 2) for x in load_before],
                  "load_after": [round(x, 2) for x in load_after], "cpus": os.cpu_count()}


def _one_upload(client, path: Path, api, worker) -> dict:
    api_idle, worker_idle = _pss_mb(api), _pss_mb(worker)
    with api.memory_peak(SAMPLE_S) as api_peak, worker.memory_peak(SAMPLE_S) as worker_peak:
        started = time.perf_counter()
        accepted = client.create_dataset(path.stem, [path])
        uploaded = time.perf_counter()
        ending = None
        for event in client.dataset_events(accepted["dataset_id"], timeout=IMPORT_TIMEOUT_S):
            ending = event.event
        finished = time.perf_counter()
    if ending != "ready":
        raise RuntimeError(f"the import of {path.name} ended {ending}: "
                           f"{client.dataset(accepted['dataset_id']).get('error')}")
    rows = sum(t["rows"] for t in client.dataset(accepted["dataset_id"])["tables"])
    return {"file": path.name, "file_mb": round(path.stat().st_size / 2**20, 1), "rows": rows,
            "upload_s": round(uploaded - started, 2), "import_s": round(finished - uploaded, 2),
            "api_idle_mb": round(api_idle, 1), "api_peak_mb": round(api_peak.mb, 1),
            "worker_idle_mb": round(worker_idle, 1), "worker_peak_mb": round(worker_peak.mb, 1)}


def _pss_mb(process) -> float:
    return sum(_pss_kb(pid) for pid in process.group_pids()) / 1024
