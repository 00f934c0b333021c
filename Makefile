# tcplab: `make demo` runs the headline job, `make test` runs every test. Both start with
# `make setup` (virtualenv + Python deps + the Rust core in release mode, quick when unchanged).
# `make wheel` builds the installable wheel, `make docs` the documentation site.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: setup demo test wheel docs test-rust test-python test-golden bench bench-scale bench-sweep bench-htsim bench-interactive sensitivity reproductions diagnose-eval diagnose-clean100 kelly aqm bench-aqm fidelity fidelity-full fidelity-evidence fuzz browser tshark iperf3 emulation emulation-bench mutants validate-linux clean

setup: $(VENV)/.deps-stamp $(VENV)/.core-stamp

$(VENV)/bin/python:
	@command -v $(PY) >/dev/null || { echo "error: $(PY) not found (tcplab needs Python 3.11)"; exit 1; }
	$(PY) -m venv $(VENV)

$(VENV)/.deps-stamp: requirements.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	# matplotlib's font cache, built once here rather than by a user's first `tcplab plot` (seconds)
	MPLBACKEND=Agg $(BIN)/python -c "import matplotlib.font_manager"
	touch $@

# Build the Rust core (release) and install the package into the venv (editable: python/ is used in place).
# The `tcplab` command is the native binary (crates/tcplab-cli, issue 28): built into
# python/tcplab/_bin/tcplab-native (not in git), linked as .venv/bin/tcplab (so the tests run the
# command a user runs) and copied to python/tcplab.data/scripts/tcplab, the wheel's bin/tcplab.
NATIVE_BIN := python/tcplab/_bin/tcplab-native
WHEEL_SCRIPT := python/tcplab.data/scripts/tcplab
PLOT_BIN := python/tcplab/_bin/tcplab-plot
WHEEL_PLOT_SCRIPT := python/tcplab.data/scripts/tcplab-plot
$(VENV)/.core-stamp: $(RUST_SRC) $(VENV)/.deps-stamp
	rm -f $(BIN)/tcplab
	# maturin wants the wheel's data directory to exist; its script is only copied in by `native`
	mkdir -p $(dir $(WHEEL_SCRIPT))
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release --quiet
	$(MAKE) --no-print-directory native
	touch $@

.PHONY: native
native:
	cargo build --release --quiet -p tcplab-cli
	mkdir -p $(dir $(NATIVE_BIN)) $(dir $(WHEEL_SCRIPT))
	# --strip-debug keeps the function names: `tcplab bench --callgrind` counts instructions inside
	# the core's event loop by name (with them all stripped it found none and printed "-")
	strip --strip-debug -o $(NATIVE_BIN).tmp target/release/tcplab-native 2>/dev/null || cp target/release/tcplab-native $(NATIVE_BIN).tmp
	mv -f $(NATIVE_BIN).tmp $(NATIVE_BIN)
	cp -f $(NATIVE_BIN) $(WHEEL_SCRIPT).tmp && mv -f $(WHEEL_SCRIPT).tmp $(WHEEL_SCRIPT)
	# `tcplab plot`'s drawing binary, beside the command in both places (crates/tcplab-cli/src/plot_main.rs)
	strip --strip-debug -o $(PLOT_BIN).tmp target/release/tcplab-plot 2>/dev/null || cp target/release/tcplab-plot $(PLOT_BIN).tmp
	mv -f $(PLOT_BIN).tmp $(PLOT_BIN)
	cp -f $(PLOT_BIN) $(WHEEL_PLOT_SCRIPT).tmp && mv -f $(WHEEL_PLOT_SCRIPT).tmp $(WHEEL_PLOT_SCRIPT)
	if [ -d $(BIN) ]; then rm -f $(BIN)/tcplab && ln -s ../../$(NATIVE_BIN) $(BIN)/tcplab; fi

demo: setup
	$(BIN)/tcplab reproduce brakmo/single-transfer --out runs/demo

# The wheel (maturin, abi3: CPython >= 3.11) with the bundled scenarios as package data, into
# target/wheels/ (`pip install target/wheels/tcplab-*.whl`). Built with the venv's interpreter as
# `make setup` builds, so both share target/; stripped of debug symbols (1.8 MB instead of 6.5).
WHEEL_ENV = VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH
wheel: $(VENV)/.deps-stamp native
	rm -f target/wheels/tcplab-*.whl
	$(WHEEL_ENV) $(BIN)/maturin build --release --strip --out target/wheels
	@ls -l target/wheels/tcplab-*.whl

