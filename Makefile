# The two commands of the README:
#   make run   - a running site with the demo campaign on http://127.0.0.1:8000
#   make test  - the whole test suite (honours DATABASE_URL)

VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1:8000

.PHONY: run test lint bench messages clean-venv

# The virtual environment, created with a Python 3.12+ found by scripts/find-python.
$(PY):
	@python=$$(scripts/find-python) && echo "Creating $(VENV) with $$python" && "$$python" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Stamps: reinstall only when a requirements file changes.
$(VENV)/.runtime-installed: requirements.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $@

$(VENV)/.dev-installed: requirements-dev.txt requirements.txt $(VENV)/.runtime-installed
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

run: $(VENV)/.runtime-installed
	DEBUG=$${DEBUG:-1} $(PY) manage.py devdb_check
	DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(PY) manage.py load_demo
	DEBUG=$${DEBUG:-1} $(PY) manage.py start_daily_tasks
	@echo "Hitos en http://$(HOST)/  (Ctrl+C para parar)"
	@# The task worker (e-mails, notifications, daily jobs) runs beside the server and stops with it.
	DEBUG=$${DEBUG:-1} $(PY) manage.py db_worker --no-reload --verbosity 0 & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	DEBUG=$${DEBUG:-1} $(PY) manage.py runserver $(HOST)

# The browser gates' checkers (tests/browser/test_gates.py: axe-core and the Nu
# HTML Checker), pinned in package-lock.json; installed again only when it
# changes. --ignore-scripts: vnu-jar's install script only fetches a Java
# when none is found, and Java is already here. The site never loads them.
node_modules/.installed: package-lock.json package.json
	npm ci --no-audit --no-fund --ignore-scripts
	@touch $@

test: $(VENV)/.dev-installed node_modules/.installed
	$(PY) -m pytest

lint: $(VENV)/.dev-installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(VENV)/.runtime-installed
	@for script in bench/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# Regenerate the message catalogues (needs GNU gettext) and compile them.
# The compiled .mo files are committed, so running the site never needs gettext.
messages: $(VENV)/.runtime-installed
	DEBUG=1 $(PY) manage.py makemessages --locale en --locale es --no-obsolete --ignore ".venv/*" --ignore "var/*" --ignore "static/vendor/*" --ignore "node_modules/*" --ignore "test-results/*"
	DEBUG=1 $(PY) manage.py compilemessages --ignore ".venv/*"

clean-venv:
	rm -rf $(VENV)
