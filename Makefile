# hetfarm - build, run, test.
#
#   make            the library build/libhetfarm.a and the CLI build/hetfarm
#   make run        CPU for real + a simulated CPU + 2-GPU node; prints the comparison table
#   make test       unit/integration tests, then again under ASan+UBSan, then pool+engine under TSan
#   make bench      benchmarks under bench/ (writes bench/results/<machine>/*.json)
#   make fuzz       every libFuzzer harness tests/fuzz/fuzz_*.c for FUZZ_SECONDS (default 60)
#   make new-app NAME=foo   a working app template under apps/foo/
#
# Dependencies come from Debian's packages; `make deps` installs the missing ones
# (as root) or prints the apt-get command (otherwise): the build's libraries, and
# for the tests Chromium (the report's browser test) and clang with libFuzzer
# (the fuzz harnesses' smoke run), METIS and Scotch (the partitioner's anchors) and Open
# MPI (multi-node runs). CUDA is used when nvcc is
# found (NVCC= disables it); without it the build is CPU-only.

BUILD   ?= build
# `make` alone builds everything (rules below come before `all`).
.DEFAULT_GOAL := all
# The script tests (tests/*.py) run $(HF_BUILD)/hetfarm: the build being tested.
export HF_BUILD := $(BUILD)
SAN     ?=
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

DEB_PKGS := libhwloc-dev libopenblas-dev libstarpu-dev libinih-dev libcjson-dev \
            libcmocka-dev libhyperscan-dev pkg-config python3 \
            chromium clang libclang-rt-dev libomp-dev python3-networkx \
            metis libmetis-dev scotch libscotch-dev openmpi-bin libopenmpi-dev
PKGS     := hwloc openblas inih libcjson libhs

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -pthread -MMD -MP \
           -iquote framework -iquote apps $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lmetis -fopenmp -pthread -lm

ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
LDFLAGS += -fsanitize=$(SAN)
NVCC    :=
endif

