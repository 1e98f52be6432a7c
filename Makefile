# Two commands do everything on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what is missing (idempotent: the stamp file tracks pyproject.toml).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# CPU build of torch, installed before anything that depends on it (otherwise pip pulls the CUDA build).
TORCH_SPEC ?= torch==2.13.0

.PHONY: setup demo test bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "undertow needs Python >= 3.11 (PYTHON=$(PYTHON))"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: setup
	$(BIN)/undertow run configs/quickstart.yaml

test: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/harness_overhead.py

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache *.egg-info
