# cuzk build (GNU make). Outputs go to build/ (libraries in build/lib, programs in build/bin,
# test programs in build/tests). See docs/decisions.md ("Build system") and README.md.
#
#   make                 library and programs
#   make test            CPU test suite, the full tier (what CI runs; docs/testing.md)
#   make test-quick      the quick tier: unit tests of util/ff/ec/pairing/groth16/circuits/journal
#   make test-asan       the same under ASan+UBSan (build-asan/)
#   make test-tsan       the thread pool and the engine under ThreadSanitizer (build-tsan/)
#   make gpu             CUDA library + GPU test/bench programs (needs nvcc; links libcudart only)
#   make test-gpu        run the GPU suite (on a machine with a GPU)
#   make bench           build cuzk-bench (run: build/bin/cuzk-bench arith)
#   make check-headers   every public header compiles on its own
#   make fuzz, make fuzz-run FUZZ_SECONDS=N   libFuzzer targets for the parsers (docs/fuzzing.md)
#   make install PREFIX=/usr/local DESTDIR=, make deb   install, Debian package (docs/daemon.md "Install")

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
CORE_DIRS := src/util src/ff src/ec src/pairing src/groth16 src/gpu/host src/circuits src/circuits/gadgets
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


.PHONY: all test test-quick test-asan test-tsan gpu test-gpu gpu-field-check bench check-headers clean deps
all: $(CORE_LIB) $(PROGRAMS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# ---- programs ----
# bench_gpu*.c (the gpu-* subcommands) go into cuzk-bench-gpu only (GPU section)
BENCH_SRC  := $(filter-out cmd/cuzk-bench/bench_gpu%,$(wildcard cmd/cuzk-bench/*.c))
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
# the shared test headers (oracles, fixtures, templates) included by the test files
$(TEST_BINS): $(wildcard tests/*.h tests/*/*.h)
$(BUILD)/obj/tests/test_main.o: tests/test_main.c tests/test.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -c $< -o $@

test: all $(TEST_BINS)
	@tests/run_all.sh $(TEST_BINS)

# The quick tier (docs/testing.md "Tiers"): the unit tests of the layers below filecoin/ and the
# daemon (util, ff, ec, pairing, groth16, circuits, journal); no Filecoin circuit, no daemon.
# `make test` (the full tier, what CI runs) is a superset.
QUICK_DIRS := util ff ec pairing groth16 circuits journal
QUICK_BINS := $(filter $(QUICK_DIRS:%=$(BUILD)/tests/%/%),$(TEST_BINS))
# test_params runs build/bin/cuzk-params (its `setup` and `info` cases)
test-quick: $(QUICK_BINS) $(BUILD)/bin/cuzk-params
	@tests/run_all.sh $(QUICK_BINS)

test-asan:
	$(MAKE) BUILD=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" test

# ThreadSanitizer on the concurrent parts we own (the pool, the engine with fake GPUs, the key
# reader with its checker thread); the gRPC/daemon e2e tests are left out because Debian's grpc
# is not TSan-instrumented.
TSAN_TESTS := tests/util/test_pool tests/util/test_progress tests/e2e/test_engine_gpu tests/e2e/test_engine_status tests/groth16/test_params tests/groth16/test_shape
test-tsan:
	$(MAKE) BUILD=build-tsan OPT=-O1 SAN="-fsanitize=thread" $(TSAN_TESTS:%=build-tsan/%)
	@tests/run_all.sh $(TSAN_TESTS:%=build-tsan/%)

bench: $(BUILD)/bin/cuzk-bench

check-headers:
	@for h in include/cuzk/*.h; do echo "#include \"$${h#include/}\"" | $(CC) $(ALL_CFLAGS) -x c -fsyntax-only - || exit 1; done; echo "headers OK"

clean:
	rm -rf build build-asan build-tsan build-gpu build-fuzz

# ==================================================================================== daemon ====
# cuzk-daemon (src/engine + src/server -> libcuzk_srv.a), the cuzk-bench client subcommands and
# the daemon end-to-end tests. Needs Debian's libgrpc-dev, libprotobuf-c-dev, protobuf-c-compiler,
# libmicrohttpd-dev, libjansson-dev, libsystemd-dev, libsqlite3-dev (the job journal,
# src/journal: linked into the daemon and its tests only) (scripts/install-deps.sh). CUZK_CLIENT=0
# (the default when they are missing, e.g. on the GPU machine) builds cuzk-bench without the
# client subcommands, and no daemon.
CUZK_CLIENT ?= $(shell pkg-config --exists grpc libprotobuf-c libmicrohttpd jansson libsystemd \
                 sqlite3 2>/dev/null && command -v protoc-c >/dev/null 2>&1 && echo 1 || echo 0)
GEN_DIR     := $(BUILD)/gen
PROTO       := proto/cuzk/v1/proving.proto
PROTO_C     := $(GEN_DIR)/cuzk/v1/proving.pb-c.c
PROTO_H     := $(GEN_DIR)/cuzk/v1/proving.pb-c.h
PROTO_OBJ   := $(BUILD)/obj/gen/proving.pb-c.o
SRV_LIB     := $(BUILD)/lib/libcuzk_srv.a
DAEMON_SRC  := $(wildcard cmd/cuzk-daemon/*.c)
DAEMON_OBJ  := $(DAEMON_SRC:%.c=$(BUILD)/obj/%.o)
CLIENT_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard cmd/cuzk-bench/client*.c))
GRPC_LIBS   := -lgrpc -lgpr -lprotobuf-c
SRV_LIBS    := $(GRPC_LIBS) -lmicrohttpd -ljansson -lsystemd -lcrypto
# the job journal: its own objects, linked into the daemon (and the tests of both) only
JOURNAL_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/journal/*.c))
JOURNAL_LIBS := -lsqlite3 -lcrypto
E2E_PY      := $(BUILD)/tests/e2e/test_grpc_py

# config unit test: the daemon's config reader (cmd/cuzk-daemon/cfg.c, toml.c) needs no gRPC
CFG_OBJ := $(BUILD)/obj/cmd/cuzk-daemon/cfg.o $(BUILD)/obj/cmd/cuzk-daemon/toml.o
$(BUILD)/tests/e2e/test_cfg: $(CFG_OBJ)
$(BUILD)/tests/e2e/test_cfg: ALL_CFLAGS += -Icmd/cuzk-daemon
$(BUILD)/tests/e2e/test_cfg: TEST_LIBS += $(CFG_OBJ) $(CORE_LIB) -lcrypto

ifeq ($(CUZK_CLIENT),1)
all: $(BUILD)/bin/cuzk-daemon

$(PROTO_C): $(PROTO)
	@mkdir -p $(GEN_DIR)
	protoc-c --c_out=$(GEN_DIR) -Iproto $(PROTO)
$(PROTO_H): $(PROTO_C)
# generated code: our include paths, but not our -Werror warning set
$(PROTO_OBJ): $(PROTO_C)
	@mkdir -p $(dir $@)
	$(CC) -std=c17 $(OPT) -g -fPIC -I$(GEN_DIR) -c $< -o $@

$(SRV_OBJ) $(DAEMON_OBJ) $(CLIENT_OBJ): ALL_CFLAGS += -I$(GEN_DIR) -DCUZK_CLIENT=1
$(SRV_OBJ) $(DAEMON_OBJ) $(CLIENT_OBJ): | $(PROTO_H)
# the status page (GET /): src/server/page.html as a byte array, made with od and sed only
$(GEN_DIR)/status_page.h: src/server/page.html
	@mkdir -p $(GEN_DIR)
	{ echo '/* generated from src/server/page.html by the Makefile: do not edit */'; \
	  echo 'static const unsigned char status_page[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/src/server/http.o: $(GEN_DIR)/status_page.h
$(SRV_LIB): $(SRV_OBJ) $(PROTO_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/bin/cuzk-daemon: $(DAEMON_OBJ) $(JOURNAL_OBJ) $(SRV_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(SRV_LIBS) $(JOURNAL_LIBS) -lm

# the journal's own tests (tests/journal) and the crash/restart tests (tests/e2e/test_durable)
$(BUILD)/tests/journal/test_journal: $(JOURNAL_OBJ)
$(BUILD)/tests/journal/test_journal: ALL_CFLAGS += -DCUZK_CLIENT=1
$(BUILD)/tests/journal/test_journal: TEST_LIBS += $(JOURNAL_OBJ) $(CORE_LIB) $(JOURNAL_LIBS)
$(BUILD)/tests/journal/test_journal_damage: $(JOURNAL_OBJ)
$(BUILD)/tests/journal/test_journal_damage: ALL_CFLAGS += -DCUZK_CLIENT=1
$(BUILD)/tests/journal/test_journal_damage: TEST_LIBS += $(JOURNAL_OBJ) $(CORE_LIB) $(JOURNAL_LIBS)
$(BUILD)/tests/e2e/test_durable: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon
$(BUILD)/tests/e2e/test_durable: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_durable: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS)

# scripts/check-doc-idents.sh against docs the test writes (tests/e2e/test_doc_idents.c)
$(BUILD)/tests/e2e/test_doc_idents: scripts/check-doc-idents.sh scripts/lib/doc_idents.py scripts/doc-idents.allow
$(BUILD)/tests/e2e/test_doc_idents: ALL_CFLAGS += -DCUZK_REPO_DIR=\"$(CURDIR)\"

# the SubmitProofRequest <-> engine_request mapping (src/server/request.c) on its own
$(BUILD)/tests/e2e/test_request: $(SRV_LIB)
$(BUILD)/tests/e2e/test_request: ALL_CFLAGS += -I$(GEN_DIR) -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_request: TEST_LIBS += $(SRV_LIB) $(CORE_LIB) -lprotobuf-c

# cuzk-bench: the generic rule links $^; add the protobuf code and gRPC libraries
$(BUILD)/bin/cuzk-bench: $(PROTO_OBJ)
$(BUILD)/bin/cuzk-bench: ALL_LDFLAGS += -Wl,--no-as-needed $(GRPC_LIBS)

# e2e tests: the C test links the client core; the Python one is a wrapper script
$(BUILD)/tests/e2e/test_daemon: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench
$(BUILD)/tests/e2e/test_daemon: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_daemon: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS)
# PoSt through the daemon (tests/e2e/test_daemon_post.c): the same client core and libraries
$(BUILD)/tests/e2e/test_daemon_post: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench
$(BUILD)/tests/e2e/test_daemon_post: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_daemon_post: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS)
# NI-PoRep C2 and its aggregate through the daemon (tests/e2e/test_daemon_ni.c)
$(BUILD)/tests/e2e/test_daemon_ni: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench
$(BUILD)/tests/e2e/test_daemon_ni: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_daemon_ni: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS)
$(E2E_PY): tests/e2e/test_grpc.py $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexport CUZK_BIN_DIR=%s/bin\nexec /usr/bin/python3 %s/tests/e2e/test_grpc.py "$$@"\n' \
	    "$(abspath $(BUILD))" "$(CURDIR)" > $@
	chmod +x $@
TEST_BINS += $(E2E_PY)
test: $(E2E_PY)
# the engine with fake GPU devices: engine objects from libcuzk_srv.a, no gRPC needed
$(BUILD)/tests/e2e/test_engine_gpu: $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a
$(BUILD)/tests/e2e/test_engine_gpu: ALL_CFLAGS += -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_engine_gpu: TEST_LIBS += $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(CORE_LIB) -ljansson
# the status snapshot's key load, recent proofs and errors (tests/e2e/test_engine_status.c)
$(BUILD)/tests/e2e/test_engine_status: $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a
$(BUILD)/tests/e2e/test_engine_status: ALL_CFLAGS += -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_engine_status: TEST_LIBS += $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(CORE_LIB) -ljansson
# the engine's SnarkPack step on proofs the test makes (tests/e2e/test_engine_aggregate.c)
$(BUILD)/tests/e2e/test_engine_aggregate: $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a
$(BUILD)/tests/e2e/test_engine_aggregate: ALL_CFLAGS += -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_engine_aggregate: TEST_LIBS += $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(CORE_LIB) -ljansson

# GPU telemetry (src/server/nvml.c) against a fake NVML the build makes (tests/e2e/fake_nvml.c)
FAKE_NVML := $(BUILD)/tests/e2e/libfake_nvml.so
$(FAKE_NVML): tests/e2e/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -O1 -g -fPIC -shared -Wall -Wextra -Werror -o $@ $<
$(BUILD)/tests/e2e/test_nvml: $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(FAKE_NVML)
$(BUILD)/tests/e2e/test_nvml: ALL_CFLAGS += -DCUZK_CLIENT=1 -DFAKE_NVML_PATH=\"$(abspath $(FAKE_NVML))\"
$(BUILD)/tests/e2e/test_nvml: TEST_LIBS += $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(CORE_LIB) -ljansson

# the daemon as an operator meets it (tests/e2e/test_ops.c): Curio's example config, promtool on
# a live /metrics, the Grafana dashboard's queries, the NVML log line
$(BUILD)/tests/e2e/test_ops: $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon \
        $(BUILD)/bin/cuzk-bench $(SRV_LIB) $(FAKE_NVML) tests/data/curio-cuzk.example.toml deploy/grafana-cuzk.json
$(BUILD)/tests/e2e/test_ops: ALL_CFLAGS += -I$(GEN_DIR) -DCUZK_CLIENT=1 -DCUZK_REPO_DIR=\"$(CURDIR)\" \
        -DFAKE_NVML_PATH=\"$(abspath $(FAKE_NVML))\"
$(BUILD)/tests/e2e/test_ops: TEST_LIBS += $(BUILD)/obj/tests/e2e/daemon_harness.o $(SRV_LIB) \
        $(BUILD)/lib/libcuzk_fil.a $(CORE_LIB) -ljansson

daemon: $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench
.PHONY: daemon daemon-gpu

# `make daemon-gpu`: build/bin/cuzk-daemon-gpu, the same daemon linked with the CUDA backend
# (libcuzk_gpu.a, placed before libcuzk_core.a so the stub member is never pulled in, plus the
# static CUDA runtime as the GPU section links its programs). Install it as cuzk-daemon on GPU
# hosts; `make` keeps building cuzk-daemon with the stub (it then proves on the CPU).
# Libraries of later sections are named by path here: prerequisites expand immediately.
DAEMON_GPU      := $(BUILD)/bin/cuzk-daemon-gpu
DAEMON_GPU_LIBS := $(SRV_LIB) $(BUILD)/lib/libcuzk_fil.a $(BUILD)/lib/libcuzk_gpu.a $(CORE_LIB)
PARAMS_GPU      := $(BUILD)/bin/cuzk-params-gpu
PARAMS_GPU_LIBS := $(BUILD)/lib/libcuzk_fil.a $(BUILD)/lib/libcuzk_gpu.a $(CORE_LIB)
ifeq ($(wildcard $(NVCC)),)
daemon-gpu:
	@echo "make daemon-gpu: nvcc not found ($(NVCC)): the CUDA daemon needs the CUDA toolkit" >&2; exit 1
else
daemon-gpu: $(DAEMON_GPU) $(PARAMS_GPU) $(BUILD)/bin/cuzk-bench
$(DAEMON_GPU): $(DAEMON_OBJ) $(JOURNAL_OBJ) $(DAEMON_GPU_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(DAEMON_OBJ) $(JOURNAL_OBJ) $(DAEMON_GPU_LIBS) $(SRV_LIBS) \
	    $(JOURNAL_LIBS) -ljansson $(CUDA_LIBS) -lm
# cuzk-params-gpu: cuzk-params with the CUDA library (setup --gpu)
$(PARAMS_GPU): $(PARAMS_SRC:%.c=$(BUILD)/obj/%.o) $(PARAMS_GPU_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(PARAMS_SRC:%.c=$(BUILD)/obj/%.o) $(PARAMS_GPU_LIBS) -ljansson $(CUDA_LIBS) -lm
endif
endif
# ================================================================================ end daemon ====

# ========================================================================================= GPU ====
# CPU builds: the stub (src/gpu/gpu_stub.c, every call -> CUZK_E_NO_GPU) is a member of
# libcuzk_core.a, so programs always link. `make gpu` (needs nvcc) builds libcuzk_gpu.a from
# src/gpu/*.cu; GPU programs link it before libcuzk_core.a, and since it defines every gpu_*
# symbol the stub member is never pulled in. GPU programs link only libcudart (static) besides
# our libraries: no GMP/OpenSSL on the GPU machine.
#   make gpu              libcuzk_gpu.a, build/tests/gpu/test_*, build/bin/cuzk-bench-gpu
#   make test-gpu         build and run the GPU suite (needs a GPU)
#   make gpu GPU_ARCHS="-gencode arch=compute_90,code=sm_90"   (one arch, for quick iteration)
# nvcc compiles the GPU_ARCHS of one file in parallel (all five archs take minutes per file).
NVFLAGS      += --threads 0
GPU_STUB_OBJ := $(GPU_STUB:%.c=$(BUILD)/obj/%.o)
CORE_OBJ     += $(GPU_STUB_OBJ)
$(CORE_LIB): $(GPU_STUB_OBJ)

CUDA_HOME    ?= $(patsubst %/bin/,%,$(dir $(NVCC)))
CUDA_LIBS    := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib -lcudart_static \
                -ldl -lrt -lstdc++
GPU_LIB      := $(BUILD)/lib/libcuzk_gpu.a
GPU_OBJ      := $(GPU_CU:%.cu=$(BUILD)/obj/%.o)
GPU_BENCH_CU := $(wildcard src/gpu/bench/*.cu)
GPU_DEPS     := $(wildcard src/gpu/*.cuh src/gpu/*.h src/gpu/bench/*.cuh src/gpu/bench/*.h) $(wildcard include/cuzk/*.h) src/ff/ff_bingcd.h
GPU_TEST_SRC := $(wildcard tests/gpu/test_*.c)
GPU_TEST_BINS := $(GPU_TEST_SRC:tests/%.c=$(BUILD)/tests/%)
GPU_BENCH    := $(BUILD)/bin/cuzk-bench-gpu
# cuzk-bench-gpu: the registry (main.c) and the GPU subcommands only, so it needs none of the
# other subcommands' libraries on the GPU machine (in this order: `help` lists them as linked).
GPU_BENCH_OBJ := $(BUILD)/obj/cmd/cuzk-bench/main.o $(BUILD)/obj/cmd/cuzk-bench/bench_gpu.o \
                 $(BUILD)/obj/cmd/cuzk-bench/bench_gpu_prove.o $(BUILD)/obj/cmd/cuzk-bench/bench_gpu_circuit.o \
                 $(BUILD)/obj/cmd/cuzk-bench/bench_gpu_peak.o $(GPU_BENCH_CU:%.cu=$(BUILD)/obj/%.o)
# the knobs and diagnostics of the internal header src/gpu/gpu_tuning.h; the benchmark entry
# points (src/gpu/bench/gpu_bench.h) and the measured peaks are benchmark-only device code
# (src/gpu/bench/*.cu), outside the GPU library
$(BUILD)/obj/cmd/cuzk-bench/bench_gpu.o $(BUILD)/obj/cmd/cuzk-bench/bench_gpu_prove.o \
    $(BUILD)/obj/cmd/cuzk-bench/bench_gpu_peak.o: ALL_CFLAGS += -Isrc/gpu

$(BUILD)/obj/src/gpu/%.o: src/gpu/%.cu $(GPU_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@
$(GPU_LIB): $(GPU_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(GPU_TEST_BINS): $(BUILD)/tests/gpu/%: tests/gpu/%.c $(BUILD)/obj/tests/test_main.o $(GPU_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -Isrc/gpu -o $@ $< $(BUILD)/obj/tests/test_main.o $(GPU_LIB) $(CORE_LIB) \
	    $(CUDA_LIBS) -lm $(ALL_LDFLAGS)
# gpu-circuit generates its witnesses with libcuzk_fil.a (only its jansson-free members link)
$(GPU_BENCH): $(GPU_BENCH_OBJ) $(BUILD)/lib/libcuzk_fil.a $(GPU_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(GPU_BENCH_OBJ) $(BUILD)/lib/libcuzk_fil.a $(GPU_LIB) $(CORE_LIB) $(CUDA_LIBS) -lm

gpu: $(GPU_LIB) $(GPU_TEST_BINS) $(GPU_BENCH)
# Host-only check of the device field product (PTX carries emulated in C) against GMP: nvcc, no GPU.
$(BUILD)/tests/gpu/field_emu: tests/gpu/field_emu.cu $(GPU_DEPS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -Xcompiler -Wall -o $@ $< -lgmp
gpu-field-check: $(BUILD)/tests/gpu/field_emu
	$(BUILD)/tests/gpu/field_emu
test-gpu: gpu
	@tests/run_all.sh $(GPU_TEST_BINS)
# ===================================================================================== end GPU ====

# ================================================================================== filecoin ====
# libcuzk_fil.a: src/filecoin (registered proofs, graph, challenges, C1 JSON via its own
# reader json_read.c, gen-vanilla, PoRep witness and public inputs). Linked into cuzk-bench,
# cuzk-params and the tests/filecoin programs (which link jansson as the reader's test oracle);
# the core library never depends on it (nor on jansson). The
# programs' generic rule links $^ with the core library before this one, so the core library
# is named a second time (as build/lib/./…) after it.
FIL_LIB        := $(BUILD)/lib/libcuzk_fil.a
FIL_CORE_AGAIN := $(BUILD)/lib/./libcuzk_core.a
FIL_TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/filecoin/test_*.c))
all: $(FIL_LIB)
$(FIL_LIB): $(FIL_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(FIL_CORE_AGAIN): $(CORE_LIB) ;
$(PROGRAMS): $(FIL_LIB) $(FIL_CORE_AGAIN)
$(PROGRAMS): ALL_LDFLAGS += -Wl,--no-as-needed -ljansson
$(FIL_TEST_BINS): $(FIL_LIB)
$(FIL_TEST_BINS): TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
# the daemon's PoRep kind (src/engine/kind_porep.c) and its end-to-end test use this library too
ifeq ($(CUZK_CLIENT),1)
$(BUILD)/bin/cuzk-daemon: $(FIL_LIB) $(FIL_CORE_AGAIN)
$(BUILD)/tests/e2e/test_daemon: $(FIL_LIB)
$(BUILD)/tests/e2e/test_daemon: TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
$(BUILD)/tests/e2e/test_daemon_post: $(FIL_LIB)
$(BUILD)/tests/e2e/test_daemon_post: TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
$(BUILD)/tests/e2e/test_daemon_ni: $(FIL_LIB)
$(BUILD)/tests/e2e/test_daemon_ni: TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
$(BUILD)/tests/e2e/test_durable: $(FIL_LIB)
$(BUILD)/tests/e2e/test_durable: TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
# scripts/deadline-bench.sh as a CPU dry run at 2 KiB (tests/e2e/test_deadline_bench.c): the
# programs the script runs, the PoRep fixture's library, and where the script is
$(BUILD)/tests/e2e/test_deadline_bench: $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench $(BUILD)/bin/cuzk-params \
        $(FIL_LIB) scripts/deadline-bench.sh scripts/timeline-report.sh
$(BUILD)/tests/e2e/test_deadline_bench: ALL_CFLAGS += -DCUZK_CLIENT=1 -DCUZK_REPO_DIR=\"$(CURDIR)\"
$(BUILD)/tests/e2e/test_deadline_bench: TEST_LIBS += $(FIL_LIB) $(CORE_LIB) -ljansson
# the status page in headless Chromium (tests/e2e/test_page.c): the daemon, cuzk-bench, cuzk-params
$(BUILD)/tests/e2e/test_page: $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon \
        $(BUILD)/bin/cuzk-bench $(BUILD)/bin/cuzk-params
$(BUILD)/tests/e2e/test_page: $(GEN_DIR)/status_page.h
$(BUILD)/tests/e2e/test_page: ALL_CFLAGS += -I$(GEN_DIR)
$(BUILD)/tests/e2e/test_page: TEST_LIBS += $(BUILD)/obj/tests/e2e/daemon_harness.o -ljansson
# TLS, tokens and what the daemon refuses (issue 28 §2, §3); its PoRep case generates a C1
$(BUILD)/tests/e2e/test_security: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon $(BUILD)/bin/cuzk-bench $(FIL_LIB)
$(BUILD)/tests/e2e/test_security: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_security: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS) $(FIL_LIB) $(CORE_LIB) -ljansson
# request memory and the status listener under load (issue 49): the same client and libraries
$(BUILD)/tests/e2e/test_limits: $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o $(PROTO_OBJ) \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(BUILD)/bin/cuzk-daemon $(FIL_LIB)
$(BUILD)/tests/e2e/test_limits: ALL_CFLAGS += -I$(GEN_DIR) -Icmd/cuzk-bench -DCUZK_CLIENT=1
$(BUILD)/tests/e2e/test_limits: TEST_LIBS += $(BUILD)/obj/cmd/cuzk-bench/client_rpc.o \
        $(BUILD)/obj/tests/e2e/daemon_harness.o $(PROTO_OBJ) $(GRPC_LIBS) $(FIL_LIB) $(CORE_LIB) -ljansson
endif
# ============================================================================== end filecoin ====

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ====================================================================================== fuzz ====
# libFuzzer targets (fuzz/fuzz_*.c, docs/fuzzing.md): clang with fuzzer + ASan + UBSan, built
# into build-fuzz/ from the library sources (core, filecoin, the daemon's cfg.c and toml.c). scripts/test.sh
# (CI) builds them; running is by hand.   make fuzz   build build-fuzz/bin/fuzz_<name>
#                make fuzz-run        run each for FUZZ_SECONDS (default 30) from fuzz/corpus/<name>
FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c17 -D_GNU_SOURCE $(ARCH_FLAGS) $(WARN) -Iinclude -pthread -O1 -g \
                -DCUZK_BUILD_ID=\"$(GIT_ID)\" $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LIB_SRC := $(CORE_SRC) $(GPU_STUB) $(FIL_SRC) cmd/cuzk-daemon/cfg.c cmd/cuzk-daemon/toml.c
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB     := $(FUZZ_BUILD)/lib/libcuzk_fuzz.a
FUZZ_NAMES   := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/bin/fuzz_%)
.PHONY: fuzz fuzz-run
$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(FUZZ_BUILD)/bin/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -fsanitize=fuzzer-no-link,$(FUZZ_CFLAGS)) -Icmd/cuzk-daemon -fsanitize=fuzzer -o $@ $< \
	    $(FUZZ_LIB) -ljansson -lcrypto -lm
fuzz: $(FUZZ_BINS)
# Each target runs from a scratch copy of its seed corpus (new inputs land in
# build-fuzz/corpus/<name>, never in the committed fuzz/corpus); crashes go to build-fuzz/crash/.
# Every target runs even when an earlier one found something; the exit status then says so.
fuzz-run: fuzz
	@mkdir -p $(FUZZ_BUILD)/crash
	@failed=; for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	    dict=; [ -f fuzz/$$n.dict ] && dict=-dict=fuzz/$$n.dict; \
	    echo "== fuzz_$$n: $(FUZZ_SECONDS) s"; \
	    $(FUZZ_BUILD)/bin/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
	        -print_final_stats=1 $$dict -artifact_prefix=$(FUZZ_BUILD)/crash/$$n- \
	        $(FUZZ_BUILD)/corpus/$$n fuzz/corpus/$$n || failed="$$failed $$n"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz-run: findings in:$$failed (inputs in $(FUZZ_BUILD)/crash/)"; exit 1; fi
-include $(shell find $(FUZZ_BUILD)/obj -name '*.d' 2>/dev/null)
# ================================================================================== end fuzz ====

# =================================================================================== install ====
# make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc] [UNITDIR=...]: the programs
# (the CUDA daemon as cuzk-daemon when `make daemon-gpu` built it), the systemd unit with
# ExecStart at PREFIX, the commented default config (cuzk-daemon --print-default-config) at
# SYSCONFDIR/cuzk/cuzk.toml unless one is there, and the docs.
# make deb: a Debian package from the same files (scripts/mkdeb.sh; docs/daemon.md "Install").
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR    ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,/etc/systemd/system)
DOCDIR     ?= $(PREFIX)/share/doc/cuzk
INSTALL_DAEMON = $(if $(wildcard $(DAEMON_GPU)),$(DAEMON_GPU),$(BUILD)/bin/cuzk-daemon)
INSTALL_PARAMS = $(if $(wildcard $(PARAMS_GPU)),$(PARAMS_GPU),$(BUILD)/bin/cuzk-params)
INSTALL_DOCS  := README.md docs/guide.md docs/daemon.md docs/migrating.md deploy/grafana-cuzk.json
.PHONY: install deb
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/cuzk $(DESTDIR)$(DOCDIR)
	install -m 0755 $(INSTALL_DAEMON) $(DESTDIR)$(PREFIX)/bin/cuzk-daemon
	install -m 0755 $(INSTALL_PARAMS) $(DESTDIR)$(PREFIX)/bin/cuzk-params
	install -m 0755 $(BUILD)/bin/cuzk-bench $(DESTDIR)$(PREFIX)/bin/cuzk-bench
	sed -e 's|/usr/local/bin/|$(PREFIX)/bin/|' -e 's|/etc/cuzk/|$(SYSCONFDIR)/cuzk/|' \
	    -e 's|/usr/local/share/doc/cuzk/|$(DOCDIR)/|' deploy/cuzk-daemon.service > $(BUILD)/cuzk-daemon.service
	install -m 0644 $(BUILD)/cuzk-daemon.service $(DESTDIR)$(UNITDIR)/cuzk-daemon.service
	$(BUILD)/bin/cuzk-daemon --print-default-config > $(BUILD)/cuzk.toml
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/cuzk/cuzk.toml ]; then \
	    echo "install: keeping $(DESTDIR)$(SYSCONFDIR)/cuzk/cuzk.toml (the default is $(BUILD)/cuzk.toml)"; \
	else install -m 0644 $(BUILD)/cuzk.toml $(DESTDIR)$(SYSCONFDIR)/cuzk/cuzk.toml; fi
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
deb: all
	scripts/mkdeb.sh $(BUILD)
# =============================================================================== end install ====
