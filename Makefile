# smartstackd — the two commands of the README: `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)
USAGE_LOG ?= ../shared/data/usage/desktop.tsv
SYSTEM_PACKAGES := libsqlite3-dev libsystemd-dev pkg-config systemd-journal-remote git dbus util-linux \
	libpam-systemd dbus-user-session iproute2
PYTHON_PACKAGES := varlink==31.0.0 asyncvarlink==0.3.3 dbus-next==0.2.3 pytest
SWIFT_FLAGS := -Xswiftc -warnings-as-errors
## Release builds (the service, its benchmarks) compile every module, the dependencies' too, without the run-time
## exclusivity checks: they cost 7 % of a GetStack's time on the event loop (BENCHMARKS.md, eighth session). The debug
## build that `make test` runs keeps them, so an overlapping access still fails the tests.
RELEASE_UNCHECKED := -Xswiftc -enforce-exclusivity=unchecked
RELEASE_FLAGS := -c release $(RELEASE_UNCHECKED)

.PHONY: run test lint format build release deps build-deps eval fit-prior cross-fit bench install install-systemd clean e2e bench-store bench-socket bench-floor bench-isolation ctl-docs install-ctl soak fuzz fuzz-build fuzz-test

## deps: install missing system packages (Debian) and Python test clients: varlink (the reference implementation,
## also its certification suite) and asyncvarlink (a second, independent client); systemd-journal-remote for the
## fleet test (journal-upload to journal-remote); dbus (dbus-daemon, busctl's peer) for smartstack-desktop's test
## under a real systemd and system bus (Tests/e2e/test_desktop.py); util-linux for unshare and nsenter; libpam-systemd
## and dbus-user-session for its user-session scenario (a PAM login registered with logind, the user's bus), with dbus-next
## (Python) for a stand-in GNOME Shell on that bus; iproute2
## for ss, which reads a listening socket's backlog (the socket-activation test). The Python clients go where pip
## puts them; Debian 12's own Python (no pip, "externally managed") gets python3-pip and the clients installed with
## --break-system-packages, as the test clients they are.
deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@python3 -c 'import varlink, asyncvarlink, dbus_next, pytest' 2>/dev/null && python3 -c 'import importlib.metadata as m; assert m.version("varlink") == "31.0.0"' 2>/dev/null \
		|| { python3 -m pip --version >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
			$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-pip; }; \
			python3 -m pip install -q $(PYTHON_PACKAGES) \
			|| python3 -m pip install -q --break-system-packages $(PYTHON_PACKAGES); }

## build-deps: only what building needs (SQLite's and libsystemd's headers, pkg-config), found with pkg-config so it
## works beyond Debian; installed with apt-get where there is one, else named for the system's package manager.
## `make install` needs no more (no Python test clients, no test-only packages).
build-deps:
	@pkg-config --exists sqlite3 libsystemd 2>/dev/null || { \
		if command -v apt-get >/dev/null; then \
			if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
			$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
				libsqlite3-dev libsystemd-dev pkg-config; \
		else \
			echo "smartstackd needs SQLite's and libsystemd's development files and pkg-config (Fedora:" \
				"dnf install sqlite-devel systemd-devel pkgconf-pkg-config)" >&2; exit 1; \
		fi; }

## build and release (so make run) need only what building needs: Debian 12's own Python refuses a `pip install`
## into the system (externally managed), and nothing but the tests uses the Python clients.
build: build-deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: build-deps
	$(SWIFT) build $(RELEASE_FLAGS) $(SWIFT_FLAGS)

## run: the main job: builds and starts smartstackd in the foreground on its default socket and state
## directory (as a user: $XDG_RUNTIME_DIR/smartstack/io.smartstack; as root: /run/smartstack/io.smartstack).
## Extra daemon arguments: make run ARGS="--listen /tmp/s.sock".
run: release
	exec .build/release/smartstackd $(ARGS)

## test: every test: the style (lint), unit and invariant suites (warnings as errors), then the end-to-end suite that
## starts the real smartstackd and drives it with the Python varlink and asyncvarlink clients and raw sockets,
## runs the Varlink certification both ways (varlink-certification), and collects two machines' journals. Before
## it, fuzz-test: each of the three libFuzzer targets for about 20 s, a fixed seed and a capped number of inputs
## from the checked-in seeds in a fresh corpus, so every machine runs (a prefix of) the same inputs and a failure
## reproduces (open-ended discovery is make fuzz).
test: deps lint
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory fuzz-test
	python3 -m pytest -q Tests/e2e

