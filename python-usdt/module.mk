# SPDX-License-Identifier: MIT
# python-usdt/: rules for this directory (see the top-level Makefile for the variables it extends).
#
# The linescope_usdt extension is built once per interpreter in PYUSDT_PYTHONS (its headers and
# EXT_SUFFIX come from the interpreter itself) into .output/python-usdt/build/<tag>/. The site
# directory .output/python-usdt/site/ is what `linescope-bpf --trace` puts on PYTHONPATH:
# sitecustomize.py plus one build per EXT_SUFFIX (the first interpreter in the list with that
# suffix; builds for one CPython minor version are interchangeable). See python-usdt/README.md.
#
#	make pyusdt                      every build and the site directory
#	make pyusdt PYUSDT_PYTHONS=/x/bin/python3.14
#	make pyusdt PYUSDT_PYTHONS=/srv/sid:/usr/bin/python3.14
#	                                 ROOT:PYTHON: an interpreter that runs in the chroot ROOT
#	                                 (asked with chroot; its headers are read under ROOT)
#	make test-trace                  the exact-count tests (root)
#	make bench-trace                 bench/trace

PYUSDT_PYTHONS ?= $(wildcard /usr/bin/python3.11 /root/.pyenv/versions/3.11.7/bin/python3 \
	/root/.pyenv/versions/3.12.1/bin/python3 /root/.pyenv/versions/3.13.0/bin/python3)
