# Two commands for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The lock files: exact versions with hashes, resolved for CPython 3.11 on Linux x86_64.
# requirements.txt is what the image runs; requirements-dev.txt adds the `dev` extra
# (test, lint and deployment-check tools) at the same versions.
LOCK := requirements.txt
DEV_LOCK := requirements-dev.txt
UV_COMPILE := $(BIN)/uv pip compile pyproject.toml --quiet --generate-hashes \
	--python-version 3.11 --python-platform x86_64-manylinux_2_28 --custom-compile-command 'make lock' \
	--overrides requirements-overrides.txt

.PHONY: install lock demo test test-fast fault bench lint clean services

# pip installs exactly the locked versions and checks every hash; uv then removes what
# the lock no longer lists (a dependency dropped since this venv was made); the project
# itself goes in last, editable and without dependencies.
$(STAMP): pyproject.toml $(LOCK) $(DEV_LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --require-hashes --no-deps -r $(DEV_LOCK)
	$(BIN)/uv pip sync -q --python $(BIN)/python --require-hashes $(DEV_LOCK)
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

## Re-resolve the lock files from pyproject.toml (after adding or changing a dependency):
## versions already locked are kept where they still fit; commit both files.
## Upgrade one package on purpose with: make lock UPGRADE='--upgrade-package duckdb'
lock:
	test -x $(BIN)/uv || $(MAKE) install
	$(UV_COMPILE) --extra dev $(UPGRADE) -o $(DEV_LOCK)
	$(UV_COMPILE) --extra spark --constraint $(DEV_LOCK) -o $(LOCK)
	$(MAKE) install

install: $(STAMP)

## Run the whole system on the sample data and print an answer.
demo: install
	$(BIN)/sunrise demo

## Run the test suite against real Redis, MariaDB, DuckDB and a real Celery worker,
## then the fault-injection tests twice more: each must pass 3 times in one run.
test: install
	bash scripts/ensure_tools.sh
	bash scripts/ensure_services.sh
	$(BIN)/pytest -q $(PYTEST_ARGS)
	for i in 2 3; do echo "fault tests, run $$i of 3"; $(BIN)/pytest -q -m fault || exit 1; done

## The fast loop: unit and API tests, without browsers, fault runs, benchmarks or the
## other slow end-to-end tests (markers in pyproject.toml). `make test` is what CI runs.
test-fast: install
	bash scripts/ensure_tools.sh
	bash scripts/ensure_services.sh
	$(BIN)/pytest -q -m "not fault and not browser and not slow" $(PYTEST_ARGS)

## The fault-injection tests alone, three times in a row (flake check).
fault: install
	bash scripts/ensure_services.sh
	for i in 1 2 3; do $(BIN)/pytest -q -m fault || exit 1; done

bench: install
	bash scripts/ensure_services.sh
	$(BIN)/python -m bench.run_all

lint: install
	$(BIN)/ruff check .

services:
	bash scripts/ensure_services.sh

clean:
	rm -rf $(VENV) var .pytest_cache