## lint: the style the tools hold (docs/STYLE.md, item 12): `swift format lint --strict` over the package with the
## checked-in `.swift-format` (4 spaces, 120 columns; Tests/.swift-format allows `try!` and `!` in tests). A finding
## fails make test; `make format` rewrites the files the way the linter wants them.
LINT_PATHS := Package.swift Sources Tests
lint:
	$(SWIFT) format lint --strict --recursive --parallel $(LINT_PATHS)

format:
	$(SWIFT) format format --in-place --recursive --parallel $(LINT_PATHS)

## soak: 200 clients for 10 minutes with 2,000 idle connections, a subscriber that never reads and kill -9 every
## 2 minutes, against the release build (SOAK_SECONDS to change the length). See README "Limits".
SOAK_SECONDS ?= 600
soak: release
	python3 Tests/soak/soak.py --daemon .build/release/smartstackd --seconds $(SOAK_SECONDS) --restart-every 120 \
		--clients 200 --idle 2000 --pin --load-binary .build/release/smartstack-load --fast-load 50 --fast-rate 5000

## eval: replays the usage log through the engine and the baselines and prints the evaluation.
eval: release
	.build/release/smartstack-eval $(USAGE_LOG)

## fit-prior: fits the engine's prior on the development logs (every person weighing the same) and writes it to
## Sources/SmartStackCore/Ranking/FittedPrior.swift; rebuild to ship it. See docs/engine.md, "The prior".
PRIOR_LOGS ?= ../shared/data/usage/desktop.tsv ../shared/data/usage/phone.tsv
fit-prior: build-deps
	$(SWIFT) build $(RELEASE_FLAGS) $(SWIFT_FLAGS) --product smartstack-eval
	.build/release/smartstack-eval --fit-prior Sources/SmartStackCore/Ranking/FittedPrior.swift $(PRIOR_LOGS)

## cross-fit: every person of the development logs scored under a prior fitted without them (leave one out).
cross-fit: build-deps
	$(SWIFT) build $(RELEASE_FLAGS) $(SWIFT_FLAGS) --product smartstack-eval
	.build/release/smartstack-eval --cross-fit $(PRIOR_LOGS)

## e2e: only the end-to-end suite (after a debug build).
e2e: deps
	$(MAKE) --no-print-directory build
	python3 -m pytest -q Tests/e2e

## bench: the engine benchmark, what decoding a call costs and the event loop's own work per call (release build,
## pinned to one core).
bench: release
	taskset -c 1 .build/release/smartstack-bench
	taskset -c 1 .build/release/smartstack-wire-bench
	taskset -c 1 .build/release/smartstack-wire-bench --calls 100000

## bench-store: the storage benchmarks (release build): the store alone, acknowledged donations over the socket
## (50 clients; one client), start-up with 1,000,000 stored donations. See README "Storage benchmark".
bench-store: release
	bash bench/storage.sh

## bench-socket: smartstackd beside Redis 7 (AOF everysec, Unix socket), both driven by smartstack-load (the same
## epoll client, RESP for Redis), interleaved rounds against fresh servers, medians and ratios (BENCHMARKS.md).
## ROUNDS=3 RUN_SECONDS=5 by default; PIN=1 pins the client to CPU 0 and the server to CPU 1.
bench-socket: release
	@command -v redis-server >/dev/null || { if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server; }
	bash bench/socket.sh

## bench-floor: the two 50 x 1 measures served three ways, interleaved: Redis, smartstack-nio-floor (swift-nio doing
## no work per call: what the transport allows) and smartstackd; medians, ratios and CPU per call (BENCHMARKS.md).
bench-floor: release
	@command -v redis-server >/dev/null || { if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server; }
	bash bench/floor.sh

## bench-isolation: one uid's write flood through 64 apps against another uid's GetStack, interleaved with the per-uid
## rate limit on, off and no flood; then one uid's connect/close churn against another uid's new connections, with
## and without the churn (BENCHMARKS.md, "Isolation"); as root. ROUNDS=3 by default.
bench-isolation: release
	python3 bench/isolation_flood.py
	python3 bench/isolation_churn.py

## install: everything under $(DESTDIR)$(PREFIX) (default /usr/local): release binaries smartstackd,
## smartstackctl and smartstack-desktop (Swift runtime linked in, so they do not need the toolchain), then
## install-systemd.
PREFIX ?= /usr/local
LIBDIR := $(DESTDIR)$(PREFIX)/lib
BINDIR := $(DESTDIR)$(PREFIX)/bin
install: build-deps
	$(SWIFT) build $(RELEASE_FLAGS) --static-swift-stdlib $(SWIFT_FLAGS) --product smartstackd
	$(SWIFT) build $(RELEASE_FLAGS) --static-swift-stdlib $(SWIFT_FLAGS) --product smartstackctl
	$(SWIFT) build $(RELEASE_FLAGS) --static-swift-stdlib $(SWIFT_FLAGS) --product smartstack-desktop
	install -d $(BINDIR)
	install -m 755 .build/release/smartstackd .build/release/smartstackctl .build/release/smartstack-desktop $(BINDIR)/
	$(MAKE) --no-print-directory install-systemd PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) --no-print-directory install-ctl PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