# The documentation site (docs/, mkdocs.yml) into site/. docs/gen_reference.py first writes the
# generated pages (the scenario format's JSON Schema from `tcplab schema`, the CLI reference from
# the argparse parser) into docs/reference/; mkdocs is installed into .venv by this target only.
$(VENV)/.docs-stamp: requirements-docs.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -r requirements-docs.txt
	touch $@

docs: setup $(VENV)/.docs-stamp
	$(BIN)/python docs/gen_reference.py
	$(BIN)/mkdocs build --strict --site-dir site

# Headless Chromium for the HTML-report test (Debian's package; installed when missing and we can).
browser:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the report test"; \
	    (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null)); \
	  elif [ "$$TCPLAB_ALLOW_NO_BROWSER" = 1 ]; then echo "note: chromium not found; TCPLAB_ALLOW_NO_BROWSER=1, so the HTML report browser tests will be skipped"; \
	  else echo "note: chromium not found and cannot be installed here; the HTML report browser tests will FAIL (install chromium, or set TCPLAB_ALLOW_NO_BROWSER=1 to skip them)"; fi; \
	fi

# Debian's tshark for the pcap tests (installed when missing and we can, as chromium above).
tshark:
	@if ! command -v tshark >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's tshark for the pcap tests"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark >/dev/null 2>&1 || (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark >/dev/null)); \
	  else echo "note: tshark not found; the pcap tests that run it will be skipped"; fi; \
	fi

# Debian's iperf3 for the emulation's iperf3 reproduction (installed when missing and we can).
iperf3:
	@if ! command -v iperf3 >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's iperf3 for the emulation tests"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -q iperf3 >/dev/null 2>&1 || (apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q iperf3 >/dev/null)); \
	  else echo "note: iperf3 not found; the emulation's iperf3 test will be skipped"; fi; \
	fi

# Unit and integration tests only (--tests: the targets with `test = true`): the examples (benches/ builds them) and
# the doc-tests (there are none) would cost a thin-LTO link each, ~1 CPU-minute apiece.
test-rust:
	cargo test --release -p tcplab -p tcplab-tcp -p tcplab-cli -p tcplab-plot --tests

# Two passes: the tests not marked `serial` on two worker processes, a file to a worker (pytest-xdist;
# a 2-core machine), then the `serial` ones alone (real-time emulation, the wheel build, signals
# timed to a second; see tests/conftest.py). `make test-python PYTEST_WORKERS=0` runs one process.
PYTEST_WORKERS ?= 2
test-python: setup browser tshark iperf3
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m "not serial" tests
	$(BIN)/python -m pytest -q -m serial tests

test: setup test-rust test-python

bench: setup
	$(BIN)/tcplab bench

# Issue 13's scale cases, one JSON document (each case in its own process; several minutes).
bench-scale: setup
	$(BIN)/tcplab bench --json --repeat 1 tcp-dumbbell-16 tcp-dumbbell-256 tcp-dumbbell-1024 tcp-dumbbell-4096 \
	  tcp-dumbbell-16384 short-transfers-100000 tcplib-backbone-1000

# Issue 28: tcplab beside htsim on the four dumbbell cases, 5 interleaved rounds (benches/htsim-dumbbell/;
# HTSIM=path/to/the/htsim/dumbbell/program adds htsim's side, tcplab's alone without it).
bench-htsim: setup
	$(BIN)/python benches/htsim-dumbbell/compare.py $(if $(HTSIM),--htsim $(HTSIM))

# Issue 28: one `tcplab plot` and one `tcplab report` on a 6-flow 60 s run, timed as whole processes.
bench-interactive: setup
	$(BIN)/python benches/interactive/measure.py

# Every golden summary, the long ones too (make test runs those under ~3 s each: all of them today).
test-golden:
	TCPLAB_GOLDEN_LONG=1 cargo test --release -p tcplab --test integration golden::

# 1,000 runs of Brakmo's transfer with --jobs 1, --jobs 2 and on local Ray: times, ratio, identical rows.
bench-sweep: setup
	$(BIN)/tcplab bench --sweep --runs 1000 --ray

