# hetfarm - build, run, test.
#
#   make            the library build/libhetfarm.a and the CLI build/hetfarm
#   make run        CPU for real + a simulated CPU + 2-GPU node; prints the comparison table
#   make test       unit/integration tests, then again under ASan+UBSan, then pool+engine under TSan
#   make bench      benchmarks under bench/ (writes bench/results/*.json)
#   make new-app NAME=foo   a working app template under apps/foo/
#
# Dependencies come from Debian's packages; `make deps` installs the missing ones
# (as root) or prints the apt-get command (otherwise). CUDA is used when nvcc is
# found (NVCC= disables it); without it the build is CPU-only.

BUILD   ?= build
SAN     ?=
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

DEB_PKGS := libhwloc-dev libopenblas-dev libstarpu-dev libinih-dev libcjson-dev \
            libcmocka-dev libhyperscan-dev pkg-config
PKGS     := hwloc openblas inih libcjson

CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -pthread -MMD -MP \
           -Iframework -Ischedulers $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -fopenmp -pthread -lm

ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -O1
LDFLAGS += -fsanitize=$(SAN)
NVCC    :=
endif

# Sources: every .c of the framework, the schedulers and the apps; main.c is the CLI.
LIB_SRC := $(filter-out framework/main.c,$(wildcard framework/*.c)) \
           $(wildcard schedulers/*.c) $(wildcard apps/*/*.c)
ifneq ($(NVCC),)
CU_SRC  := $(wildcard framework/*.cu apps/*/*.cu)
CFLAGS  += -DHF_HAVE_CUDA -I$(CUDA_HOME)/include
LDLIBS  += -L$(CUDA_HOME)/lib64 -lcublas -lcudart -Wl,-rpath,/usr/local/cuda/lib64
NVFLAGS := -O2 -std=c++17 -DHF_HAVE_CUDA -Iframework -Ischedulers -Xcompiler -Wall,-fPIC \
           -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
           -gencode arch=compute_90,code=compute_90
else
LIB_SRC := $(filter-out %_cuda.c,$(LIB_SRC))
CU_SRC  :=
endif

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.cu.o)
LIB     := $(BUILD)/libhetfarm.a
BIN     := $(BUILD)/hetfarm
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))
TSAN_TESTS := test_pool test_engine

.PHONY: all deps run test tests unit asan tsan bench format lint new-app clean
all: deps $(BIN)

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; \
	    (apt-get install -y -q $$missing || (apt-get update -q && apt-get install -y -q $$missing)) >/dev/null || exit 1; \
	  else echo "hetfarm needs these Debian packages:$$missing"; \
	    echo "run:  sudo apt-get install -y$$missing"; exit 1; fi; fi

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/framework/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

# Runs the given test binaries; exit 77 counts as skipped, anything else non-zero fails.
define run_tests
	@fail=0; for t in $(1); do \
	  printf '%-40s ' "$$t"; out=$$($$t 2>&1); rc=$$?; \
	  if [ $$rc = 0 ]; then echo ok; elif [ $$rc = 77 ]; then echo "skipped ($$(echo "$$out" | tail -n1))"; \
	  else echo "FAILED (exit $$rc)"; echo "$$out" | tail -n 40; fail=1; fi; \
	done; [ $$fail = 0 ]
endef

tests: deps $(TESTS) $(BIN)
unit: tests
	$(call run_tests,$(TESTS))

test: deps
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory tsan

asan:
	$(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined tests
	$(call run_tests,$(wildcard build/asan/tests/test_*))

tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread \
	    $(addprefix build/tsan/tests/,$(TSAN_TESTS))
	$(call run_tests,$(addprefix build/tsan/tests/,$(TSAN_TESTS)))

run: all
	$(BIN) compare configs/cpu.ini
	$(BIN) compare configs/default.ini

bench: all
	bench/run-all.sh

new-app: all
	@test -n "$(NAME)" || { echo "usage: make new-app NAME=foo"; exit 2; }
	apps/template/new-app.sh $(NAME)

format:
	clang-format -i framework/*.[ch] schedulers/*.[ch] apps/*/*.[ch] tests/*.[ch]

lint:
	cppcheck --quiet --enable=warning,performance --std=c11 -Iframework -Ischedulers \
	    framework schedulers apps
	clang-tidy $(LIB_SRC) -- $(CFLAGS)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
