# Two commands for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast fault bench lint clean services

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

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