# The sensitivity sweeps of scenarios/brakmo/sensitivity/ and their plots (into runs/sensitivity/).
sensitivity: setup
	$(BIN)/tcplab sweep scenarios/brakmo/sensitivity/buffers.toml --out runs/sensitivity/buffers
	$(BIN)/tcplab table runs/sensitivity/buffers --plot limit --by variant --metrics throughput_KBps --out runs/sensitivity/buffers.png
	$(BIN)/tcplab sweep scenarios/brakmo/sensitivity/send-buffer.toml --out runs/sensitivity/send-buffer
	$(BIN)/tcplab table runs/sensitivity/send-buffer --plot send_buffer --by variant --metrics throughput_KBps --out runs/sensitivity/send-buffer.png

# Every seed reproduction in full (tables with their published numbers, claims, reports) into
# runs/reproduce/<experiment>/; a rerun only runs what is missing from each results store.
REPRODUCTIONS := brakmo/single-transfer brakmo/vegas-star brakmo/table5.3 brakmo/table5.4 brakmo/fairness brakmo/send-buffer \
	brakmo/send-buffer-background \
	lite/table4 ahn/figure1 ahn/table1 zhang/table1 zhang/figure1 zhang/table2 zhang/table3 zhang/table4 \
	zhang/figure7 zhang/figure8 zhang/droptail-buffers zhang/rtt-buffers \
	kelly/table1 kelly/table2 kelly/rtt-fairness kelly/response-curve kelly/dynamics \
	modern/bufferbloat modern/l4s
reproductions: setup
	@for e in $(REPRODUCTIONS); do $(BIN)/tcplab reproduce $$e --out runs/reproduce/$$(echo $$e | tr / _) || exit 1; done
	$(KELLY_PLOTS)

# FIDELITY.md from every reproduce.toml, recorded measured.json and [fidelity] cause (a second);
# fidelity-full reruns every reproduction and records it first; fidelity-evidence reruns the
# evidence scripts of the misses (issue 31) with their full seed counts.
fidelity: setup
	$(BIN)/tcplab fidelity
fidelity-full: reproductions
	$(BIN)/tcplab fidelity --record
fidelity-evidence: setup
	$(BIN)/python scenarios/zhang/table1/evidence.py --seeds 10 --out scenarios/zhang/table1/evidence.md
	$(BIN)/python scenarios/brakmo/single-transfer/lite_order.py --seeds 5 --out scenarios/brakmo/single-transfer/lite_order.md
	$(BIN)/python scenarios/brakmo/fairness/evidence.py --seeds 5 --out scenarios/brakmo/fairness/evidence.md
	$(BIN)/python scenarios/ahn/table1/static_evidence.py --seeds 30 --out scenarios/ahn/table1/static_evidence.md
	$(BIN)/python scenarios/brakmo/vegas-star/evidence.py --out scenarios/brakmo/vegas-star/evidence.md
	$(BIN)/python scenarios/kelly/table1/queue_evidence.py --flows 1,4,8,16,32,64,128,256,512 --out scenarios/kelly/table1/queue_evidence.md
	$(BIN)/python scenarios/zhang/phase_evidence.py table2 --runs 10 --out scenarios/zhang/table2/evidence.md
	$(BIN)/python scenarios/zhang/phase_evidence.py table3 --runs 10 --out scenarios/zhang/table3/evidence.md
	$(BIN)/python scenarios/zhang/phase_evidence.py table4 --runs 10 --out scenarios/zhang/table4/evidence.md
	$(BIN)/python scenarios/ahn/table1/evidence.py --seeds 30 --sens-seeds 10 --out scenarios/ahn/table1/evidence.md
	$(BIN)/python scenarios/ahn/figure1/evidence.py --out scenarios/ahn/figure1/evidence.md
	$(BIN)/python scenarios/kelly/table1/n1_evidence.py --seeds 10 --out scenarios/kelly/table1/n1_evidence.md
	$(BIN)/python scenarios/seed_spread.py scenarios/lite/table4 --paper-runs 20 --sweep 'traffic[0].offered_load=0.3,0.5,0.8,1.2' --sweep-seeds 10 --out scenarios/lite/table4/spread.md
	$(BIN)/python scenarios/seed_spread.py scenarios/brakmo/table5.4 --paper-runs 57 --sweep 'traffic[0].offered_load=0.3,0.5,0.8,1.2,1.6' --sweep-seeds 5 --out scenarios/brakmo/table5.4/spread.md
	$(BIN)/python scenarios/brakmo/table5.4/twoway_evidence.py --seeds 19 --out scenarios/brakmo/table5.4/twoway_evidence.md
	$(BIN)/python scenarios/seed_spread.py scenarios/brakmo/table5.3 --paper-runs 12 --seeds 3 --out scenarios/brakmo/table5.3/spread.md
	$(BIN)/python scenarios/brakmo/table5.3/small_evidence.py --seeds 3 --out scenarios/brakmo/table5.3/small_evidence.md
	$(BIN)/python scenarios/brakmo/send-buffer/evidence.py scenarios/brakmo/send-buffer --seeds 5 --out scenarios/brakmo/send-buffer/evidence.md
	$(BIN)/python scenarios/brakmo/send-buffer/evidence.py scenarios/brakmo/send-buffer-background --seeds 5 --out scenarios/brakmo/send-buffer-background/evidence.md
	$(BIN)/python scenarios/kelly/table1/residual_evidence.py --paper scenarios/kelly/table1/reproduce.toml $(addprefix scenarios/kelly/table1/flows-,$(addsuffix .toml,1 4 8 16 32 64 128 256 512)) --out scenarios/kelly/table1/residual_evidence.md
	$(BIN)/python scenarios/kelly/table2/evidence.py --out scenarios/kelly/table2/evidence.md
	$(BIN)/python scenarios/kelly/dynamics/drops_evidence.py --out scenarios/kelly/dynamics/drops_evidence.md

