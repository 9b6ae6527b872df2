# Mycel Memory Dashboard — `make help` lists the targets.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install the project with its dev tools

run: $(STAMP) ## Set up and serve the dashboard on http://127.0.0.1:8000, or make run PORT=8080 HOST=… (demo data when no Mycel data exists)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py prepare_local
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C stops)"
	$(BIN)/gunicorn mycel_dashboard.wsgi -c python:mycel_dashboard.gunicorn_conf --bind $(HOST):$(PORT) --workers 2 --threads 4 --timeout 120

serve: $(STAMP) ## The production server command alone (gunicorn; set SECRET_KEY, ALLOWED_HOSTS…)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/gunicorn mycel_dashboard.wsgi -c python:mycel_dashboard.gunicorn_conf --bind $(HOST):$(PORT) --workers 2 --threads 4 --timeout 120

dev: $(STAMP) ## Django's autoreloading development server with DEBUG on
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py prepare_local
	DEBUG=true $(BIN)/python manage.py runserver $(HOST):$(PORT)

test: $(STAMP) browser postgres promtool ## Set up, lint, type-check memory_core and mycel_dashboard, run every test (the docs build's too)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2 --durations=25
	$(MAKE) --no-print-directory load-smoke

# The browser journeys are part of every test run, never skipped: install Chromium where we can (root with
# apt-get, as in CI), otherwise stop with the one command that installs it.
browser: ## Make sure Chromium is installed for the browser tests (installs it when run as root)
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Chromium for the browser tests (apt-get)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-zenhei >/dev/null; \
	else \
		echo "Chromium is missing for the browser tests; install it with: sudo apt-get install chromium fonts-wqy-zenhei" >&2; \
		exit 1; \
	fi

# The Postgres tests start a throwaway cluster from Debian's PostgreSQL binaries (tests/support/postgres.py),
# and one PgBouncer in transaction mode in front of it: install them where we can, otherwise stop with the
# one command that does.
postgres: ## Make sure PostgreSQL's server binaries and PgBouncer are installed for the tests (installs them when run as root)
	@if { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; } \
		&& { command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; }; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing PostgreSQL and PgBouncer for the Postgres tests (apt-get)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq postgresql pgbouncer >/dev/null; \
	else \
		echo "PostgreSQL or PgBouncer is missing for the Postgres tests; install them with: sudo apt-get install postgresql pgbouncer" >&2; \
		exit 1; \
	fi

# The alert rules' tests run Debian's promtool (tests/dashboard/test_alert_rules.py): from the prometheus
# package, without its recommends; nothing here starts its service.
promtool: ## Make sure promtool is installed for the alert rules' tests (installs it when run as root)
	@if command -v promtool >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing promtool for the alert rules' tests (apt-get install prometheus)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	else \
		echo "promtool is missing for the alert rules' tests; install it with: sudo apt-get install --no-install-recommends prometheus" >&2; \
		exit 1; \
	fi

load-smoke: $(STAMP) ## Short load run on a small home: gunicorn + 4 clients for 10 s, then 16 idle live pages for 15 s; prints the figures
	$(BIN)/python tests/benchmarks/load.py --quick --duration 10 --warmup 2 --clients 4 --live-duration 15 --live-pages 16

bench: $(STAMP) ## Run the benchmarks (prints ratios against the naive way)
	$(BIN)/python tests/benchmarks/run_all.py

# The docs site (mkdocs.yml): strict, so a broken link, anchor or page left out of the nav fails the build;
# tests/test_docs.py builds it the same way inside `make test`. mkdocs comes with the dev extras.
docs: $(STAMP) ## Build the docs site into site/ (MkDocs, strict, offline)
	$(BIN)/mkdocs build --strict
	@echo "Open site/index.html"

lint: $(STAMP) ## Lint and format-check only
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .mypy_cache .ruff_cache

.PHONY: help install run serve dev test browser postgres promtool bench docs lint clean
