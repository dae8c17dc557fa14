# gpureclaim: build, install, tests, fuzzing and benchmarks.
#
# Build and install
#   make                 build bin/gpureclaim-exporter and bin/gpureclaim-enforcer (target all)
#   make tests           build the unit tests (build/tests/test_*) and the fake servers
#   make deps            apt-get install --no-install-recommends what building and testing need
#   make install         PREFIX=/usr/local DESTDIR=; make uninstall removes the two programs
#   make clean           remove build/ and bin/
#
# Tests (docs/tests.md lists every suite; each leaves build/results/<suite>.log)
#   make check           make deps, then every suite; ends "N passed, N failed"
#   make check-all       every suite, without make deps first
#   make check-unit      the unit tests; T=name runs one (T=restore: tests/unit/test_restore.c)
#   make check-san       the unit tests built with SANITIZE=address,undefined (T=name: one)
#   make check-valgrind  the unit tests (T=name: one) and the exporter under valgrind memcheck
#   make check-e2e       the end-to-end suites; T=name runs one (T=restore: tests/e2e/restore.sh)
#   make check-tsdb      the decision suites again on Prometheus 3 and a current VictoriaMetrics
#                        (TSDB_GEN=current; tests/tsdb/build.sh builds them; T=name: one)
#   make tsdb            build (or find cached) the current servers from Go modules
#   make check-fuzz      every libFuzzer target for FUZZ_SECONDS each, as a suite
#   make check-rules     gpureclaim-enforcer check and promtool on the shipped rules
#   make check-fixtures  the generated fixtures are what their generators produce
#   make check-citations cited files and sections exist, docs/code-map.md is current, and this
#                        help lists every target
#   make check-includes  no include cycle between modules, no unused project header
#   make format-check    clang-format --dry-run -Werror; make format rewrites the sources
#   make check-unit-run  the unit tests, one suite each (check-unit and check-san run it)
#
# Fixtures, fuzzing, benchmarks, demo
#   make fixtures        regenerate the generated fixtures
#   make update-golden   rewrite the golden /metrics files from the current exporter
#   make fuzz            every libFuzzer target for FUZZ_SECONDS each (FUZZ_RUNS=N: N executions)
#   make bench           scrape latency/RSS against node_exporter, enforcer plan cycle
#   make demo            the whole loop on a simulated 8 x MI300X node (see README)
#   make demo-kube       the same on a real Kubernetes (kwok's fake GPU node; tests/kube/cluster.sh)
#   make help            this text
#
# Variables: DEVELOPER=1 adds -Werror and a stricter warning set; SANITIZE=address,undefined
# builds with sanitizers (into build/san unless BUILD is given); JOBS=N sets how many compiles,
# valgrind runs and fuzz targets make check runs at once (default: the number of cores);
# T=name picks one unit test or e2e suite (with or without its test_ prefix or .sh suffix);
# CHECK_NICE=N the niceness of make check's CPU-bound stages (19; 0 beside another load).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
PKG_CONFIG ?= pkg-config
CC ?= cc
FUZZ_CC ?= clang
FUZZ_CXX ?= clang++
CFLAGS ?= -O2 -g
LDFLAGS ?=
FUZZ_SECONDS ?= 10
FUZZ_RUNS ?=
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

ifneq ($(SANITIZE),)
BUILD ?= build/san
OUT ?= $(BUILD)/bin
else
BUILD ?= build
OUT ?= bin
endif
RESULTS ?= build/results
export RESULTS
# make check builds with one job per core: CI has a time budget and the compiles are most of
# the sanitizer and fuzz steps.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
export JOBS

WARN := -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow -Wformat=2 \
        -Wno-unused-parameter -Wpointer-arith -Wvla -Wno-format-truncation
