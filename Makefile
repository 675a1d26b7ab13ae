# SPDX-License-Identifier: MIT
# LineScope-BPF build. Every intermediate file goes to .output/; `make V=1` shows full commands.
# Each directory adds its own rules in <dir>/module.mk so that parts build and test independently.

OUTPUT := .output
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
CC ?= cc
PYTHON311 ?= /usr/bin/python3.11
VERSION := 0.1.0

ARCH := $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
ifneq ($(ARCH),x86)
$(error Architecture $(ARCH) is not supported yet; only x86_64 is)
endif
VMLINUX := vmlinux/$(ARCH)/vmlinux.h

# liblz4, libzstd and snappy (its C API) decode compressed Spark event logs
PKGS := libbpf libelf sqlite3 jansson zlib libxxhash libprotobuf-c libcurl libcrypto liblz4 libzstd \
	snappy
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl, libcrypto and snappy are opened where they are used (userspace/curl_dl.c, dl.c):
# linked, they cost every start 15 ms and 5 ms
PKG_LIBS := $(shell pkg-config --libs $(filter-out libcurl libcrypto snappy,$(PKGS)) 2>/dev/null)

# clang -target bpf misses the system include dirs (asm/types.h); scrape them as libbpf-bootstrap does
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

WARNINGS := -Wall -Wextra -Werror -Wmissing-field-initializers -Wno-unused-parameter
CFLAGS ?= -g -O2

# `make test SANITIZE=address,undefined`: every userspace binary and library built with the
# sanitizers, and the suites run with them (a report fails the run). The shared libraries loaded
# into profiled interpreters (python-usdt, the CUDA injection library) bring libasan with them;
# an interpreter that was not built with it is told not to insist on it coming first. A change
# of SANITIZE rebuilds everything (.output/.build-flags).
SANITIZE ?=
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
# in CC itself: every compile and every link, test tools and shared libraries included
override CC := $(CC) $(SAN_FLAGS)
export ASAN_OPTIONS ?= detect_leaks=0:verify_asan_link_order=0:abort_on_error=0:exitcode=86
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1:exitcode=87
endif
BUILD_FLAGS := $(CC) $(CFLAGS) SANITIZE=$(SANITIZE)
ifneq ($(BUILD_FLAGS),$(shell cat .output/.build-flags 2>/dev/null))
$(shell rm -rf linescope-bpf .output/userspace .output/report .output/gpu .output/python-usdt \
	.output/tests/unit .output/tests/bpf .output/tests/gpu .output/tests/report \
	.output/liblinescope.a .output/bench; mkdir -p .output; \
	echo '$(BUILD_FLAGS)' > .output/.build-flags)
endif
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -DLS_VERSION='"$(VERSION)"' \
	-I$(OUTPUT) -Ibpf -Iuserspace/lib -Iuserspace -Ireport -Igpu -Ipython-usdt $(PKG_CFLAGS)
LDLIBS := $(PKG_LIBS) -lpthread -lm

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s%s\n' "$(1)" "$(patsubst $(abspath $(OUTPUT))/%,%,$(2))" \
		"$(if $(3), $(3))";
	MAKEFLAGS += --no-print-directory
endif

APP := linescope-bpf

# Filled in by the module fragments below.
LIB_OBJS :=           # userspace objects linked into the tool and the unit tests
MAIN_OBJ := $(OUTPUT)/userspace/main.o
UNIT_TESTS :=         # .output/tests/unit/test_* binaries
TEST_TARGETS :=       # extra targets that `make test` runs after the unit tests
ALL_TARGETS :=        # extra artefacts built by `make`

.PHONY: all
all: $(APP) ls-all

include userspace/module.mk
include report/module.mk
include python-usdt/module.mk
include gpu/module.mk
include tests/module.mk
include tests/fuzz/module.mk
include bench/module.mk

.PHONY: ls-all bpf skel test test-unit test-bpf test-e2e check vmlinux install clean demo format
ls-all: $(ALL_TARGETS)