## install-systemd: units, sysusers entry, catalog and docs/systemd.md under $(DESTDIR)$(PREFIX) (see docs/systemd.md).
install-systemd:
	install -d $(LIBDIR)/systemd/system $(LIBDIR)/systemd/user $(LIBDIR)/systemd/catalog $(LIBDIR)/sysusers.d \
		$(DESTDIR)$(PREFIX)/share/doc/smartstackd
	for unit in smartstackd.service smartstackd.socket smartstack-desktop.service; do \
		sed -e 's|/usr/local/|$(PREFIX)/|g' systemd/$$unit > $(LIBDIR)/systemd/system/$$unit; \
		sed -e 's|/usr/local/|$(PREFIX)/|g' systemd/user/$$unit > $(LIBDIR)/systemd/user/$$unit; \
	done
	chmod 644 $(LIBDIR)/systemd/system/smartstack*.* $(LIBDIR)/systemd/user/smartstack*.*
	sed -e 's|/usr/local/|$(PREFIX)/|g' systemd/smartstackd.catalog > $(LIBDIR)/systemd/catalog/smartstackd.catalog
	install -m 644 systemd/sysusers.d/smartstackd.conf $(LIBDIR)/sysusers.d/smartstackd.conf
	install -m 644 systemd/sysusers.d/smartstack-desktop.conf $(LIBDIR)/sysusers.d/smartstack-desktop.conf
	install -m 644 docs/systemd.md $(DESTDIR)$(PREFIX)/share/doc/smartstackd/systemd.md
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/smartstackd/README.md

## ctl-docs: smartstackctl's shell completions (bash, zsh, fish) and man page, generated from its command
## definitions (ArgumentParser's completion scripts; scripts/smartstackctl-manual.py for roff) into .build/ctl-docs.
CTL_CONFIGURATION ?= release
CTL_DOCS := .build/ctl-docs
ctl-docs:
	$(SWIFT) build -c $(CTL_CONFIGURATION) $(if $(filter release,$(CTL_CONFIGURATION)),$(RELEASE_UNCHECKED)) --product smartstackctl $(SWIFT_FLAGS)
	mkdir -p $(CTL_DOCS)
	ctl=$$($(SWIFT) build -c $(CTL_CONFIGURATION) $(if $(filter release,$(CTL_CONFIGURATION)),$(RELEASE_UNCHECKED)) --show-bin-path)/smartstackctl; \
	$$ctl --generate-completion-script bash > $(CTL_DOCS)/smartstackctl.bash && \
	$$ctl --generate-completion-script zsh > $(CTL_DOCS)/_smartstackctl && \
	$$ctl --generate-completion-script fish > $(CTL_DOCS)/smartstackctl.fish && \
	python3 scripts/smartstackctl-manual.py $$ctl $(CTL_DOCS)/smartstackctl.1

## install-ctl: smartstackctl's completions and man page under $(DESTDIR)$(PREFIX)/share (the binary goes with
## the main install target).
install-ctl: ctl-docs
	install -D -m 644 $(CTL_DOCS)/smartstackctl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/smartstackctl
	install -D -m 644 $(CTL_DOCS)/_smartstackctl $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_smartstackctl
	install -D -m 644 $(CTL_DOCS)/smartstackctl.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/smartstackctl.fish
	install -D -m 644 $(CTL_DOCS)/smartstackctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/smartstackctl.1

