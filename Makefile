# envcheck developer entry points. Both `install` and `test` create ./.venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.dev-installed

.PHONY: install test lint typecheck unit docs bench accuracy clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# A user install: the package, its runtime dependencies and uv (for `envcheck lock`), not
# editable. Ray (`envcheck cluster`) is the optional extra `cluster`.
install: $(BIN)/python
	$(BIN)/python -m pip install --quiet '.[lock]'
	@echo "installed: $(BIN)/envcheck  (try: $(BIN)/envcheck probe)"

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# torch (CPU) for the Gloo test on a local Ray cluster: only from a wheel pip finds locally
	-$(BIN)/python -m pip install --quiet --dry-run --no-index --no-deps torch==2.13.0 >/dev/null 2>&1 \
		&& $(BIN)/python -m pip install --quiet torch==2.13.0
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check envcheck tests scripts
	$(BIN)/ruff format --check envcheck tests scripts

typecheck: $(STAMP)
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/python scripts/gen_docs.py --check

# two workers (pytest-xdist): the suite is CPU-bound and took ~15 min on one of a 2-core VM's cores;
# the slowest tests are listed at the end, to see where the time goes. Bytecode is written even
# where the environment says not to (PYTHONDONTWRITEBYTECODE=1): the suite starts `python -m
# envcheck` hundreds of times, and each start compiled every module from source again (2.6 s
# instead of 0.9 s), as each worker rewrote every test module's asserts
unit: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n 2 --durations=20

test: lint typecheck docs unit

# The benchmark venv (torch CPU build + ray) is created on first use under .bench/.
bench: $(STAMP)
	$(BIN)/python scripts/bench_probe.py $$(test -x .bench/probe-venv/bin/python || echo --setup)
	$(BIN)/python scripts/bench_check.py
	$(BIN)/python scripts/bench_lock.py
	$(BIN)/python scripts/bench_refresh.py --local
	$(BIN)/python scripts/bench_triage.py --size-gb 2 --runs 3
	$(BIN)/python scripts/bench_deep.py --runs 7

# Recall, right-fix rate and clean-node false positives on tests/corpus (docs/accuracy.md).
accuracy: $(STAMP)
	$(BIN)/python scripts/bench_accuracy.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