# All bpf/*.bpf.c link into one object and one skeleton; maps shared between files are __weak
# definitions in bpf/maps.bpf.h, merged by bpftool's static linker; the shared counters are
# defined once, in bpf/globals.bpf.c.
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_TMPS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.tmp.o,$(BPF_SRCS))
BPF_OBJ := $(OUTPUT)/bpf/linescope.bpf.o
SKELS := $(OUTPUT)/linescope.skel.h
bpf: $(BPF_OBJ)
skel: $(SKELS)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/userspace $(OUTPUT)/report $(OUTPUT)/tests/unit:
	$(call msg,MKDIR,$@)
	$(Q)mkdir -p $@

# BPF objects: clang -> bpftool gen object (static link, strips DWARF) -> skeleton
$(OUTPUT)/bpf/%.tmp.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 -Wall -Werror \
		-I$(dir $(VMLINUX)) -Ibpf -Ipython-usdt -Igpu $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(BPF_OBJ): $(BPF_TMPS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/linescope.skel.h: $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# userspace/lib/ (what the collector and the report share) lands in $(OUTPUT)/userspace/lib/
$(OUTPUT)/userspace/%.o: userspace/%.c $(wildcard userspace/*.h userspace/lib/*.h gpu/*.h) \
		bpf/linescope.h | $(OUTPUT)/userspace $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUTPUT)/report/%.o: report/%.c $(wildcard report/*.h userspace/*.h userspace/lib/*.h) \
		bpf/linescope.h | $(OUTPUT)/report
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# the skeleton embeds the BPF object and lays out its maps and programs: whatever includes it
# must rebuild when it changes (a stale layout reads the wrong fields)
$(patsubst userspace/%.c,$(OUTPUT)/userspace/%.o,$(shell grep -l 'linescope\.skel\.h' userspace/*.c)): $(SKELS)

$(OUTPUT)/liblinescope.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(APP): $(MAIN_OBJ) $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $^ $(LDLIBS) -o $@

# Unit tests: one cmocka binary per module, unprivileged.
# every header a test may include, down to the records' layout: a stale object reads new records
# with old sizes
$(OUTPUT)/tests/unit/%.o: tests/unit/%.c $(wildcard tests/unit/*.h userspace/*.h userspace/lib/*.h \
		report/*.h gpu/*.h) bpf/linescope.h | $(OUTPUT)/tests/unit $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(UNIT_CFLAGS_$*) -c $< -o $@

# the Spark codec's test checks what it decodes against each fixture's SHA-256
UNIT_LDFLAGS_spark_codec := $(shell pkg-config --libs libcrypto 2>/dev/null)
$(OUTPUT)/tests/unit/test_%: $(OUTPUT)/tests/unit/test_%.o $(OUTPUT)/liblinescope.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(filter %.o,$^) $(OUTPUT)/liblinescope.a $(LDLIBS) -lcmocka \
		$(UNIT_LDFLAGS_$*) -o $@

test-unit: $(APP) $(UNIT_TESTS)
	$(Q)tests/run-unit.sh $(UNIT_TESTS)

test: $(APP) ls-all
	$(Q)$(MAKE) test-unit
	$(Q)$(MAKE) test-bpf
	$(Q)$(MAKE) test-e2e
	$(Q)$(MAKE) $(TEST_TARGETS)
	@echo "all test suites passed"

check:
	$(Q)clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')
	$(Q)tests/lint/sizes.sh
	$(Q)$(MAKE) test

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^vmlinux/')

vmlinux:
	$(call msg,GEN,$(VMLINUX))
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)
	$(Q)sed -i "s/^- Source kernel: .*/- Source kernel: Linux $$(uname -r) (x86_64), \`\/sys\/kernel\/btf\/vmlinux\`/" vmlinux/README.md

PREFIX ?= /usr/local
install: $(APP) ls-all
	install -D -m 0755 $(APP) $(DESTDIR)$(PREFIX)/bin/$(APP)
	install -D -m 0755 $(OUTPUT)/gpu/liblinescope_cupti.so \
		$(DESTDIR)$(PREFIX)/lib/linescope-bpf/liblinescope_cupti.so

demo: $(APP) ls-all
	./$(APP) --profile examples/demo.lsprof -o examples/demo.html -- $(PYTHON311) examples/pipeline.py
	@echo "report: examples/demo.html"

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(APP)

.DELETE_ON_ERROR:
.SECONDARY:
