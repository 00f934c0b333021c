# tcplab: `make demo` runs the headline job, `make test` runs every test. Both start with
# `make setup` (virtualenv + Python deps + the Rust core in release mode, quick when unchanged).
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: setup demo test test-rust test-python bench browser clean fuzz

setup: $(VENV)/.deps-stamp $(VENV)/.core-stamp

$(VENV)/bin/python:
	@command -v $(PY) >/dev/null || { echo "error: $(PY) not found (tcplab needs Python 3.11)"; exit 1; }
	$(PY) -m venv $(VENV)

$(VENV)/.deps-stamp: requirements.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

# Build the Rust core (release) and install the package into the venv (editable: python/ is used in place).
$(VENV)/.core-stamp: $(RUST_SRC) $(VENV)/.deps-stamp
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release --quiet
	touch $@

demo: setup
	$(BIN)/tcplab reproduce brakmo/single-transfer --out runs/demo

# Headless Chromium for the HTML-report test (Debian's package; installed when missing and we can).
browser:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the report test"; \
	    (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null)); \
	  else echo "note: chromium not found; the HTML report browser test will be skipped"; fi; \
	fi

test-rust:
	cargo test --release -p tcplab -p tcplab-tcp

test-python: setup browser
	$(BIN)/python -m pytest -q tests

test: setup test-rust test-python

bench: setup
	$(BIN)/tcplab bench

# Fuzz the scenario front end and runs for FUZZ_SECONDS (tests/fuzz_scenarios.py states the
# invariant); failing inputs land in runs/fuzz-failures/. `make test` runs a fixed 2,000-case sample.
FUZZ_SECONDS ?= 600
fuzz: setup
	$(BIN)/python tests/fuzz_scenarios.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) target runs
