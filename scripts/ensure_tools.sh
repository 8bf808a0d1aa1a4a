#!/usr/bin/env bash
# Install the Debian tools the test suite drives, when they are missing:
# docker-compose (validates docker-compose.yml) and chromium (browser tests).
set -eu
missing=()
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 \
  || missing+=(docker-compose)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
