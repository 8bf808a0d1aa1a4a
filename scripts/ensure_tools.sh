#!/usr/bin/env bash
# Install the Debian tools the test suite drives, when they are missing:
# chromium (+ fonts, for readable screenshots) for the console's browser tests, driven
# by Playwright's Python client (Playwright's own browser download is never used), and
# docker-compose to validate docker-compose.yml, and a Java 17 runtime for the live Spark
# tests' Spark Connect server (the full pyspark of the dev extra runs on it), and
# Prometheus's promtool to check and unit-test the alert rules (deploy/prometheus/).
set -eu
missing=()
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 \
  || missing+=(docker-compose)
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-liberation)
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing ${missing[*]} from Debian's packages" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Node.js 20 runs the real OpenID provider of the sign-in tests (oidc-provider from npm,
# pinned by tests/oidc_provider/package-lock.json and installed with `npm ci`).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing nodejs npm from Debian's packages" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
provider_dir="$(dirname "$0")/../tests/oidc_provider"
if [ ! -d "$provider_dir/node_modules/oidc-provider" ] \
   || [ "$provider_dir/package-lock.json" -nt "$provider_dir/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$provider_dir" --no-audit --no-fund --loglevel=error
fi