# Seed 003 (Kelly) alone, with the figures of Figs 5-9 (scenarios/kelly/*/plot.py).
KELLY_PLOTS = $(BIN)/python scenarios/kelly/rtt-fairness/plot.py runs/reproduce/kelly_rtt-fairness && \
	$(BIN)/python scenarios/kelly/dynamics/plot.py runs/reproduce/kelly_dynamics
kelly: setup
	@for e in kelly/table1 kelly/table2 kelly/rtt-fairness kelly/response-curve kelly/dynamics; do \
		$(BIN)/tcplab reproduce $$e --out runs/reproduce/$$(echo $$e | tr / _) || exit 1; done
	$(KELLY_PLOTS)

# Issue 27's studies in full (30 s runs, 3 and 2 seeds, ~1 min): tables, claims, figures
# (OUT/bufferbloat.png, OUT/l4s.png) into runs/reproduce/modern_{bufferbloat,l4s}; `make test`
# runs 2-6 s versions (tests/test_aqm.py). bench-aqm: each discipline's cost per packet.
aqm: setup
	@for e in modern/bufferbloat modern/l4s; do $(BIN)/tcplab reproduce $$e --out runs/reproduce/$$(echo $$e | tr / _) || exit 1; done
bench-aqm: setup
	$(BIN)/python benches/aqm_cost.py

# tcplab diagnose (issue 29): the rediscovery table (Lite.0-6, Reno, Vegas on brakmo/single-transfer
# and lite/table4 seeds 1-3), the planted faults and 100 clean scenarios; docs/diagnose.md.
diagnose-eval: setup
	$(BIN)/python -m tcplab.diagnose.evaluate --clean 100 --table4-seeds 3

diagnose-clean100: setup
	$(BIN)/python -m tcplab.diagnose.evaluate --skip-rediscovery --clean 100

# The emulation reproductions (real time; need root and /dev/net/tun) into runs/reproduce/.
emulation: setup
	$(BIN)/tcplab reproduce emulation/brakmo --out runs/reproduce/emulation_brakmo
	$(BIN)/tcplab reproduce emulation/ahn-figure1 --out runs/reproduce/emulation_ahn-figure1
	$(BIN)/tcplab reproduce emulation/ahn-table1 --out runs/reproduce/emulation_ahn-table1

# The emulator's throughput ceiling: one Linux cubic flow, rising rate (benches/emulation_ceiling.py).
emulation-bench: setup
	$(BIN)/python benches/emulation_ceiling.py

# Fuzz the scenario front end and runs for FUZZ_SECONDS (tests/fuzz_scenarios.py states the
# invariant); failing inputs land in runs/fuzz-failures/. `make test` runs a fixed 2,000-case sample.
FUZZ_SECONDS ?= 600
fuzz: setup
	$(BIN)/python tests/fuzz_scenarios.py --seconds $(FUZZ_SECONDS)