PYUSDT_OUT := $(OUTPUT)/python-usdt
PYUSDT_SITE := $(PYUSDT_OUT)/site
PYUSDT_SRCS := $(wildcard python-usdt/*.c)
PYUSDT_DEPS := $(PYUSDT_SRCS) $(wildcard python-usdt/*.h) bpf/linescope.h python-usdt/module.mk
PYUSDT_CFLAGS := -g -O2 -fPIC -fvisibility=hidden -std=gnu11 -D_GNU_SOURCE \
	-Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	-Ibpf -Ipython-usdt

# An entry is PYTHON or ROOT:PYTHON; how to run it, and where its files are seen from here
pyusdt_root = $(if $(findstring :,$(1)),$(firstword $(subst :, ,$(1))))
pyusdt_run = $(if $(call pyusdt_root,$(1)),chroot $(call pyusdt_root,$(1)) )$(lastword $(subst :, ,$(1)))

# "<tag> <include dir> <EXT_SUFFIX>" of an interpreter; the tag names the build directory
pyusdt_info = $(shell $(call pyusdt_run,$(1)) -c 'import sys, sysconfig as s; \
	tag = "%s-%d.%d.%d" % ((sys.implementation.name,) + tuple(sys.version_info[:3])); \
	path = "".join(c if c.isalnum() or c in "._" else "_" for c in sys.executable.strip("/")); \
	print(tag + "_" + path, s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"))' 2>/dev/null)

PYUSDT_BUILDS :=
PYUSDT_SITE_SOS :=
PYUSDT_SUFFIXES :=

# $(1) interpreter $(2) tag $(3) include dir $(4) EXT_SUFFIX
define pyusdt_rules
$(PYUSDT_OUT)/build/$(2)/linescope_usdt$(4): $(PYUSDT_DEPS)
	$$(call msg,PYEXT,$$@,[$(1)])
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(PYUSDT_CFLAGS) -I$(3) -shared $$(PYUSDT_SRCS) -o $$@
PYUSDT_BUILDS += $(PYUSDT_OUT)/build/$(2)/linescope_usdt$(4)
ifeq ($(filter $(4),$(PYUSDT_SUFFIXES)),)
PYUSDT_SUFFIXES += $(4)
PYUSDT_SITE_SOS += $(PYUSDT_SITE)/linescope_usdt$(4)
$(PYUSDT_SITE)/linescope_usdt$(4): $(PYUSDT_OUT)/build/$(2)/linescope_usdt$(4)
	$$(Q)mkdir -p $$(@D)
	$$(Q)cp $$< $$@
endif
endef

# the arguments below are continued over lines, which leaves spaces in front of them
pyusdt_rules_s = $(call pyusdt_rules,$(strip $(1)),$(strip $(2)),$(strip $(3)),$(strip $(4)))
pyusdt_key = PYUSDT_INFO_$(subst :,_,$(1))
$(foreach py,$(PYUSDT_PYTHONS),$(eval $(call pyusdt_key,$(py)) := $(call pyusdt_info,$(py))))
$(foreach py,$(PYUSDT_PYTHONS),$(if $(word 3,$($(call pyusdt_key,$(py)))),\
	$(eval $(call pyusdt_rules_s,$(py),$(word 1,$($(call pyusdt_key,$(py)))),\
		$(call pyusdt_root,$(py))$(word 2,$($(call pyusdt_key,$(py)))),\
		$(word 3,$($(call pyusdt_key,$(py)))))),\
	$(warning python-usdt: skipping $(py): not a usable interpreter)))

$(PYUSDT_SITE)/sitecustomize.py: python-usdt/sitecustomize.py
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

.PHONY: pyusdt
pyusdt: $(PYUSDT_BUILDS) $(PYUSDT_SITE_SOS) $(PYUSDT_SITE)/sitecustomize.py
ALL_TARGETS += pyusdt

# ---- the test loader: bpf/pyusdt.bpf.c + a test fork tracker, its own object and skeleton ----

TRACE_TEST_OUT := $(OUTPUT)/tests/bpf
TRACE_LOADER := $(TRACE_TEST_OUT)/trace_loader
TRACE_BPF_TMPS := $(TRACE_TEST_OUT)/pyusdt.tmp.o $(TRACE_TEST_OUT)/trace_fork.tmp.o \
		  $(OUTPUT)/bpf/globals.tmp.o

$(TRACE_TEST_OUT):
	$(Q)mkdir -p $@

$(TRACE_TEST_OUT)/pyusdt.tmp.o: bpf/pyusdt.bpf.c $(wildcard bpf/*.h) $(VMLINUX) | $(TRACE_TEST_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 -Wall -Werror \
		-I$(dir $(VMLINUX)) -Ibpf $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(TRACE_TEST_OUT)/trace_fork.tmp.o: tests/bpf/trace_fork.bpf.c $(wildcard bpf/*.h) $(VMLINUX) | $(TRACE_TEST_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 -Wall -Werror \
		-I$(dir $(VMLINUX)) -Ibpf $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(TRACE_TEST_OUT)/trace_test.bpf.o: $(TRACE_BPF_TMPS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(TRACE_TEST_OUT)/trace_test.skel.h: $(TRACE_TEST_OUT)/trace_test.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name trace_test_bpf > $@

$(TRACE_LOADER): tests/bpf/trace_loader.c $(TRACE_TEST_OUT)/trace_test.skel.h bpf/linescope.h
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -I$(TRACE_TEST_OUT) -Ibpf $< \
		$(shell pkg-config --cflags --libs libbpf) -o $@

# PEP 768 remote loading: userspace/remote_exec.c, driven against a stand-in 3.14 runtime
TRACE_REMOTE := $(TRACE_TEST_OUT)/trace_remote
TRACE_FAKE_PY := $(TRACE_TEST_OUT)/fake_python_runtime

TRACE_REMOTE_SRC := userspace/remote_exec.c userspace/lib/procfs.c userspace/lib/credcache.c userspace/lib/asuser.c userspace/lib/log.c \
	userspace/lib/elffile.c
$(TRACE_REMOTE): tests/bpf/trace_remote.c $(TRACE_REMOTE_SRC) $(TRACE_REMOTE_SRC:.c=.h) | $(TRACE_TEST_OUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -std=gnu11 -D_GNU_SOURCE -Iuserspace/lib -Iuserspace \
		tests/bpf/trace_remote.c \
		$(TRACE_REMOTE_SRC) $(shell pkg-config --cflags --libs libbpf libelf) -lpthread -o $@

$(TRACE_FAKE_PY): tests/fixtures/trace/fake_python_runtime.c | $(TRACE_TEST_OUT)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(WARNINGS) -std=gnu11 -fPIE -pie $< -o $@

ALL_TARGETS += $(TRACE_LOADER) $(TRACE_REMOTE) $(TRACE_FAKE_PY)

.PHONY: test-trace bench-trace
test-trace: pyusdt $(TRACE_LOADER) $(TRACE_REMOTE) $(TRACE_FAKE_PY)
	$(Q)for t in tests/bpf/test_trace*.sh; do echo "== $$t"; bash $$t || exit 1; done; \
		echo "test-trace: passed"

bench-trace: pyusdt $(TRACE_LOADER)
	$(Q)bench/trace