ifeq ($(DEVELOPER),1)
WARN += -Werror -Wold-style-definition -Wundef -Wno-error=deprecated-declarations
endif
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -MMD -MP -Icommon $(WARN) \
               -DGPURECLAIM_VERSION='"$(VERSION)"'
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif
# C++ only for the RE2 shim (enforcer/*.cc); vptr (and, with clang, function) checks need the
# C++ UBSan runtime, which a link by the C compiler does not bring.
BASE_CXXFLAGS := -std=c++17 -D_GNU_SOURCE -MMD -MP -Wall -Wextra -Wshadow -Wno-unused-parameter \
                 $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize=vptr -fno-omit-frame-pointer \
                 -fno-sanitize-recover=all)

EXPORTER_PKGS := libmicrohttpd libdrm libdrm_amdgpu libcurl json-c yaml-0.1 gnutls libcrypt
ENFORCER_PKGS := libmicrohttpd libcurl json-c yaml-0.1 gnutls libcrypt re2 snappy
ALL_PKGS := $(sort $(EXPORTER_PKGS) $(ENFORCER_PKGS))

# Goals that must work before any library is installed skip the pkg-config checks.
NO_PKG_GOALS := deps clean help check demo demo-kube bench format format-check fixtures check-fixtures \
                check-citations check-includes tsdb
ifneq ($(filter-out $(NO_PKG_GOALS),$(or $(MAKECMDGOALS),all)),)
pkg_missing = $(strip $(foreach p,$(1),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo y),,$(p))))
MISSING := $(call pkg_missing,$(ALL_PKGS))
ifneq ($(MISSING),)
$(error pkg-config cannot find: $(MISSING); run 'make deps' as root or install their -dev packages)
endif
EXPORTER_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(EXPORTER_PKGS))
EXPORTER_LIBS := $(shell $(PKG_CONFIG) --libs $(EXPORTER_PKGS)) -lpthread -lm
ENFORCER_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(ENFORCER_PKGS))
ENFORCER_LIBS := $(shell $(PKG_CONFIG) --libs $(ENFORCER_PKGS)) -lstdc++ -lpthread -lm
ALL_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(ALL_PKGS))
ALL_LIBS := $(shell $(PKG_CONFIG) --libs $(ALL_PKGS)) -lstdc++ -lpthread -lm
RE2_CFLAGS := $(shell $(PKG_CONFIG) --cflags re2)
endif