# Sources: the framework's rooms (framework/README.md), the schedulers and the
# apps go into the library; framework/cli/ is the hetfarm command. An app is a
# folder apps/NAME/, or a folder of rooms (apps/graph/ROOM/, apps/graph/README.md):
# both depths are collected. Includes: a file names a header of its own folder
# by its name, any other by its path under framework/ or apps/ (-iquote both).
FW_DIRS  := core drivers io report
APP_C    := $(wildcard apps/*/*.c apps/*/*/*.c)
APP_CU   := $(wildcard apps/*/*.cu apps/*/*/*.cu)
LIB_SRC := $(foreach d,$(FW_DIRS),$(wildcard framework/$(d)/*.c)) \
           $(wildcard schedulers/*.c) $(APP_C)
CLI_SRC := $(wildcard framework/cli/*.c)
ifneq ($(NVCC),)
CU_SRC  := $(foreach d,$(FW_DIRS),$(wildcard framework/$(d)/*.cu)) $(APP_CU)
CFLAGS  += -DHF_HAVE_CUDA -I$(CUDA_HOME)/include
# cuBLAS is not linked: drivers/cublas_cuda.c opens it when a GPU first needs it.
LDLIBS  += -L$(CUDA_HOME)/lib64 -lcudart -ldl -lstdc++ -Wl,-rpath,/usr/local/cuda/lib64
NVFLAGS := -O2 -std=c++17 -DHF_HAVE_CUDA -Xcompiler -iquote,framework,-iquote,apps -Xcompiler -Wall,-Wextra,-Werror,-fPIC \
           -Werror all-warnings \
           -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
           -gencode arch=compute_90,code=compute_90
# The raw cuBLAS / pinned-copy probe that bench/gpu/run.sh compares hetfarm with.
GPU_PROBE := $(BUILD)/bench/gpu-probe
else
LIB_SRC := $(filter-out %_cuda.c,$(LIB_SRC))
CU_SRC  :=
endif

# Open MPI (optional; framework/mpi/README.md): the rank transport, compiled
# into the library with -DHF_HAVE_MPI when pkg-config finds ompi-c. `make
# HAVE_MPI=` builds without it even when it is installed. tests/test_mpi_transport
# is built either way; it skips (exit 77) without MPI and otherwise starts
# itself under $(HF_MPIRUN) with 3 ranks (`make test-mpi` runs that directly).
HAVE_MPI := $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1)
ifeq ($(HAVE_MPI),1)
LIB_SRC += $(wildcard framework/mpi/*.c)
CFLAGS  += -DHF_HAVE_MPI $(shell pkg-config --cflags ompi-c)
LDLIBS  += $(shell pkg-config --libs ompi-c)
endif
# How the MPI tests and benches start their ranks: as root in a container,
# oversubscribed (3 ranks on 2 cores). Exported: the test re-executes itself with it.
HF_MPIRUN ?= mpirun --oversubscribe --allow-run-as-root
export HF_MPIRUN

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.cu.o)

# App registry: every apps/DIR/NAME.c or apps/DIR/ROOM/NAME.c that defines
# `const struct hf_app hf_app_NAME` is an app (one folder may hold several:
# apps/graph/ has bfs/bfs.c, pagerank/pagerank.c, ...); $(BUILD)/apps_registry.c
# lists them in hf_apps[], apps/registry.c looks them up. The list is rewritten
# only when it changes.
APP_NAMES := $(sort $(foreach f,$(APP_C),$(if $(shell grep -l '^const struct hf_app hf_app_$(basename $(notdir $(f))) ' $(f)),$(basename $(notdir $(f))))))
LIB_OBJ += $(patsubst %.c,$(BUILD)/%.o,$(wildcard apps/*.c)) $(BUILD)/apps_registry.o
LIB     := $(BUILD)/libhetfarm.a
BIN     := $(BUILD)/hetfarm
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TSAN_TESTS := test_pool test_engine test_shared

# StarPU (optional; framework/starpu/README.md): HASS as a StarPU 1.3 policy in
# build/libhetfarm-starpu.a, with the two framework objects it reuses (the cost
# model, the error vocabulary), its example and its overhead bench, built when
# pkg-config finds starpu-1.3; then libhetfarm's StarPU engine is built with it. tests/test_starpu_hass is built either way and
# skips (exit 77) without StarPU.
#
# `make starpu-cuda` builds StarPU 1.3 with CUDA from Debian's source package
# into $(STARPU_CUDA) (framework/starpu/starpu-cuda.sh, a few minutes; never
# needed by `make test`). When its starpu-1.3.pc is there, every build uses
# that StarPU instead of Debian's, linked with an rpath to it (ldd, and any
# tool that packs a binary's libraries by ldd, then find it), and the StarPU engine's
# tasks get a CUDA implementation (core/engine_starpu.c). $(BUILD)/starpu-used
# names the StarPU in use, so that switching rebuilds what includes or links it.
STARPU_CUDA := $(CURDIR)/build/starpu-cuda
ifneq ($(wildcard $(STARPU_CUDA)/lib/pkgconfig/starpu-1.3.pc),)
SP_PKGCONFIG := PKG_CONFIG_PATH=$(STARPU_CUDA)/lib/pkgconfig pkg-config
SP_RPATH     := -Wl,-rpath,$(STARPU_CUDA)/lib
else
SP_PKGCONFIG := pkg-config
SP_RPATH     :=
endif
HAVE_STARPU := $(shell $(SP_PKGCONFIG) --exists starpu-1.3 2>/dev/null && echo 1)
ifeq ($(HAVE_STARPU),1)
# STARPU_DONT_INCLUDE_CUDA_HEADERS: nothing here uses StarPU's CUDA helpers, and a
# CUDA StarPU's starpu.h would include cusparse.h, whose CUDA 13 declarations
# fail -Werror (deprecated types).
SP_CFLAGS := -DHF_HAVE_STARPU -DSTARPU_DONT_INCLUDE_CUDA_HEADERS \
             $(shell $(SP_PKGCONFIG) --cflags starpu-1.3)
SP_LIBS   := $(shell $(SP_PKGCONFIG) --libs starpu-1.3) $(SP_RPATH) -lm
SP_LIB    := $(BUILD)/libhetfarm-starpu.a
SP_BINS   := $(BUILD)/bench/starpu/hass_example $(BUILD)/bench/starpu/policy_overhead
# core/engine_starpu.c: StarPU's policies as rows of compare (starpu:eager, ...).
LDLIBS    += $(SP_LIBS)
endif
$(BUILD)/framework/core/engine_starpu.o: CFLAGS += $(SP_CFLAGS)
SP_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard framework/starpu/*.c)) \
          $(BUILD)/framework/core/cost_model.o $(BUILD)/framework/core/cost_bytes.o \
          $(BUILD)/framework/io/error.o
$(BUILD)/framework/starpu/%.o: CFLAGS += $(SP_CFLAGS)
$(BUILD)/framework/core/engine_starpu.o $(patsubst %.c,$(BUILD)/%.o,$(wildcard framework/starpu/*.c)): \
    $(BUILD)/starpu-used

# Which StarPU the build uses ("none" without one); rewritten only when it changes.
$(BUILD)/starpu-used: FORCE
	@mkdir -p $(@D)
	@echo '$(if $(HAVE_STARPU),$(SP_CFLAGS) $(SP_LIBS),none)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

# StarPU 1.3 with CUDA from Debian's source package (see STARPU_CUDA above).
starpu-cuda:
	@test -n "$(NVCC)" || { echo "starpu-cuda: no nvcc found: StarPU with CUDA needs the CUDA toolkit"; exit 1; }
	framework/starpu/starpu-cuda.sh $(STARPU_CUDA) $(CUDA_HOME) 2

.PHONY: all build deps run test tests unit asan tsan bench format lint check-includes new-app clean \
        starpu starpu-cuda test-mpi bench-mpi partition-cuda-check \
        fuzz fuzz-build
# The flags above come from pkg-config, so everything that compiles runs in a
# second make, after `deps` has installed the packages on a fresh machine.
all: deps
	@$(MAKE) --no-print-directory build

build: $(BIN) $(GPU_PROBE) $(SP_LIB) $(SP_BINS)

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; \
	    (apt-get install -y -q $$missing || (apt-get update -q && apt-get install -y -q $$missing)) >/dev/null || exit 1; \
	  else echo "hetfarm needs these Debian packages:$$missing"; \
	    echo "run:  sudo apt-get install -y$$missing"; exit 1; fi; fi

# Archives are written under a temporary name and renamed: `make -j2 all tests`
# builds the library from two makes at once (all's second make and tests), and
# two ar runs on one file corrupt it; a fresh archive also drops stale members.
$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@.$$$$ $^ && mv -f $@.$$$$ $@

$(BIN): $(CLI_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# -MMD -MF: the headers a .cu includes are its prerequisites too (as -MMD does for .c).
$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<

# The app registry (see APP_NAMES above).
$(BUILD)/apps_registry.c: FORCE
	@mkdir -p $(@D)
	@{ echo '/* Generated by the Makefile from every apps/DIR/NAME.c defining hf_app_NAME: do not edit. */'; \
	  echo '#include "hetfarm.h"'; \
	  for a in $(APP_NAMES); do echo "extern const struct hf_app hf_app_$$a;"; done; \
	  echo 'const struct hf_app *const hf_apps[] = {'; \
	  for a in $(APP_NAMES); do echo "    &hf_app_$$a,"; done; \
	  echo '    NULL,'; echo '};'; } > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi

$(BUILD)/apps_registry.o: $(BUILD)/apps_registry.c
	$(CC) $(CFLAGS) -c -o $@ $<

FORCE:

$(BUILD)/bench/gpu-probe: bench/gpu/probe.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -o $@ $< -lcublas -Xlinker -rpath,$(CUDA_HOME)/lib64

# bench/graph/partition_cuda_check.cu: the partitioner's GPU kernels against its CPU code,
# through a stand-in for the CUDA driver (needs nvcc to build, a GPU to run)
partition-cuda-check: $(BUILD)/bench/partition_cuda_check
$(BUILD)/bench/partition_cuda_check: bench/graph/partition_cuda_check.cu \
        apps/graph/partition/partition_cuda.cu apps/graph/partition/partition_refine_cuda.cu \
        apps/graph/partition/partition_gpu.cuh \
        $(BUILD)/apps/graph/partition/partition_coarsen.o $(BUILD)/apps/graph/partition/partition_refine.o
	@test -n "$(NVCC)" || { echo "partition-cuda-check: no nvcc found"; exit 1; }
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -o $@ $(filter %.cu,$^) $(filter %.o,$^) \
	    -Xcompiler -fopenmp -lgomp

# bench/graph_export.c: any loadable or generated graph as METIS .graph (bench/graph/partition.sh)
graph-export: $(BUILD)/graph_export
$(BUILD)/graph_export: bench/graph_export.c $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# bench/devset_replay.c: a real run's rounds through the device-set choice (bench/README.md)
$(BUILD)/devset_replay: bench/devset_replay.c $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

# StarPU's library, its example and bench, and its test (see HAVE_STARPU).
starpu: $(SP_LIB) $(SP_BINS) $(BUILD)/tests/test_starpu_hass

$(SP_LIB): $(SP_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@.$$$$ $^ && mv -f $@.$$$$ $@

$(BUILD)/bench/starpu/%: bench/starpu/%.c $(SP_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SP_CFLAGS) -iquote framework/starpu $(LDFLAGS) -o $@ $< $(SP_LIB) $(SP_LIBS) $(LDLIBS)

$(BUILD)/tests/test_starpu_hass: tests/test_starpu_hass.c $(SP_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SP_CFLAGS) -iquote framework/starpu -Itests $(LDFLAGS) -o $@ $< $(SP_LIB) \
	    $(SP_LIBS) $(LDLIBS) -lcmocka

# The MPI transport's test under 3 ranks (what `make test` runs through the
# test's own re-execution), and its dispatch bench (bench/mpi/dispatch.c).
ifeq ($(HAVE_MPI),1)
test-mpi: $(BUILD)/tests/test_mpi_transport
	timeout 90 $(HF_MPIRUN) -np 3 $<

$(BUILD)/bench/mpi/dispatch: bench/mpi/dispatch.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# StarPU-MPI's cost for the same empty tasks, side by side (Debian's libstarpumpi).
$(BUILD)/bench/mpi/starpu_mpi: bench/mpi/starpu_mpi.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror $(shell pkg-config --cflags starpumpi-1.3 ompi-c) -o $@ $< \
	    $(shell pkg-config --libs starpumpi-1.3 ompi-c)

bench-mpi: $(BUILD)/bench/mpi/dispatch $(if $(shell pkg-config --exists starpumpi-1.3 && echo 1),$(BUILD)/bench/mpi/starpu_mpi)
	bench/mpi/run.sh $<
else
test-mpi bench-mpi:
	@echo "$@: built without MPI (pkg-config ompi-c failed, or HAVE_MPI= was given): skipped"
endif

# Runs the given test programs; exit 77 counts as skipped (its last line says
# why), anything else non-zero fails. Each outcome is appended to $(SUMMARY),
# from which `make test` prints its closing line.
SUMMARY := $(CURDIR)/build/test-summary.txt
define run_tests
	@mkdir -p $(dir $(SUMMARY)); fail=0; for t in $(1); do \
	  printf '%-40s ' "$$t"; out=$$($$t 2>&1); rc=$$?; last=$$(echo "$$out" | tail -n1); \
	  if [ $$rc = 0 ]; then echo ok; echo "pass $$t" >> $(SUMMARY); \
	  elif [ $$rc = 77 ]; then echo "skipped ($$last)"; echo "skip $$t $$last" >> $(SUMMARY); \
	  else echo "FAILED (exit $$rc)"; echo "$$out" | tail -n 40; echo "fail $$t" >> $(SUMMARY); fail=1; fi; \
	done; [ $$fail = 0 ]
endef

SCRIPT_TESTS := $(wildcard tests/test_*.py)

tests: deps $(TESTS) $(BIN) $(BUILD)/devset_replay
unit: tests
	$(call run_tests,$(TESTS) $(SCRIPT_TESTS))

# Every stage runs even when an earlier one failed, so that the closing line
# counts everything; the exit status is still non-zero on any failure.
test: deps
	@rm -f $(SUMMARY); st=0; \
	$(MAKE) --no-print-directory unit || st=1; \
	$(MAKE) --no-print-directory asan || st=1; \
	$(MAKE) --no-print-directory tsan || st=1; \
	python3 tests/summary.py $(SUMMARY) || st=1; exit $$st

asan:
	$(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined tests
	$(call run_tests,$(patsubst tests/%.c,build/asan/tests/%,$(wildcard tests/test_*.c)))

# The TSan stage is also the build without MPI (HAVE_MPI=): `make test` compiles and
# tests both configurations, as a machine without Open MPI would build hetfarm.
tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread HAVE_MPI= build/tsan/hetfarm \
	    $(addprefix build/tsan/tests/,$(TSAN_TESTS))
	$(call run_tests,$(addprefix build/tsan/tests/,$(TSAN_TESTS)))

# Fuzzing: every tests/fuzz/fuzz_NAME.c is a libFuzzer harness (found by the
# wildcard, so a new one needs no edit here), linked with the library built by
# clang with ASan+UBSan and coverage. `make fuzz` runs each for FUZZ_SECONDS
# on a corpus seeded from the globs on its "seeds:" line and from its
# regression inputs under tests/fuzz/corpus/NAME/ (tests/fuzz/run.sh).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_NAMES   := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz-build:
	$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) \
	    SAN=fuzzer-no-link,address,undefined $(addprefix build/fuzz/fuzz/,$(FUZZ_NAMES))

fuzz: deps fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(addprefix build/fuzz/fuzz/,$(FUZZ_NAMES))

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB) $(LDLIBS)

run: all
	$(BIN) compare configs/default.ini

bench: all
	bench/run-all.sh

new-app: all
	@test -n "$(NAME)" || { echo "usage: make new-app NAME=foo"; exit 2; }
	apps/new-app.sh $(NAME)

format:
	clang-format -i framework/*.h framework/*/*.[ch] schedulers/*.[ch] apps/*/*.[ch] \
	    apps/*/*/*.[ch] tests/*.[ch]

# The include rules of framework/README.md, checked on every `make test`;
# `make lint` adds cppcheck and clang-tidy.
check-includes:
	@python3 tests/check_includes.py .

lint: check-includes
	cppcheck --quiet --enable=warning,performance --std=c11 -Iframework -Iapps \
	    framework schedulers apps
	clang-tidy $(LIB_SRC) -- $(CFLAGS)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