# Mutation testing (cargo-mutants; not part of `make test`). Each mutant of tcplab-tcp is built
# and tested against tcplab-tcp's own tests (its lib's unit tests and the one integration binary
# tests/endpoint/: `--lib --test=endpoint` skips only the empty doctest pass) in the `mutants` profile (Cargo.toml: opt-level 1, incremental, no debuginfo;
# 12 s per mutant measured on this machine beside other jobs, build included; a release build of a
# mutant alone takes 10-25 s). Each mutant of the engine/net modules of tcplab (engine/*.rs,
# net/*.rs, sim.rs: 674 mutants) is built in the same profile and tested against tcplab's lib unit
# tests and the one integration binary (tests/integration/) minus the filters in
# MUTANTS_ENGINE_TESTS (mm1k:: — 5.6 s of the binary's ~11 s in release, several times that at
# opt-level 1); no_alloc, memory_estimate and golden are not run, so that score is a lower bound of
# the full suite's. One job at a time (2 shared cores). A full tcplab-tcp run is 2,188 mutants,
# ~7 hours; samples are
#   make mutants MUTANTS_SHARD=0/10 MUTANTS_ENGINE=skip
#   make mutants MUTANTS_SHARD=0/16 MUTANTS_TCP=skip
# (cargo-mutants' round-robin shard k of n: every n-th mutant of the list, ~40 min for n = 10 of
# tcplab-tcp); the score is then printed with its sampling standard error. Narrow a run with
# MUTANTS_TCP / MUTANTS_ENGINE, e.g.
#   make mutants MUTANTS_TCP="-f 'crates/tcplab-tcp/src/cc/vegas/*.rs'" MUTANTS_ENGINE=skip
# Results: runs/mutants/{tcp,engine-net}/mutants.out/; the score and the survivors are printed.
# Measured 2026-11-24 (docs/mutation-testing.md): engine/net shard 0/20 (42 mutants, 40 min, --jobs 1 beside two
# other helpers' jobs): 30 of 41 viable caught = 73.2 % (± 6.9 % standard error as a sample), before
# the tests written from its 11 survivors (tests/integration/engine_mutants.rs); re-run of those 11
# with -F: 10 caught, and the 11th (red.rs:304) has a test since (docs/mutation-testing.md).
MUTANTS_TCP ?=
MUTANTS_SHARD ?=
MUTANTS_ENGINE ?= -f 'crates/tcplab/src/engine/*.rs' -f 'crates/tcplab/src/net/*.rs' -f crates/tcplab/src/sim.rs
MUTANTS_ENGINE_TESTS ?= --cargo-arg=--lib --cargo-arg=--test=integration -- -- --skip mm1k::
MUTANTS_OPTS ?= --jobs 1 --timeout 120 --build-timeout 900 --copy-target=false
MUTANTS_SHARD_OPTS = $(if $(MUTANTS_SHARD),--shard $(MUTANTS_SHARD) --sharding round-robin)
mutants: setup
	@command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
	@mkdir -p runs/mutants
	-@if [ "$(MUTANTS_TCP)" != skip ]; then \
	  cargo mutants -p tcplab-tcp $(MUTANTS_TCP) $(MUTANTS_SHARD_OPTS) $(MUTANTS_OPTS) --profile mutants --cargo-arg=--lib --cargo-arg=--test=endpoint -o runs/mutants/tcp; \
	fi
	-@if [ "$(MUTANTS_ENGINE)" != skip ]; then \
	  cargo mutants -p tcplab $(MUTANTS_ENGINE) $(MUTANTS_SHARD_OPTS) $(MUTANTS_OPTS) --profile mutants -o runs/mutants/engine-net $(MUTANTS_ENGINE_TESTS); \
	fi
	@$(BIN)/python tests/mutation_score.py --by-file --time \
	  $$([ "$(MUTANTS_TCP)" != skip ] && [ -e runs/mutants/tcp/mutants.out/outcomes.json ] && echo runs/mutants/tcp) \
	  $$([ "$(MUTANTS_ENGINE)" != skip ] && [ -e runs/mutants/engine-net/mutants.out/outcomes.json ] && echo runs/mutants/engine-net)

clean:
	rm -rf $(VENV) target runs site

# tcplab's TCP beside the kernel's over identical links and queues (issue 26): the full matrix
# (24 cases, about 6 minutes of real time; needs root and /dev/net/tun) into runs/validate-linux.
validate-linux: setup
	$(BIN)/tcplab validate-linux --out runs/validate-linux