COMMON_SRC := $(wildcard common/*.c)
EXPORTER_SRC := $(filter-out exporter/main.c,$(wildcard exporter/*.c))
ENFORCER_SRC := $(filter-out enforcer/main.c,$(wildcard enforcer/*.c))
ENFORCER_CXX_SRC := $(wildcard enforcer/*.cc)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FAKE_SRC := $(wildcard tests/fakes/*.c)
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)

# T=name: one unit test (tests/unit/test_NAME.c) or one e2e suite (tests/e2e/NAME.sh).
T ?=
T_NAME := $(patsubst test_%,%,$(basename $(notdir $(T))))
ifneq ($(T),)
ifneq ($(filter check-unit check-unit-run check-san check-valgrind,$(MAKECMDGOALS)),)
ifeq ($(wildcard tests/unit/test_$(T_NAME).c),)
$(error no unit test '$(T)': there is no tests/unit/test_$(T_NAME).c)
endif
endif
ifneq ($(filter check-e2e check-tsdb,$(MAKECMDGOALS)),)
ifeq ($(wildcard tests/e2e/$(T_NAME).sh),)
$(error no e2e suite '$(T)': there is no tests/e2e/$(T_NAME).sh)
endif
endif
endif

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
COMMON_LIB := $(BUILD)/libcommon.a
EXPORTER_LIB := $(BUILD)/libexporter.a
ENFORCER_LIB := $(BUILD)/libenforcer.a
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FAKE_BIN := $(patsubst tests/fakes/%.c,$(BUILD)/fakes/%,$(FAKE_SRC))
FUZZ_BIN := $(patsubst fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
UNIT_RUN := $(if $(T),$(BUILD)/tests/test_$(T_NAME),$(UNIT_BIN))
PROGRAMS := $(OUT)/gpureclaim-exporter $(OUT)/gpureclaim-enforcer

.SECONDARY:

.PHONY: all deps check check-all check-unit check-unit-run check-san check-e2e check-tsdb tsdb check-valgrind \
        check-fuzz check-rules check-fixtures check-citations check-includes fixtures fuzz bench \
        demo demo-kube install uninstall clean format format-check update-golden tests help

all: $(PROGRAMS)

$(BUILD)/obj/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(ALL_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/exporter/%.o: exporter/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Iexporter $(EXPORTER_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/enforcer/%.o: enforcer/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Ienforcer $(ENFORCER_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/enforcer/%.o: enforcer/%.cc
	@mkdir -p $(@D)
	$(CXX) $(BASE_CXXFLAGS) $(RE2_CFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Iexporter -Ienforcer -Itests/unit $(ALL_CFLAGS) $(CFLAGS) -c $< -o $@

$(COMMON_LIB): $(call obj,$(COMMON_SRC))
$(EXPORTER_LIB): $(call obj,$(EXPORTER_SRC))
$(ENFORCER_LIB): $(call obj,$(ENFORCER_SRC)) $(patsubst %.cc,$(BUILD)/obj/%.o,$(ENFORCER_CXX_SRC))
$(COMMON_LIB) $(EXPORTER_LIB) $(ENFORCER_LIB):
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(OUT)/gpureclaim-exporter: $(call obj,exporter/main.c) $(EXPORTER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(EXPORTER_LIBS)

$(OUT)/gpureclaim-enforcer: $(call obj,enforcer/main.c) $(ENFORCER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(ENFORCER_LIBS)

# A unit test #includes the module it tests; the archives supply everything else.
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(EXPORTER_LIB) $(ENFORCER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(ALL_LIBS)

# The unit tests that start a fake server run the one built next to them (tests/unit/fake.h):
# built with the test, so that `make check-unit T=kube` (or build/tests/test_kube after
# `make build/tests/test_kube`) runs on a fresh tree instead of failing to start it.
$(BUILD)/tests/test_kube $(BUILD)/tests/test_act_kube: | $(BUILD)/fakes/fake_kube
$(BUILD)/tests/test_fetch $(BUILD)/tests/test_promq: | $(BUILD)/fakes/fake_prom

$(BUILD)/fakes/%: $(BUILD)/obj/tests/fakes/%.o $(ENFORCER_LIB) $(EXPORTER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(ALL_LIBS)

tests: $(UNIT_BIN) $(FAKE_BIN)

# ---- dependencies --------------------------------------------------------------------------

deps:
	@sh tests/deps.sh

# ---- tests ----------------------------------------------------------------------------------

# The README's test command: install what is missing, then run everything in a fresh make so
# that pkg-config sees the libraries deps just installed. A step that fails without running
# its suites (a sanitizer build that does not compile, say) is counted as one failure: an
# ignored make error would otherwise report nothing for those suites and still pass.
check:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory check-all

# The demo suite spends about four minutes waiting on idle timers with the CPU nearly idle, so
# it runs beside the CPU-bound stages (unit, sanitizer, valgrind and fuzz runs), which run at
# the lowest priority: the demo's exporter, Prometheus and enforcer keep their timing, and its
# wait no longer adds to the total. The suites that measure time (check-e2e) start after it
# has ended. Its lines are printed when it ends.
DEMO_PID = $(RESULTS)/e2e-demo.pid
# CHECK_NICE: the niceness of those CPU-bound stages. Another load at normal priority (a
# stress test, `stress-ng --cpu 2`) would leave nice-19 work about 1.5 % of a core (CFS weights
# 15 against 1024), so a run beside one sets CHECK_NICE=0: every stage then shares the cores
# with the load as equals, the demo included.
CHECK_NICE ?= 19
# The servers built from Go modules (tests/go-build.sh: the real Kubernetes of the kube_* suites,
# the JobSet, LWS and KubeRay controllers of kube_crds and the current Prometheus and
# VictoriaMetrics of check-tsdb, cached by version outside the tree) are built beside the same
# stages, at a lower priority than the demo, and waited for before check-e2e; a warm cache
# makes it a no-op.
GO_BUILD_PID = $(RESULTS)/go-build.pid
# The two real-cluster suites that mostly wait, demo_kube (the demo-kube timeline, about three
# minutes of idle timers) and kube_alerts (an alert's real `for: 5m`), run one after the other
# beside the same stages once go-build has ended (their cluster needs its binaries), and are
# waited for at the end. On a fresh machine go-build ends after the CPU stages, so they then run
# beside check-e2e rather than add their nine minutes of waiting to the total.
KUBE_BG_SUITES = demo_kube kube_alerts
KUBE_BG_PID = $(RESULTS)/kube-bg.pid
# kube_crds builds the JobSet, LWS and KubeRay controllers it runs on first use (tests/kube/
# crds.sh, cached by version): some 20 CPU-minutes cold, so it too runs in the background
# after go-build, beside check-e2e rather than before it, and is waited for at the end.
KUBE_CRDS_PID = $(RESULTS)/kube-crds.pid
check-all:
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory -j$(JOBS) all tests
	@{ BUILD=$(BUILD) sh tests/run-suite.sh e2e-demo sh tests/e2e/demo.sh \
	    >$(RESULTS)/e2e-demo.out 2>&1 & echo $$! >$(DEMO_PID); }
	@{ nice -n 10 sh tests/run-suite.sh go-build sh tests/go-build.sh \
	    >$(RESULTS)/go-build.out 2>&1 & echo $$! >$(GO_BUILD_PID); }
	@{ { while kill -0 $$(cat $(GO_BUILD_PID)) 2>/dev/null; do sleep 1; done; \
	    for t in $(KUBE_BG_SUITES); do \
	        BUILD=$(BUILD) sh tests/run-suite.sh e2e-$$t sh tests/e2e/$$t.sh; \
	    done; } >$(RESULTS)/kube-bg.out 2>&1 & echo $$! >$(KUBE_BG_PID); }
	@{ { while kill -0 $$(cat $(GO_BUILD_PID)) 2>/dev/null; do sleep 1; done; \
	    BUILD=$(BUILD) sh tests/run-suite.sh e2e-kube_crds sh tests/e2e/kube_crds.sh; \
	    } >$(RESULTS)/kube-crds.out 2>&1 & echo $$! >$(KUBE_CRDS_PID); }
	@nice -n $(CHECK_NICE) $(MAKE) --no-print-directory check-unit-run || \
	    { echo "FAIL: make check-unit-run"; echo "0 1" >$(RESULTS)/make-check-unit-run.count; }
	@nice -n $(CHECK_NICE) $(MAKE) --no-print-directory check-san || \
	    { echo "FAIL: make check-san"; echo "0 1" >$(RESULTS)/make-check-san.count; }
	@nice -n $(CHECK_NICE) $(MAKE) --no-print-directory check-valgrind || \
	    { echo "FAIL: make check-valgrind"; echo "0 1" >$(RESULTS)/make-check-valgrind.count; }
	@nice -n $(CHECK_NICE) $(MAKE) --no-print-directory -j$(JOBS) check-fuzz \
	    FUZZ_SECONDS=$${FUZZ_SECONDS_CHECK:-3} || \
	    { echo "FAIL: make check-fuzz"; echo "0 1" >$(RESULTS)/make-check-fuzz.count; }
	@while kill -0 $$(cat $(DEMO_PID)) 2>/dev/null; do sleep 1; done; cat $(RESULTS)/e2e-demo.out
	@test -f $(RESULTS)/e2e-demo.count || \
	    { echo "FAIL: e2e-demo (no result)"; echo "0 1" >$(RESULTS)/e2e-demo.count; }
	@$(MAKE) --no-print-directory check-fixtures || \
	    { echo "FAIL: make check-fixtures"; echo "0 1" >$(RESULTS)/make-check-fixtures.count; }
	@$(MAKE) --no-print-directory check-citations || \
	    { echo "FAIL: make check-citations"; echo "0 1" >$(RESULTS)/make-check-citations.count; }
	@$(MAKE) --no-print-directory check-includes || \
	    { echo "FAIL: make check-includes"; echo "0 1" >$(RESULTS)/make-check-includes.count; }
	@while kill -0 $$(cat $(GO_BUILD_PID)) 2>/dev/null; do sleep 1; done; \
	    cat $(RESULTS)/go-build.out
	@$(MAKE) --no-print-directory check-e2e E2E_SKIP="demo $(KUBE_BG_SUITES) kube_crds" || \
	    { echo "FAIL: make check-e2e"; echo "0 1" >$(RESULTS)/make-check-e2e.count; }
	@$(MAKE) --no-print-directory check-tsdb || \
	    { echo "FAIL: make check-tsdb"; echo "0 1" >$(RESULTS)/make-check-tsdb.count; }
	@while kill -0 $$(cat $(KUBE_BG_PID)) 2>/dev/null; do sleep 1; done; cat $(RESULTS)/kube-bg.out
	@while kill -0 $$(cat $(KUBE_CRDS_PID)) 2>/dev/null; do sleep 1; done; \
	    cat $(RESULTS)/kube-crds.out
	@for t in $(KUBE_BG_SUITES) kube_crds; do test -f $(RESULTS)/e2e-$$t.count || \
	    { echo "FAIL: e2e-$$t (no result)"; echo "0 1" >$(RESULTS)/e2e-$$t.count; }; done
	@$(MAKE) --no-print-directory check-rules || \
	    { echo "FAIL: make check-rules"; echo "0 1" >$(RESULTS)/make-check-rules.count; }
	@$(MAKE) --no-print-directory format-check || \
	    { echo "FAIL: make format-check"; echo "0 1" >$(RESULTS)/make-format-check.count; }
	@sh tests/summarize.sh

check-unit: $(UNIT_RUN)
	@$(MAKE) --no-print-directory check-unit-run

check-unit-run: $(UNIT_RUN) $(FAKE_BIN)
	@for t in $(UNIT_RUN); do \
	    BUILD=$(BUILD) sh tests/run-suite.sh $(SUITE_PREFIX)$$(basename $$t) $$t; \
	done

check-san:
	@$(MAKE) --no-print-directory -j$(JOBS) SANITIZE=address,undefined SUITE_PREFIX=san- \
	    check-unit-run

# E2E_SKIP: suites (names without .sh) that check-all runs on their own.
E2E_RUN = $(if $(T),tests/e2e/$(T_NAME).sh,$(sort $(filter-out \
          $(patsubst %,tests/e2e/%.sh,$(E2E_SKIP)),$(wildcard tests/e2e/*.sh))))
# The suites whose decisions rest on a real time-series server: check-e2e runs them on Debian's
# Prometheus 2.42 and VictoriaMetrics 1.79, check-tsdb again on the current generation (the
# same scripts; TSDB_GEN picks the binaries by PATH, tests/lib.sh), as e2e-current-NAME.
TSDB_SUITES = enforcer_plan enforcer_vm enforcer_expr enforcer_differential enforcer_incremental \
              replay backtest
TSDB_RUN = $(if $(T),$(T_NAME),$(TSDB_SUITES))
# The random-history suites (differential, incremental, replay) on two of their three seeds:
# the server's semantics are what this run adds, and it costs about half as much again.
TSDB_SEEDS ?= 1 2
tsdb:
	@sh tests/tsdb/build.sh

check-tsdb: all $(FAKE_BIN) tsdb
	@for t in $(TSDB_RUN); do \
	    TSDB_GEN=current SEEDS="$(TSDB_SEEDS)" BUILD=$(BUILD) \
	        sh tests/run-suite.sh e2e-current-$$t sh tests/e2e/$$t.sh; \
	done

check-e2e: all $(FAKE_BIN)
	@for t in $(E2E_RUN); do \
	    BUILD=$(BUILD) sh tests/run-suite.sh e2e-$$(basename $$t .sh) sh $$t; \
	done

check-valgrind: $(UNIT_RUN) $(FAKE_BIN)
	@sh tests/run-suite.sh valgrind sh tests/valgrind.sh $(UNIT_RUN)

check-rules: all
	@sh tests/run-suite.sh rules sh tests/check-rules.sh

fixtures:
	python3 tests/gen/gpu_metrics_blob.py --out tests/fixtures/gpu_metrics/generated
	python3 tests/gen/gen_fixtures.py tests/fixtures

check-fixtures:
	@sh tests/run-suite.sh fixtures sh tests/check-fixtures.sh

# Cited .md files and docs/ sections must exist (tests/check-citations.sh); the code map and
# this file's help must list what is there.
check-citations:
	@sh tests/run-suite.sh citations sh tests/check-citations.sh
	@sh tests/run-suite.sh code-map python3 tests/gen/code_map.py --check
	@sh tests/run-suite.sh make-help sh tests/check-make-help.sh

# No include cycle between the modules, no unused project header (tests/check-includes.py).
check-includes:
	@sh tests/run-suite.sh includes python3 tests/check-includes.py --self-test

update-golden: all
	UPDATE_GOLDEN=1 sh tests/e2e/exporter_golden.sh

# ---- fuzzing --------------------------------------------------------------------------------

FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE -Icommon \
               -Iexporter -Ienforcer

# The RE2 shim is the one C++ object; every target links it (unused code costs nothing).
build/fuzz/re2_shim.o: enforcer/re2_shim.cc enforcer/re2_shim.h
	@mkdir -p $(@D)
	$(FUZZ_CXX) -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr,function \
	    -std=c++17 $(RE2_CFLAGS) -c $< -o $@

# A fuzz target #includes the module it fuzzes (and test-only parts such as
# tests/unit/promq_ref.c): rebuild it when any source changes.
# The common helpers every module may call are linked in; the rest of common/ is #included.
FUZZ_COMMON := common/util.c common/log.c common/dur.c common/file.c common/jsonparse.c \
               common/rfc3339.c common/utf8.c
build/fuzz/%: fuzz/%.c build/fuzz/re2_shim.o $(FUZZ_COMMON) \
              $(wildcard common/*.[ch] exporter/*.[ch] enforcer/*.[ch] tests/unit/*_ref.c)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(ALL_CFLAGS) $< $(FUZZ_COMMON) build/fuzz/re2_shim.o \
	    -o $@ $(ALL_LIBS)

fuzz: $(FUZZ_BIN)
	@FUZZ_RUNS=$(FUZZ_RUNS) sh tests/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

check-fuzz: $(FUZZ_BIN)
	@sh tests/run-suite.sh fuzz sh tests/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# ---- benchmarks, demo -----------------------------------------------------------------------

bench:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory all
	@sh bench/run.sh

demo:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory all
	@sh deploy/demo/demo.sh $(DEMO_ARGS)

# The real control plane is built from Go modules on first use (tests/kube/build.sh).
demo-kube:
	@sh tests/deps.sh
	@$(MAKE) --no-print-directory all
	@sh deploy/demo/demo-kube.sh $(DEMO_ARGS)

# ---- install, format, clean -----------------------------------------------------------------

install: all
	install -Dm755 $(OUT)/gpureclaim-exporter $(DESTDIR)$(BINDIR)/gpureclaim-exporter
	install -Dm755 $(OUT)/gpureclaim-enforcer $(DESTDIR)$(BINDIR)/gpureclaim-enforcer

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpureclaim-exporter $(DESTDIR)$(BINDIR)/gpureclaim-enforcer

FORMAT_SRC = $(wildcard common/*.[ch] exporter/*.[ch] enforcer/*.[ch] tests/unit/*.[ch] \
             tests/fakes/*.[ch] fuzz/*.c enforcer/*.cc)

format:
	clang-format -i $(FORMAT_SRC)

format-check:
	@sh tests/run-suite.sh format sh tests/format-check.sh $(FORMAT_SRC)

clean:
	rm -rf build bin

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//' 

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
