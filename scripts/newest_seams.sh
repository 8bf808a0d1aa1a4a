#!/usr/bin/env bash
# The seams' tests once against the newest releases pyproject.toml's bounds allow, so a
# new release of a library whose internals or exact behaviour we rely on (anthropic,
# celery/kombu, redis, SQLAlchemy, PyMySQL, ...) is seen failing here before a user
# installs it. A throwaway venv, resolved without the lock (`--resolution highest`);
# the lock files and .venv are left alone. Where the newest versions differ from those
# shared/vendor/ was verified against, that is printed, not failed: the vendor canary
# (tests/shared/test_vendor_canary.py) fails on it in `make test`, against the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
uv=.venv/bin/uv
"$uv" venv -q --python .venv/bin/python "$work/venv"
"$uv" pip install -q --python "$work/venv/bin/python" --resolution highest \
  -e ".[offline]" pytest pytest-timeout
echo "newest releases within the bounds that shared/vendor/ was not verified against:"
PYTHONPATH=$PWD "$work/venv/bin/python" -c '
from shared.vendor import drifted
for library, verified, installed in drifted() or [("(none)", "-", "-")]:
    print(f"  {library}: {installed} (verified: {verified})")'
PYTHONPATH=$PWD "$work/venv/bin/python" -m pytest -q -p no:cacheprovider --disable-warnings \
  tests/worker/test_llm_client.py tests/worker/test_message_events.py \
  tests/worker/test_stop_reasons_and_api_errors.py tests/worker/test_job_store.py \
  tests/shared/test_broker_transport.py tests/shared/test_celery_factory.py \
  tests/shared/test_redis_client.py tests/shared/test_driver_sql.py \
  tests/shared/test_db_pool_reset.py tests/shared/test_db_retry.py
