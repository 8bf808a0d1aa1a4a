"""Container health probe: ``python -m sunrise.healthcheck URL`` exits 0 when URL answers 2xx.

The image's ``HEALTHCHECK`` runs it against the API's ``/readyz`` (the database and
Redis answer); compose runs it against a worker's metrics port (the worker process is
up and finished starting: the port opens on Celery's ``worker_ready``). Standard
library only, so a probe every few seconds costs milliseconds of CPU, not an import of
the application; proxies in the environment are ignored (the target is this container).
"""
from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/readyz"


def probe(url: str, timeout: float) -> tuple[bool, str]:
    """GET ``url``: (True, status) on a 2xx answer, else (False, why). Never raises."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as resp:
            return 200 <= resp.status < 300, f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return False, str(getattr(exc, "reason", exc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sunrise.healthcheck",
                                     description="Exit 0 when URL answers 2xx, 1 otherwise.")
    parser.add_argument("url", nargs="?", default=DEFAULT_URL)
    parser.add_argument("--timeout", type=float, default=4.0, help="seconds (default 4)")
    args = parser.parse_args(argv)
    healthy, why = probe(args.url, args.timeout)
    # Docker keeps the last probes' output in `docker inspect`: say what was seen.
    print(f"{args.url}: {why}", file=sys.stdout if healthy else sys.stderr)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
