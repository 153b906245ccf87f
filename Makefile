# cuzk build (GNU make). Outputs go to build/ (libraries in build/lib, programs in build/bin,
# test programs in build/tests). See docs/decisions.md ("Build system") and README.md.
#
#   make                 library and programs
#   make test            CPU test suite (what CI runs)
#   make test-asan       the same under ASan+UBSan (build-asan/)
#   make gpu             CUDA library + GPU test/bench programs (needs nvcc; links libcudart only)
#   make test-gpu        run the GPU suite (on a machine with a GPU)
#   make bench           build cuzk-bench (run: build/bin/cuzk-bench arith)
#   make check-headers   every public header compiles on its own

BUILD   ?= build
CC      ?= cc
NVCC    ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
SAN     ?=
OPT     ?= -O3
GIT_ID  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

ARCH_FLAGS ?= -march=x86-64-v3
WARN    := -Wall -Wextra -Werror -Wshadow -Wundef -Wwrite-strings -Wstrict-prototypes \
           -Wmissing-prototypes
CFLAGS  ?= $(OPT) -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(ARCH_FLAGS) $(WARN) -Iinclude -pthread \
              -DCUZK_BUILD_ID=\"$(GIT_ID)\" $(SAN) $(CFLAGS)
LDFLAGS ?=
ALL_LDFLAGS := -pthread $(SAN) $(LDFLAGS)

# ---- sources, by library (lower layers never include higher ones) ----
CORE_DIRS := src/util src/ff src/ec src/pairing src/groth16 src/circuits src/circuits/gadgets
CORE_SRC  := $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c))
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
CORE_LIB  := $(BUILD)/lib/libcuzk_core.a

# GPU: CUDA sources when nvcc exists, else the stub that returns CUZK_E_NO_GPU.
GPU_CU    := $(wildcard src/gpu/*.cu)
GPU_STUB  := $(wildcard src/gpu/*_stub.c)
GPU_ARCHS ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
             -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_120,code=sm_120 -gencode arch=compute_120,code=compute_120
NVFLAGS   ?= -O3 -std=c++17 -Iinclude -Xcompiler -fPIC,-Wall $(GPU_ARCHS)

# Filecoin formats (first user of a JSON library) and the daemon (gRPC, protobuf-c, HTTP).
FIL_SRC   := $(wildcard src/filecoin/*.c)
FIL_OBJ   := $(FIL_SRC:%.c=$(BUILD)/obj/%.o)
SRV_SRC   := $(wildcard src/engine/*.c src/server/*.c)
SRV_OBJ   := $(SRV_SRC:%.c=$(BUILD)/obj/%.o)

PROGRAMS  := $(BUILD)/bin/cuzk-bench $(BUILD)/bin/cuzk-params
TEST_SRC  := $(filter-out tests/gpu/%,$(wildcard tests/*/test_*.c))
TEST_BINS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_LIBS := -lgmp -lcrypto -lm

.PHONY: all test test-asan gpu test-gpu bench check-headers clean deps
all: $(CORE_LIB) $(PROGRAMS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# ---- programs ----
BENCH_SRC  := $(wildcard cmd/cuzk-bench/*.c)
PARAMS_SRC := $(wildcard cmd/cuzk-params/*.c)
$(BUILD)/bin/cuzk-bench: $(BENCH_SRC:%.c=$(BUILD)/obj/%.o) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lm
$(BUILD)/bin/cuzk-params: $(PARAMS_SRC:%.c=$(BUILD)/obj/%.o) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lm

# ---- tests ----
$(BUILD)/tests/%: tests/%.c $(BUILD)/obj/tests/test_main.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(BUILD)/obj/tests/test_main.o $(CORE_LIB) $(TEST_LIBS) $(ALL_LDFLAGS)
$(BUILD)/obj/tests/test_main.o: tests/test_main.c tests/test.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -c $< -o $@

test: all $(TEST_BINS)
	@tests/run_all.sh $(TEST_BINS)

test-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" test

bench: $(BUILD)/bin/cuzk-bench

check-headers:
	@for h in include/cuzk/*.h; do echo "#include \"$${h#include/}\"" | $(CC) $(ALL_CFLAGS) -x c -fsyntax-only - || exit 1; done; echo "headers OK"

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
