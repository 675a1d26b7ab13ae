# SPDX-License-Identifier: MIT
# tests/fuzz/: libFuzzer targets (clang 14, libclang-rt-14-dev) built with ASan and UBSan, each
# over the real parser it names, from the seed corpus in tests/fuzz/corpus/<target>/.
#
#	make fuzz                  every target for FUZZ_SECONDS (default 60) each, one after another
#	make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS="profile elf"
#
# Crashes are written to .output/fuzz/crash/<target>/ and fail the run; add a fixed one to the
# corpus so that it is replayed from then on.
FUZZ_CC ?= clang-14
FUZZ_OUT := $(OUTPUT)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_ALL := linetable debug_offsets elf profile pytok pyindex activity trace gpu_records ipynb \
	ipyhistory jobenv spark_codec spark
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 $(FUZZ_SAN) -std=gnu11 -D_GNU_SOURCE -DLS_VERSION='"$(VERSION)"' \
	-I$(OUTPUT) -Ibpf -Iuserspace/lib -Iuserspace -Ireport -Igpu -I$(GPU_OUT) -I$(CUDA_INC) \
	$(PKG_CFLAGS)
# the library under test, instrumented: every userspace and report source, the GPU join and parser
FUZZ_LIB_SRCS := $(filter-out userspace/main.c,$(wildcard userspace/*.c)) \
	$(wildcard userspace/lib/*.c) $(wildcard report/*.c) \
	gpu/activity.c gpu/kname.c $(PPROF_PB).c
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_OUT)/obj/%.o,$(FUZZ_LIB_SRCS))
FUZZ_LIB := $(FUZZ_OUT)/libfuzzed.a
FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_ALL))

$(FUZZ_OUT)/obj/%.o: %.c $(wildcard userspace/*.h userspace/lib/*.h report/*.h gpu/*.h) | $(SKELS) $(GPU_OUT)/probes.h \
		$(PPROF_PB).h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS) $(OUTPUT)/report/assets.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(call msg,FUZZER,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) $(LDLIBS) -o $@

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(FUZZ_OUT)/seeds: tests/fuzz/seeds.c bpf/linescope.h gpu/gpu_records.h | $(FUZZ_OUT)/obj
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(CUDA_INC) $< -o $@
$(FUZZ_OUT)/obj:
	$(Q)mkdir -p $@

.PHONY: fuzz-seeds
fuzz-seeds: $(FUZZ_OUT)/seeds $(APP) ls-all
	$(Q)PYTHON3=$(PYTHON311) tests/fuzz/make-seeds.sh