## fuzz: each libFuzzer target (docs/fuzzing.md) for FUZZ_SECONDS seconds, one after another. fuzz-build builds them
## in their own scratch path with SMARTSTACK_FUZZ=1, which Package.swift reads: the project's modules get
## -sanitize=fuzzer,address, the dependencies are built as usual. Seeds: Tests/fuzz/corpus/TARGET (read only); what
## a run discovers goes to .build-fuzz/corpus/TARGET, crashing inputs to .build-fuzz/crashes/, each run's log to
## .build-fuzz/fuzz-TARGET.log. Fails on the first crash, leak or hang (> FUZZ_TIMEOUT s for one input); leaks
## are not checked for dispatch (its tasks free memory after an input returns; see docs/fuzzing.md).
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_TARGETS ?= wire dispatch codec
FUZZ_SCRATCH := .build-fuzz
FUZZ_CORPUS ?= $(FUZZ_SCRATCH)/corpus
FUZZ_OPTIONS ?=
# At most this many inputs per target (libFuzzer's -runs); unset: until FUZZ_SECONDS.
FUZZ_RUNS_wire ?=
FUZZ_RUNS_dispatch ?=
FUZZ_RUNS_codec ?=
# A command the targets run under (fuzz-test: FUZZ_DETERMINISTIC).
FUZZ_RUNNER ?=
fuzz-build: deps
	@set -o pipefail; for target in $(FUZZ_TARGETS); do \
		SMARTSTACK_FUZZ=1 $(SWIFT) build --product fuzz-$$target $(SWIFT_FLAGS) --scratch-path $(FUZZ_SCRATCH) 2>&1 \
			| grep -v 'Cannot export local symbol' || exit 1; \
	done

fuzz: fuzz-build
	@for target in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_CORPUS)/$$target $(FUZZ_SCRATCH)/crashes; \
		log=$(FUZZ_SCRATCH)/fuzz-$$target.log; \
		case $$target in \
			wire) options=; runs=$(FUZZ_RUNS_wire);; \
			dispatch) options=-detect_leaks=0; runs=$(FUZZ_RUNS_dispatch);; \
			codec) options=; runs=$(FUZZ_RUNS_codec);; \
		esac; \
		if [ -n "$$runs" ]; then options="$$options -runs=$$runs"; fi; \
		echo "fuzz-$$target: $(FUZZ_SECONDS) s at most $(FUZZ_OPTIONS) $$options (log: $$log)"; \
		start=$$(date +%s); \
		if ! LSAN_OPTIONS=suppressions=Tests/fuzz/lsan.supp $(FUZZ_RUNNER) $(FUZZ_SCRATCH)/debug/fuzz-$$target $$options \
			-max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) $(FUZZ_OPTIONS) \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_SCRATCH)/crashes/$$target- \
			$(FUZZ_CORPUS)/$$target Tests/fuzz/corpus/$$target > $$log 2>&1; then \
			tail -n 60 $$log; echo "fuzz-$$target FAILED: the input is in $(FUZZ_SCRATCH)/crashes/"; exit 1; \
		fi; \
		grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::peak_rss_mb' $$log; \
		echo "fuzz-$$target: $$(( $$(date +%s) - start )) s"; \
	done

## fuzz-test: the fuzzing step of make test: each target for at most FUZZ_TEST_SECONDS (20) seconds and at most
## FUZZ_TEST_RUNS_TARGET inputs (about 20 s each on the loaded 2-core build machine), -seed=1, from the checked-in
## seeds in a fresh corpus, with -reload=0 (no timed re-reads of the corpus directory) and -use_cmp=0 (no
## comparison operands, which include addresses, in the mutation dictionary), under FUZZ_DETERMINISTIC: Swift's
## hashing seeded the same in every process and address randomization off (setarch -R); fuzz-dispatch runs its
## tasks and actor jobs on one thread in order (Sources/FuzzSupport/OneThreadExecutor.swift). Then an input's
## coverage, hence libFuzzer's next input, is the same on every machine: CI runs the inputs run here (a prefix of
## them if its 20 s end first) and cannot fail on a new input at random. See docs/fuzzing.md, "In make test".
FUZZ_TEST_SECONDS ?= 20
FUZZ_TEST_RUNS_wire := 10000
FUZZ_TEST_RUNS_dispatch := 8000
FUZZ_TEST_RUNS_codec := 10000
FUZZ_DETERMINISTIC = env SWIFT_DETERMINISTIC_HASHING=1 \
	$(shell setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R)
fuzz-test:
	rm -rf $(FUZZ_SCRATCH)/test-corpus
	@case "$(FUZZ_DETERMINISTIC)" in *setarch*) ;; \
		*) echo "fuzz-test: setarch -R is not allowed here: fuzz-dispatch's inputs may differ from other machines'";; esac
	$(MAKE) --no-print-directory fuzz FUZZ_TARGETS="dispatch wire codec" FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) \
		FUZZ_OPTIONS="-seed=1 -reload=0 -use_cmp=0" FUZZ_CORPUS=$(FUZZ_SCRATCH)/test-corpus FUZZ_RUNNER="$(FUZZ_DETERMINISTIC)" \
		FUZZ_RUNS_wire=$(FUZZ_TEST_RUNS_wire) FUZZ_RUNS_dispatch=$(FUZZ_TEST_RUNS_dispatch) \
		FUZZ_RUNS_codec=$(FUZZ_TEST_RUNS_codec)

clean:
	rm -rf .build .build-fuzz
