# ChunkScope: `make run` (set up + start the app), `make test` (set up + run the tests).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# CPU build of torch; another machine may pick its own build (e.g. TORCH_SPEC="torch").
TORCH_SPEC ?= torch==2.13.0
STAMP  := $(VENV)/.chunkscope-installed

.PHONY: setup run test lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e '.[test,ray]'
	touch $(STAMP)

run: setup
	$(VENV)/bin/streamlit run app.py --server.headless true

test: setup
	$(VENV)/bin/pytest -q

# ruff (lint + import order) and mypy over the engine; tools/import_cycles.py: no import cycles
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) tools/import_cycles.py core chunkscope

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
