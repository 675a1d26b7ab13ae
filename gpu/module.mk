# SPDX-License-Identifier: MIT
# gpu/: the CUDA injection library liblinescope_cupti.so (CUPTI -> USDT), the GPU tests (tests/gpu,
# with the collector's join of GPU records, userspace/gpu_agg*.c) and the overhead benchmark
# (bench/gpu-overhead).
# Needs the CUDA 13 headers and libcupti.so.13 (CUDA_HOME, default /usr/local/cuda); no GPU.

CUDA_HOME ?= /usr/local/cuda
CUDA_INC := $(CUDA_HOME)/include
CUDA_LIB := $(CUDA_HOME)/lib64
GPU_OUT := $(OUTPUT)/gpu
GPU_TOUT := $(OUTPUT)/tests/gpu
GPU_LIB := $(GPU_OUT)/liblinescope_cupti.so
GPU_HDRS := $(wildcard gpu/*.h) bpf/linescope.h userspace/gpu_agg.h userspace/pyversions.h
# the collector's join, which the GPU tests drive
GPU_AGG_OBJ := $(OUTPUT)/userspace/gpu_agg.o $(OUTPUT)/userspace/gpu_agg_mem.o
# the generated probes.h first: python-usdt/ has a probes.h of its own
GPU_CFLAGS := -I$(GPU_OUT) $(ALL_CFLAGS) -I$(CUDA_INC)

# Everything here is for the injection library and its tests.
ALL_TARGETS += $(GPU_LIB)
TEST_TARGETS += test-gpu

GPU_PIC_SRCS := inject inject_records inject_buffers inject_api inject_launches pyloc activity \
	cupti_api kname nvml
# the sampler's CPython layouts (pure functions), for the launching thread's location
GPU_PIC_OBJS := $(patsubst %,$(GPU_OUT)/pic/%.o,$(GPU_PIC_SRCS)) $(GPU_OUT)/pic/pyversions.o \
	$(GPU_OUT)/pic/probes.o

$(GPU_OUT) $(GPU_OUT)/pic $(GPU_TOUT) $(GPU_TOUT)/fake $(OUTPUT)/bench:
	$(call msg,MKDIR,$@)
	$(Q)mkdir -p $@

$(GPU_OUT)/probes.h: gpu/probes.d | $(GPU_OUT)
	$(call msg,DTRACE,$@)
	$(Q)dtrace -h -s $< -o $@

$(GPU_OUT)/pic/probes.o: gpu/probes.d | $(GPU_OUT)/pic
	$(call msg,DTRACE,$@)
	$(Q)CFLAGS=-fPIC dtrace -G -s $< -o $@

$(GPU_OUT)/pic/%.o: gpu/%.c $(GPU_HDRS) $(GPU_OUT)/probes.h | $(GPU_OUT)/pic
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(GPU_OUT)/pic/pyversions.o: userspace/pyversions.c userspace/pyversions.h bpf/linescope.h | $(GPU_OUT)/pic
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(GPU_OUT)/%.o: gpu/%.c $(GPU_HDRS) | $(GPU_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -c $< -o $@

# Only InitializeInjection is exported; libcupti and NVML are loaded at run time (dlopen), and
# the library is never unloaded while CUPTI holds pointers to its callbacks (-z nodelete).
$(GPU_LIB): $(GPU_PIC_OBJS) gpu/inject.map
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -Wl,-soname,liblinescope_cupti.so -Wl,--version-script=gpu/inject.map \
		-Wl,-z,nodelete -Wl,-z,now $(GPU_PIC_OBJS) -ldl -lpthread -o $@

.PHONY: gpu test-gpu test-gpu-unit test-gpu-root bench-gpu-overhead gpu-check-bundle
gpu: $(GPU_LIB) $(GPU_TOUT)/gpu-capture $(GPU_TOUT)/fake_app

# ---- tests -------------------------------------------------------------------------------------
GPU_FAKE := $(GPU_TOUT)/fake/libcupti.so.13 $(GPU_TOUT)/fake/libnvidia-ml.so.1
GPU_UNIT := $(GPU_TOUT)/test_activity $(GPU_TOUT)/test_kname $(GPU_TOUT)/test_gpu_agg \
	$(GPU_TOUT)/test_nvml

$(GPU_TOUT)/fake/libcupti.so.13: tests/gpu/fake/fake_cupti.c tests/gpu/fake/fakecuda.h | $(GPU_TOUT)/fake
	$(call msg,LIB,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -Wno-missing-field-initializers -fPIC -fvisibility=hidden -shared \
		-Wl,-soname,libcupti.so.13 $< -ldl -lpthread -o $@

$(GPU_TOUT)/fake/libnvidia-ml.so.1: tests/gpu/fake/fake_nvml.c tests/gpu/fake/fakecuda.h | $(GPU_TOUT)/fake
	$(call msg,LIB,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libnvidia-ml.so.1 \
		$< -ldl -o $@

$(GPU_TOUT)/%.o: tests/gpu/%.c $(GPU_HDRS) $(wildcard tests/gpu/*.h tests/gpu/fake/*.h) | $(GPU_TOUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -I$(GPU_TOUT) -Itests/gpu -Itests/gpu/fake -c $< -o $@

# Parsing goes through the real libcupti.so.13 iterator, linked directly.
$(GPU_TOUT)/test_activity: $(GPU_TOUT)/test_activity.o $(GPU_OUT)/activity.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $^ -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -l:libcupti.so.13 -lcmocka -o $@

$(GPU_TOUT)/test_kname: $(GPU_TOUT)/test_kname.o $(GPU_OUT)/kname.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $^ -lcmocka -o $@

$(GPU_TOUT)/test_gpu_agg: $(GPU_TOUT)/test_gpu_agg.o $(GPU_AGG_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $^ -lcmocka -o $@

$(GPU_TOUT)/test_nvml: $(GPU_TOUT)/test_nvml.o $(GPU_OUT)/nvml.o | $(GPU_TOUT)/fake/libnvidia-ml.so.1
	$(call msg,LINK,$@)
	$(Q)$(CC) $^ -ldl -lcmocka -o $@

# The fake CUDA application, linked against the fake libcupti.so.13 (found through its RUNPATH).
$(GPU_TOUT)/fake_app: $(GPU_TOUT)/fake_app.o $(GPU_FAKE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(GPU_TOUT)/fake_app.o -L$(GPU_TOUT)/fake -Wl,-rpath,'$$ORIGIN/fake' \
		-l:libcupti.so.13 -lpthread -o $@

# BPF for the tests: bpf/gpu.bpf.c alone (its __weak maps stand in for the collector's), the
# shared counters (bpf/globals.bpf.c), the view key its records carry (bpf/view.bpf.c) and a fork
# tracker that adds children of targets to `procs`.
$(GPU_TOUT)/fork_track.tmp.o: tests/gpu/fork_track.bpf.c bpf/linescope.h bpf/maps.bpf.h $(VMLINUX) | $(GPU_TOUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 -Wall -Werror \
		-I$(dir $(VMLINUX)) -Ibpf -Igpu $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(GPU_TOUT)/gpu_test.bpf.o: $(OUTPUT)/bpf/gpu.tmp.o $(OUTPUT)/bpf/globals.tmp.o \
			   $(OUTPUT)/bpf/view.tmp.o $(GPU_TOUT)/fork_track.tmp.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(GPU_TOUT)/gpu_test.skel.h: $(GPU_TOUT)/gpu_test.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name gpu_test > $@

$(GPU_TOUT)/gpu_capture.o $(OUTPUT)/bench/gpu-overhead.o: $(GPU_TOUT)/gpu_test.skel.h

$(GPU_TOUT)/gpu-capture: $(GPU_TOUT)/gpu_capture.o $(GPU_AGG_OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $^ $(PKG_LIBS) -o $@

test-gpu-unit: $(GPU_UNIT) $(GPU_FAKE) $(GPU_LIB) $(GPU_TOUT)/fake_app
	$(Q)tests/run-unit.sh $(GPU_UNIT)
	$(Q)bash tests/gpu/inject_failures.sh

test-gpu-root: $(GPU_LIB) $(GPU_FAKE) $(GPU_TOUT)/fake_app $(GPU_TOUT)/gpu-capture
	$(Q)tests/run-root.sh gpu

test-gpu: test-gpu-unit test-gpu-root

# ---- benchmark ---------------------------------------------------------------------------------
$(OUTPUT)/bench/gpu-overhead.o: bench/gpu-overhead.c bench/gpu_overhead_py.h $(GPU_HDRS) tests/gpu/fake/fakecuda.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) -I$(GPU_TOUT) -Ibench -Itests/gpu/fake -c $< -o $@

# Debian's CPython 3.11, embedded for the Python loops (not the interpreter on PATH)
BENCH_PY_CONFIG := /usr/bin/python3.11-config

$(OUTPUT)/bench/gpu_overhead_py.o: bench/gpu_overhead_py.c bench/gpu_overhead_py.h tests/gpu/fake/fakecuda.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(GPU_CFLAGS) $(shell $(BENCH_PY_CONFIG) --includes) -Itests/gpu/fake -c $< -o $@

$(OUTPUT)/bench/gpu-overhead: $(OUTPUT)/bench/gpu-overhead.o $(OUTPUT)/bench/gpu_overhead_py.o \
			      $(GPU_AGG_OBJ) $(GPU_FAKE) $(GPU_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(OUTPUT)/bench/gpu-overhead.o $(OUTPUT)/bench/gpu_overhead_py.o $(GPU_AGG_OBJ) \
		-L$(GPU_TOUT)/fake -Wl,-rpath,'$$ORIGIN/../tests/gpu/fake' -l:libcupti.so.13 \
		$(PKG_LIBS) $(shell $(BENCH_PY_CONFIG) --embed --ldflags) -lpthread -o $@

bench-gpu-overhead: $(OUTPUT)/bench/gpu-overhead
	$(Q)$< --lib $(abspath $(GPU_LIB))

# ---- the GPU check (tests/gpu/h200-check.sh): everything it needs on a machine with a GPU -------
# Static gpu-capture (the GPU machine may lack libbpf or jansson), the CUDA workload for sm_90 with
# static cudart (only the driver is needed there), and a copy of libcupti.so.13.
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_CHECK := $(OUTPUT)/gpu-check

$(GPU_CHECK):
	$(call msg,MKDIR,$@)
	$(Q)mkdir -p $@

$(GPU_CHECK)/liblinescope_cupti.so: $(GPU_LIB) | $(GPU_CHECK)
	$(Q)cp $< $@

$(GPU_CHECK)/libcupti.so.13: $(CUDA_LIB)/libcupti.so.13 | $(GPU_CHECK)
	$(Q)cp -L $< $@

$(GPU_CHECK)/gpu-capture: $(GPU_TOUT)/gpu_capture.o $(GPU_AGG_OBJ) | $(GPU_CHECK)
	$(call msg,LINK,$@ (static))
	$(Q)$(CC) $^ -static -lbpf -lelf -lz -ljansson -o $@ 2>&1 | { grep -v 'statically linked applications' || true; }

$(GPU_CHECK)/cuda_workload: tests/gpu/h200/cuda_workload.cu | $(GPU_CHECK)
	$(call msg,NVCC,$@)
	$(Q)$(NVCC) -O2 -gencode arch=compute_90,code=[sm_90,compute_90] -cudart static \
		-Xcompiler -static-libstdc++,-static-libgcc $< -o $@ \
		-L$(CUDA_LIB)/stubs -lcuda -lpthread

gpu-check-bundle: $(GPU_CHECK)/liblinescope_cupti.so $(GPU_CHECK)/libcupti.so.13 \
		  $(GPU_CHECK)/gpu-capture $(GPU_CHECK)/cuda_workload
	@du -sh $(GPU_CHECK)
